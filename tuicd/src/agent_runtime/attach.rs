//! How the agent engine attaches to a session from outside the session core: the factory the
//! composition root installs on the registry, the session hooks an [`AgentLink`] answers, and the
//! way back from a `Session` to its link.

use std::sync::{Arc, OnceLock};

use super::{AgentLink, EdgeKind, EdgeSink, adapter_for};
use crate::agent::{AgentStatus, Screen};
use crate::events::EventBus;
use crate::lock::Recover;
use crate::plugins::OutputWatchers;
use crate::session::{AttachContext, AttachFactory, Attachment, Session};

/// Builds each session's [`AgentLink`], with its tap on the plugins' output watchers. `edges` is
/// read at each creation: sessions created once a sink is installed report their edges on it.
pub(crate) fn attach_factory(
    events: Arc<EventBus>,
    edges: Arc<OnceLock<EdgeSink>>,
    watchers: Arc<OutputWatchers>,
) -> AttachFactory {
    Arc::new(move |ctx: AttachContext<'_>| {
        let adapter = adapter_for(ctx.agent_type, ctx.program);
        let tap = watchers.tap(ctx.session_id);
        Arc::new(
            AgentLink::new(
                (ctx.session_id, ctx.tuic_session),
                adapter,
                ctx.child,
                ctx.pty,
                events.clone(),
                edges.get().cloned(),
                ctx.announcer,
            )
            .with_tap(tap),
        ) as Arc<dyn Attachment>
    })
}

impl AgentLink {
    /// The link attached to `session` (every session the daemon creates has one).
    pub(crate) fn of(session: &Session) -> Option<&AgentLink> {
        session.attachment()
    }
}

impl Attachment for AgentLink {
    fn on_output(&self, bytes: &[u8], cursor: u64, screen: &Screen<'_>) {
        AgentLink::on_output(self, bytes, cursor, screen);
        if let Some(tap) = &self.tap {
            tap.offer(bytes);
        }
    }

    fn on_input(&self, bytes: &[u8]) {
        AgentLink::on_input(self, bytes);
    }

    /// Publishes nothing more (the session's end is the last event it sends) and lets go of the
    /// PTY.
    fn on_end(&self) {
        self.tracker().on_exit(None, std::time::Instant::now());
        *self.inner.ended.locked() = true;
        self.inner.pty.locked().take();
    }

    fn on_retired(&self, exit_code: Option<i32>) {
        self.tracker().on_exit(exit_code, std::time::Instant::now());
        self.send_edge(EdgeKind::Exited { exit_code });
    }

    fn status(&self) -> AgentStatus {
        AgentLink::status(self)
    }
}
