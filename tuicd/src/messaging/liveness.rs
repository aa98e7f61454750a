//! What messaging needs to know about the rest of the daemon, as plain inputs.
//!
//! Messaging never calls the session registry, the MCP layer or the agent-state engine; the wiring
//! passes a [`Liveness`] view in. It is consulted while the messaging lock is held, so an
//! implementation must only read leaf state (its own short locks) and never call back into messaging.

use uuid::Uuid;

use super::types::TransportId;

/// The live terminal an identity runs in: the two extra address forms `send` accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TerminalRef {
    pub session_id: String,
    pub alias: Option<String>,
}

/// Which agent runs in a managed PTY, as far as delivery cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AgentKind {
    ClaudeCode,
    Other,
}

/// The canonical lifecycle of a managed agent (the agents engine's verdict).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    Idle,
    Completed,
    Working,
    AwaitingInput,
    Starting,
    Unknown,
}

impl Lifecycle {
    /// Only canonical idle or completed may receive a typed turn or a wake notice.
    pub(crate) fn is_ready(self) -> bool {
        matches!(self, Lifecycle::Idle | Lifecycle::Completed)
    }
}

/// Facts about a recipient's managed PTY at the moment of delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TerminalFacts {
    pub agent: AgentKind,
    pub lifecycle: Lifecycle,
    /// Nothing typed in the composer and no confident question or approval open.
    pub composer_empty: bool,
    /// The recipient's bridge holds a live GET /mcp stream and was launched with channels enabled.
    pub channel_stream: bool,
}

/// The daemon's view of PTYs and transports.
pub(crate) trait Liveness {
    /// The live PTY whose `TUIC_SESSION` is `tuic_session`, if any.
    fn live_pty(&self, tuic_session: Uuid) -> Option<TerminalRef>;
    /// Resolves a PTY id or alias to the `TUIC_SESSION` of that live terminal.
    fn terminal_identity(&self, address: &str) -> Option<Uuid>;
    /// A transport is live when it holds an SSE stream or was active within the owner grace.
    fn transport_is_live(&self, transport: &TransportId) -> bool;
    /// Delivery facts for a managed PTY; `None` for external peers.
    fn terminal_facts(&self, tuic_session: Uuid) -> Option<TerminalFacts>;
}
