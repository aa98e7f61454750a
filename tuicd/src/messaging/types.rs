//! The values messaging hands across its API: ids, messages, requests, outcomes and errors.

use serde::Serialize;
use uuid::Uuid;

use super::delivery::DeliveryPath;
use crate::limits::PEER_NAME_MAX_CHARS;

/// One MCP protocol session (`mcp-session-id`): a transport that can reach an identity.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct TransportId(pub String);

impl TransportId {
    pub(crate) fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }
}

/// Prefix of every server-authored lifecycle message id (`tuic-auto-<uuid>`).
pub(super) const LIFECYCLE_ID_PREFIX: &str = "tuic-auto-";
/// `from_name` of server-authored lifecycle mail.
pub(super) const LIFECYCLE_FROM_NAME: &str = "tuic";

/// A message as stored in an inbox and returned by `inbox` / `wait` (wire names kept).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct AgentMessage {
    pub id: String,
    pub from_tuic_session: Uuid,
    pub from_name: String,
    pub content: String,
    /// Per-recipient logical unix-millisecond cursor: strictly increasing within one inbox, so
    /// equal-millisecond bursts still order and page exactly.
    pub timestamp: u64,
}

impl AgentMessage {
    /// Server-authored lifecycle mail: protected from eviction and summarisable for orchestrators.
    pub(crate) fn is_lifecycle(&self) -> bool {
        self.id.starts_with(LIFECYCLE_ID_PREFIX)
    }
}

/// `agent action=register` parameters. `None` preserves the current value.
#[derive(Clone, Debug, Default)]
pub(crate) struct RegisterRequest {
    pub tuic_session: Option<Uuid>,
    pub name: Option<String>,
    pub project: Option<String>,
    pub orchestrator: Option<bool>,
    pub replaces: Option<Uuid>,
}

/// How a register answers; optional fields are omitted on the wire when absent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct RegisterOutcome {
    pub tuic_session: Uuid,
    pub name: String,
    pub identity_generated: bool,
    pub terminal: bool,
    pub orchestrator: bool,
    pub mail_wake: MailWake,
    pub linked_children: usize,
    /// How the transport was attached; for the wiring's tracing, not a wire field.
    #[serde(skip)]
    pub attach: Attach,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_identity: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mail_migrated: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mail_stranded: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity_warning: Option<String>,
}

/// What binding a transport to an identity did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Attach {
    /// The identity had no owner; this transport owns it now.
    Bound,
    /// This transport already owned or had joined it.
    Refreshed,
    /// A live owner holds it; this transport joined as a sibling and is routable too.
    Joined,
    /// The owner was stale; this transport took ownership.
    Reclaimed,
}

/// Whether the server itself can start a turn for this identity when mail arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MailWake {
    /// Derived from a live managed PTY and its canonical lifecycle, never claimed by the caller.
    ManagedPtyLifecycle,
    /// External or headerless: mailbox only, use `agent action=wait` / `inbox`.
    None,
}

/// One `list_peers` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct PeerEntry {
    pub tuic_session: Uuid,
    pub name: String,
    pub orchestrator: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// What `send` reports to the sender.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct SendOutcome {
    pub message_id: String,
    /// For the wiring (recipient_state lookup, tracing); not a wire field.
    #[serde(skip)]
    pub recipient: Uuid,
    pub delivered: bool,
    pub delivery_path: DeliveryPath,
    pub recipient_has_terminal: bool,
    /// The message's cursor in the recipient's inbox; not a wire field.
    #[serde(skip)]
    pub timestamp: u64,
}

/// `inbox` parameters.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InboxQuery {
    /// `None` resumes from the stored read cursor; `Some(0)` replays everything.
    pub since: Option<u64>,
    pub limit: Option<usize>,
}

/// `inbox` answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct InboxPage {
    pub messages: Vec<AgentMessage>,
    pub next_since: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missed_count: Option<u64>,
}

/// `wait` answer: `{met, timed_out, new_messages, messages, next_since}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct WaitOutcome {
    pub met: bool,
    pub timed_out: bool,
    pub new_messages: usize,
    pub messages: Vec<AgentMessage>,
    pub next_since: u64,
}

/// Refuses a peer name that is blank, longer than [`PEER_NAME_MAX_CHARS`], or holds a control
/// character: other agents read names in their instructions, where a line break would let one
/// agent write lines of its own into another's.
pub(crate) fn check_peer_name(name: &str) -> Result<(), MessagingError> {
    if name.trim().is_empty() {
        return Err(MessagingError::EmptyName);
    }
    if name.chars().any(char::is_control) {
        return Err(MessagingError::NameHasControl);
    }
    let chars = name.chars().count();
    if chars > PEER_NAME_MAX_CHARS {
        return Err(MessagingError::NameTooLong { chars, limit: PEER_NAME_MAX_CHARS });
    }
    Ok(())
}

/// Tool errors; each is one sentence naming what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MessagingError {
    #[error("message is {size} bytes; the limit is {limit} bytes")]
    MessageTooLarge { size: usize, limit: usize },
    #[error("message must not be empty")]
    EmptyMessage,
    #[error("name must not be empty")]
    EmptyName,
    #[error("name is {chars} characters; the limit is {limit}")]
    NameTooLong { chars: usize, limit: usize },
    #[error(
        "name must not contain control characters such as line breaks (other agents read it in their instructions)"
    )]
    NameHasControl,
    #[error("Recipient '{0}' is not registered")]
    UnknownRecipient(String),
    #[error("this MCP session has no peer identity; initialize with x-tuic-session or call agent action=register")]
    NotRegistered,
    #[error(
        "this MCP session is bound to terminal-backed identity {bound}; register with tuic_session={bound}, not {requested}"
    )]
    WouldLeaveTerminal { bound: Uuid, requested: Uuid },
    #[error("this MCP session is already bound to a different peer identity ({bound})")]
    AlreadyBound { bound: Uuid },
    #[error("identity {0} is owned by another live MCP session; only a transport already joined to it may register it")]
    OwnedByLiveSession(Uuid),
}
