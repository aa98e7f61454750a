//! What a person supervising the agents reads (`GET /peers`, `GET /peers/:id/inbox`): every
//! identity with its routes and unread count, and the mail waiting for one of them. Read-only by
//! design: an agent's mail is the agent's, so nothing here moves a read cursor, reports or resets
//! an eviction count, or takes a delivery.

use uuid::Uuid;

use super::handle::Messaging;
use super::liveness::Liveness;
use super::types::{AgentMessage, TransportId};

/// One identity as a supervisor sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PeerOverview {
    pub tuic_session: Uuid,
    pub name: String,
    pub project: Option<String>,
    pub orchestrator: bool,
    /// Unix milliseconds of the identity's first registration.
    pub registered_at_ms: u64,
    /// The live terminal the identity runs in, when it has one.
    pub session_id: Option<String>,
    pub alias: Option<String>,
    /// The delivery owner first, then the siblings: the MCP protocol sessions routing to it.
    pub transports: Vec<TransportId>,
    /// Messages not yet observed by an inbox read or a wait.
    pub unread: usize,
}

/// The unread mail of one identity, newest last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WaitingMail {
    pub peer: PeerOverview,
    /// The newest `limit` unread messages, oldest of them first.
    pub messages: Vec<AgentMessage>,
}

impl Messaging {
    /// Every identity, oldest registration first.
    pub(crate) fn supervise_peers(&self, live: &dyn Liveness) -> Vec<PeerOverview> {
        let st = self.lock();
        let mut peers: Vec<PeerOverview> = st.identities.iter().map(|i| st.overview(i.tuic_session, live)).collect();
        peers.sort_by_key(|p| (p.registered_at_ms, p.tuic_session));
        peers
    }

    /// The unread mail of the identity `address` names (its tuic_session, or the PTY id or alias of
    /// the terminal it runs in): at most `limit` messages, the newest ones. `None` when no
    /// registered identity answers to `address`.
    pub(crate) fn waiting_mail(&self, address: &str, limit: usize, live: &dyn Liveness) -> Option<WaitingMail> {
        let st = self.lock();
        let id = st.resolve(address, live)?;
        let unread = st.mailboxes.get(&id).map(|m| m.unread_through(u64::MAX)).unwrap_or_default();
        let messages = unread[unread.len().saturating_sub(limit)..].to_vec();
        Some(WaitingMail { peer: st.overview(id, live), messages })
    }
}

impl super::handle::State {
    fn overview(&self, id: Uuid, live: &dyn Liveness) -> PeerOverview {
        let identity = self.identities.get(id).expect("listed identities exist");
        let terminal = live.live_pty(id);
        PeerOverview {
            tuic_session: id,
            name: identity.name.clone(),
            project: identity.project.clone(),
            orchestrator: identity.orchestrator,
            registered_at_ms: identity.registered_at_ms,
            alias: terminal.as_ref().and_then(|t| t.alias.clone()),
            session_id: terminal.map(|t| t.session_id),
            transports: identity.owner.iter().chain(&identity.siblings).cloned().collect(),
            unread: self.mailboxes.get(&id).map_or(0, super::mailbox::Mailbox::unread_count),
        }
    }
}
