//! Peer messaging wired into the daemon: the IO-free [`crate::messaging`] core fed with real PTYs,
//! MCP transports and agent lifecycles; the MCP `agent` tool's messaging actions call it.
//!
//! # Wiring
//! - Identity: `initialize` with `x-tuic-session` binds the protocol session to that identity
//!   ([`bind`]); a later `tools/call` carrying the header re-binds a session that lost it (daemon
//!   restart, reaped). `agent action=register` renames, declares the orchestrator role, repairs.
//! - [`view::View`] is the [`crate::messaging::Liveness`] the core consults: live PTYs by
//!   `TUIC_SESSION`, transport liveness (a GET stream, or a request within the 6 s owner grace),
//!   and delivery facts from the session's agent engine.
//! - One driver task ([`driver::run`]) owns every PTY write messaging makes. It wakes on the
//!   core's delivery signal and on [`crate::agent_runtime::LifecycleEdge`]s (agent state / readiness
//!   changes, session exits, sent by the engine under its tracker lock, so in order), and:
//!   pushes payloads to a working Claude Code turn as `notifications/claude/channel`, or queues
//!   them in the recipient's [`InjectionQueue`] and types at most one per idle transition
//!   (through `session action=submit`'s framed write, which re-checks readiness under the writer
//!   lock); types orchestrator wake notices and settles them; posts child lifecycle mail.
//! - Transports end by DELETE or the 1 h reaper ([`transport_ended`]); an identity that still
//!   owns a live PTY or parents a live session survives, as the seed requires.
//!
//! Lock order: messaging's lock, then leaf locks (registry, tracker, MCP sessions); the
//! `terminals` map here is never held while calling messaging.

mod driver;
pub(crate) mod view;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::json;
use uuid::Uuid;

use crate::lock::Recover;
use crate::messaging::injection::InjectionQueue;
use crate::messaging::{Attach, Messaging, SystemClock, TransportId};
use crate::state::App;
use view::View;

/// `/events` kinds (tuic-wire 2.5).
pub(crate) const PEER_REGISTERED: &str = "peer-registered";
pub(crate) const PEER_UNREGISTERED: &str = "peer-unregistered";

/// Messaging state, one field of [`crate::state::Shared`].
pub(crate) struct Peers {
    pub messaging: Messaging,
    terminals: Mutex<HashMap<Uuid, Terminal>>,
    /// Asks the driver to look at one terminal again (installed by [`start`]).
    recheck: std::sync::OnceLock<tokio::sync::mpsc::UnboundedSender<Uuid>>,
}

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peers").finish_non_exhaustive()
    }
}

impl Default for Peers {
    fn default() -> Self {
        Self {
            messaging: Messaging::new(Arc::new(SystemClock)),
            terminals: Mutex::default(),
            recheck: std::sync::OnceLock::new(),
        }
    }
}

/// What the driver remembers about one managed terminal.
#[derive(Debug)]
struct Terminal {
    queue: InjectionQueue,
    /// The agent worked since its last idle/completed edge (a busy-to-idle edge is pending).
    worked: bool,
    /// A write (payload or notice) is in flight; one at a time per terminal.
    writing: bool,
}

impl Default for Terminal {
    fn default() -> Self {
        Self { queue: InjectionQueue::new(), worked: false, writing: false }
    }
}

impl Peers {
    fn terminals(&self) -> MutexGuard<'_, HashMap<Uuid, Terminal>> {
        self.terminals.locked()
    }

    /// Entries waiting in a terminal's injection FIFO (peer messages and user commands).
    pub(crate) fn queued(&self, tuic_session: Uuid) -> usize {
        self.terminals().get(&tuic_session).map_or(0, |t| t.queue.len())
    }

    /// Compose: queues a user command for the terminal, behind every entry accepted before it;
    /// it is typed like a peer message, one per idle transition. Returns the commands queued.
    pub(crate) fn compose(&self, tuic_session: Uuid, command: String) -> usize {
        let queued = {
            let mut terminals = self.terminals();
            let queue = &mut terminals.entry(tuic_session).or_default().queue;
            queue.push_command(command);
            queue.command_count()
        };
        self.nudge(tuic_session);
        queued
    }

    /// Compose: the user commands waiting (peer messages are not counted).
    pub(crate) fn composed(&self, tuic_session: Uuid) -> usize {
        self.terminals().get(&tuic_session).map_or(0, |t| t.queue.command_count())
    }

    /// Compose: drops the user commands only; queued peer messages keep their order.
    pub(crate) fn clear_composed(&self, tuic_session: Uuid) -> usize {
        let mut terminals = self.terminals();
        let Some(terminal) = terminals.get_mut(&tuic_session) else { return 0 };
        let cleared = terminal.queue.command_count();
        terminal.queue.clear_commands();
        cleared
    }

    fn nudge(&self, tuic_session: Uuid) {
        if let Some(recheck) = self.recheck.get() {
            let _ = recheck.send(tuic_session);
        }
    }
}

/// Starts the driver: installs the lifecycle-edge sink of the agent layer (sessions created from
/// now on report their edges) and spawns the one task that delivers.
pub(crate) fn start(app: &App) {
    let (sink, edges) = tokio::sync::mpsc::unbounded_channel();
    let _ = app.agents.edges.set(sink);
    let (recheck, rechecks) = tokio::sync::mpsc::unbounded_channel();
    let _ = app.peers.recheck.set(recheck.clone());
    tokio::spawn(driver::run(app.clone(), edges, recheck, rechecks));
}

/// Step 0: binds protocol session `transport` to the `x-tuic-session` identity. A refusal (the
/// session is bound to a terminal-backed identity elsewhere) is logged, never fatal to the call.
pub(crate) fn bind(app: &App, transport: &str, tuic_session: &str) {
    let Ok(id) = Uuid::parse_str(tuic_session) else { return };
    let view = View(app);
    match app.peers.messaging.bind_transport(&TransportId::new(transport), id, &view) {
        Ok(outcome) => {
            identity_bound(app, transport, &outcome);
            tracing::info!(
                source = "agent_identity", session = %transport, tuic_session = %id,
                attach = ?outcome.attach, "bound MCP session to its terminal identity"
            );
            // A refresh or a sibling joining is not a new peer.
            if matches!(outcome.attach, Attach::Bound | Attach::Reclaimed) {
                app.events.publish(PEER_REGISTERED, &json!({"tuic_session": id, "name": outcome.name}));
            }
        }
        Err(e) => {
            tracing::warn!(source = "agent_identity", session = %transport, error = %e, "x-tuic-session not bound")
        }
    }
}

/// Protocol session `transport` is now bound to `outcome`'s identity (at initialize, re-bind or
/// register): the MCP session records it, and the caller's task handles follow it: the ones it
/// spawned before it had an identity (stamped with its protocol session) and the ones of an
/// identity it superseded (a repair or `replaces`).
pub(crate) fn identity_bound(app: &App, transport: &str, outcome: &crate::messaging::RegisterOutcome) {
    let identity = outcome.tuic_session.to_string();
    app.mcp.protocol_sessions.set_identity(transport, &identity);
    app.agents.tasks.owner_moved(transport, &identity);
    if let Some(old) = outcome.superseded_identity {
        app.agents.tasks.owner_moved(&old.to_string(), &identity);
    }
}

/// Re-binds on a later request when the session lost its identity (cheap when it has one).
pub(crate) fn refresh(app: &App, transport: &str, tuic_session: &str) {
    if app.peers.messaging.identity_of(&TransportId::new(transport)).is_none() {
        bind(app, transport, tuic_session);
    }
}

/// A protocol session ended (DELETE or the reaper): its routes go, and an identity left without
/// one is evicted unless it is still addressable.
pub(crate) fn transport_ended(app: &App, transport: &str) {
    let outcome = app.peers.messaging.reap_transport(&TransportId::new(transport), &View(app));
    unregistered(app, &outcome.evicted);
}

/// After a reaper pass: evicts unrouted identities that stopped being addressable.
pub(crate) fn sweep(app: &App) {
    let outcome = app.peers.messaging.sweep_unrouted(&View(app));
    unregistered(app, &outcome.evicted);
}

fn unregistered(app: &App, evicted: &[Uuid]) {
    for id in evicted {
        app.peers.terminals().remove(id);
        app.events.publish(PEER_UNREGISTERED, &json!({"tuic_session": id}));
    }
}
