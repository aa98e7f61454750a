//! `GET /peers` and `GET /peers/:id/inbox`: the messaging peers and their waiting mail, as a
//! person supervising the agents reads them. Times are Unix milliseconds.

use serde::{Deserialize, Serialize};

/// `GET /peers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerList {
    /// Oldest registration first.
    pub peers: Vec<PeerInfo>,
}

/// One registered peer identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerInfo {
    /// The identity other agents send to (`agent action=send to=`).
    pub tuic_session: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    pub orchestrator: bool,
    /// The agent running in the peer's terminal, as the agent engine detected it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// That agent's state (`working`, `idle`, `awaiting_input`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_state: Option<String>,
    /// The live PTY session the peer runs in, and its alias; omitted for a peer with no terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// The MCP client (`clientInfo.name`) of the connection that owns the identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    pub registered_at_ms: u64,
    /// The last MCP request of any of its connections (now, while one holds a stream); omitted
    /// when no connection is left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen_ms: Option<u64>,
    /// One of its connections holds a stream or made a request within the owner grace (6 s).
    pub connected: bool,
    /// Messages waiting: not yet read by the agent (`agent action=inbox` or `wait`).
    pub inbox_count: usize,
}

/// `GET /peers/:id/inbox`: the messages waiting for one peer. Reading it marks nothing read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerInbox {
    pub peer: PeerInfo,
    /// The newest `limit` waiting messages, newest last.
    pub messages: Vec<PeerMessage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerMessage {
    pub id: String,
    pub from_tuic_session: String,
    pub from_name: String,
    pub content: String,
    /// The recipient's inbox cursor: Unix milliseconds, strictly increasing within one inbox.
    pub timestamp: u64,
}
