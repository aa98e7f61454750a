//! The daemon seen through [`Liveness`]: PTYs from the session registry, transports from the MCP
//! protocol sessions, delivery facts from each session's agent engine.
//!
//! Messaging consults this while holding its own lock, so every method here only takes leaf locks
//! (the registry map, one tracker, the MCP session map) and never calls back into messaging.

use std::sync::Arc;

use uuid::Uuid;

use crate::agent::AgentState;
use crate::limits::MCP_OWNER_ACTIVITY_GRACE;
use crate::messaging::{AgentKind, Lifecycle, Liveness, TerminalFacts, TerminalRef, TransportId};
use crate::session::Session;
use crate::state::App;

/// The agent type whose CLI takes `notifications/claude/channel` pushes.
const CLAUDE_CODE: &str = "claude";

pub(crate) struct View<'a>(pub &'a App);

impl View<'_> {
    /// The live (not exited) session whose `TUIC_SESSION` is `tuic_session`.
    pub(crate) fn session_of(&self, tuic_session: Uuid) -> Option<Arc<Session>> {
        let id = tuic_session.to_string();
        self.0.sessions.resolve_live(&id).ok().filter(|s| s.tuic_session == id)
    }
}

/// The engine's verdict in messaging's terms (`None`: not a managed agent yet).
pub(crate) fn lifecycle(state: Option<AgentState>) -> Lifecycle {
    match state {
        Some(AgentState::Idle) => Lifecycle::Idle,
        Some(AgentState::Completed) => Lifecycle::Completed,
        Some(AgentState::Working) => Lifecycle::Working,
        Some(AgentState::AwaitingInput) => Lifecycle::AwaitingInput,
        Some(AgentState::Starting) => Lifecycle::Starting,
        Some(AgentState::Unknown) | None => Lifecycle::Unknown,
    }
}

impl Liveness for View<'_> {
    fn live_pty(&self, tuic_session: Uuid) -> Option<TerminalRef> {
        self.session_of(tuic_session).map(|s| TerminalRef { session_id: s.id.clone(), alias: Some(s.alias.clone()) })
    }

    fn terminal_identity(&self, address: &str) -> Option<Uuid> {
        let session = self.0.sessions.resolve_live(address).ok()?;
        Uuid::parse_str(&session.tuic_session).ok()
    }

    fn transport_is_live(&self, transport: &TransportId) -> bool {
        self.0.mcp.protocol_sessions.is_live(&transport.0, MCP_OWNER_ACTIVITY_GRACE)
    }

    /// Only a PTY running a recognised agent is a managed terminal: a plain shell would run a
    /// typed message as a command, so its identity is treated like an external peer (inbox only).
    fn terminal_facts(&self, tuic_session: Uuid) -> Option<TerminalFacts> {
        let session = self.session_of(tuic_session)?;
        let (adapter, state, ready) = crate::agent_runtime::AgentLink::of(&session)?
            .with_tracker(|t| (t.adapter(), t.snapshot_state(), t.check_submit().is_ok()));
        let adapter = adapter?;
        let agent = if adapter.id == CLAUDE_CODE { AgentKind::ClaudeCode } else { AgentKind::Other };
        let channel_stream = !self.0.mcp.protocol_sessions.channel_streams(&session.tuic_session).is_empty();
        Some(TerminalFacts { agent, lifecycle: lifecycle(state), composer_empty: ready, channel_stream })
    }
}
