//! `GET /peers` and `GET /peers/:id/inbox`: the messaging peers as a person supervising the agents
//! sees them. Read-only: the inbox route shows the mail waiting for a peer without marking it read
//! (an agent's mail is the agent's). Readable by any caller the listener let in, like `/sessions`;
//! the MCP messaging actions of remote agents stay loopback-only in the tool layer.

use std::time::Duration;

use proto::peers::{PeerInbox, PeerInfo, PeerList, PeerMessage};
use serde::Deserialize;

use crate::http::body::{ok_json, query};
use crate::http::{ApiError, ApiResult, Request};
use crate::limits::{INBOX_CAPACITY, INBOX_DEFAULT_LIMIT, MCP_OWNER_ACTIVITY_GRACE};
use crate::messaging::supervise::PeerOverview;
use crate::messaging_runtime::view::View;
use crate::state::App;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InboxParams {
    limit: Option<usize>,
}

pub(crate) async fn list(app: &App) -> ApiResult {
    let peers = app.peers.messaging.supervise_peers(&View(app));
    ok_json(&PeerList { peers: peers.iter().map(|p| info(app, p)).collect() })
}

pub(crate) async fn inbox(app: &App, id: &str, req: Request) -> ApiResult {
    let params: InboxParams = query(&req)?;
    let limit = params.limit.unwrap_or(INBOX_DEFAULT_LIMIT);
    if !(1..=INBOX_CAPACITY).contains(&limit) {
        return Err(ApiError::InvalidField(format!(
            "query string: limit: {limit} is out of range; expected 1 to {INBOX_CAPACITY} (an inbox holds at most {INBOX_CAPACITY} messages)"
        )));
    }
    let Some(mail) = app.peers.messaging.waiting_mail(id, limit, &View(app)) else {
        return Err(ApiError::NotFound(format!(
            "no peer {id:?}: not a registered tuic_session, nor the PTY id or alias of a peer's terminal"
        )));
    };
    let messages = mail
        .messages
        .into_iter()
        .map(|m| PeerMessage {
            id: m.id,
            from_tuic_session: m.from_tuic_session.to_string(),
            from_name: m.from_name,
            content: m.content,
            timestamp: m.timestamp,
        })
        .collect();
    ok_json(&PeerInbox { peer: info(app, &mail.peer), messages })
}

/// The overview messaging keeps, completed with the terminal's agent and the connections' times.
fn info(app: &App, peer: &PeerOverview) -> PeerInfo {
    let session = peer.session_id.as_deref().and_then(|id| app.sessions.resolve_live(id).ok()).map(|s| s.info());
    let state =
        |key: &str| session.as_ref().and_then(|s| s.state.as_ref()).and_then(|st| st[key].as_str()).map(str::to_owned);
    let agent_type = session.as_ref().and_then(|s| s.agent_type.clone()).or_else(|| state("agent_type"));
    let sessions = &app.mcp.protocol_sessions;
    let idle: Option<Duration> = peer.transports.iter().filter_map(|t| sessions.idle_for(&t.0)).min();
    let now_ms = crate::agent_runtime::journal::now_ms();
    PeerInfo {
        tuic_session: peer.tuic_session.to_string(),
        name: peer.name.clone(),
        project: peer.project.clone(),
        orchestrator: peer.orchestrator,
        agent_type,
        agent_state: state("agent_state"),
        session_id: peer.session_id.clone(),
        alias: peer.alias.clone(),
        client: peer.transports.first().and_then(|t| sessions.client_name(&t.0)),
        registered_at_ms: peer.registered_at_ms,
        last_seen_ms: idle.map(|d| now_ms.saturating_sub(d.as_millis() as u64)),
        connected: peer.transports.iter().any(|t| sessions.is_live(&t.0, MCP_OWNER_ACTIVITY_GRACE)),
        inbox_count: peer.unread,
    }
}
