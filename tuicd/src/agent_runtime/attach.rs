//! How the agent engine attaches to a session from outside the session core: the factory the
//! composition root installs on the registry, the session hooks an [`AgentLink`] answers, and the
//! way back from a `Session` to its link.

use std::sync::{Arc, OnceLock};

use super::{AgentLink, EdgeKind, EdgeSink, adapter_for};
use crate::agent::{AgentStatus, Screen};
use crate::events::EventBus;
use crate::session::{AttachContext, AttachFactory, Attachment, Session};

/// Builds each session's [`AgentLink`]. `edges` is read at each creation: sessions created once a
/// sink is installed report their edges on it.
pub fn attach_factory(events: Arc<EventBus>, edges: Arc<OnceLock<EdgeSink>>) -> AttachFactory {
    Arc::new(move |ctx: AttachContext<'_>| {
        let adapter = adapter_for(ctx.agent_type, ctx.program);
        Arc::new(AgentLink::new(
            (ctx.session_id, ctx.tuic_session),
            adapter,
            ctx.child,
            ctx.pty,
            events.clone(),
            edges.get().cloned(),
            ctx.announcer,
        )) as Arc<dyn Attachment>
    })
}

impl AgentLink {
    /// The link attached to `session` (every session the daemon creates has one).
    pub fn of(session: &Session) -> Option<&AgentLink> {
        session.attachment()
    }
}

impl Attachment for AgentLink {
    fn on_output(&self, bytes: &[u8], cursor: u64, screen: &Screen<'_>) {
        AgentLink::on_output(self, bytes, cursor, screen);
    }

    fn on_input(&self, bytes: &[u8]) {
        AgentLink::on_input(self, bytes);
    }

    /// Publishes nothing more (the session's end is the last event it sends) and lets go of the
    /// PTY.
    fn on_end(&self) {
        *self.inner.ended.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.inner.pty.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    fn on_retired(&self, exit_code: Option<i32>) {
        self.send_edge(EdgeKind::Exited { exit_code });
    }

    fn status(&self) -> AgentStatus {
        AgentLink::status(self)
    }
}
