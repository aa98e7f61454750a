//! The `agent` tool's messaging actions: register, list_peers, send, inbox, wait. Typed
//! parameters (the tool's `inputSchema` derives from them) and thin adapters over
//! [`crate::messaging::Messaging`], with [`crate::messaging_runtime`] supplying the live view.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::agent_runtime::AgentLink;
use crate::mcp::tools::{CallContext, ToolError, to_value};
use crate::messaging::{DeliveryPath, InboxQuery, MessagingError, RegisterRequest, TransportId};
use crate::messaging_runtime::view::View;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Register {
    /// Your identity UUID (omitted: the bound or a generated one).
    pub tuic_session: Option<String>,
    /// Display name shown to peers (omitted: kept).
    pub name: Option<String>,
    /// Project to group peers by.
    pub project: Option<String>,
    /// Declares (true) or drops (false) the orchestrator role.
    pub orchestrator: Option<bool>,
    /// The identity this one replaces after a reconnect (its mail moves here).
    pub replaces: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListPeers {
    /// Only peers registered with this project.
    pub project: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Send {
    /// Recipient: tuic_session, PTY session_id or alias.
    pub to: String,
    /// The message (at most 64 KB).
    pub message: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Inbox {
    /// After this cursor (omitted: your read position).
    pub since: Option<u64>,
    /// Most messages (default 50).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Wait {
    /// After this cursor (omitted: your read position).
    pub since: Option<u64>,
    /// ms to wait (default 60000; 300000 and above run as 295000).
    #[schemars(range(min = 1, max = 300000))]
    pub timeout_ms: Option<u64>,
    /// Spawned sessions or task_ids: each one's status, state and output tail once all are done.
    pub sessions: Option<Vec<String>>,
}

fn transport(ctx: &CallContext, action: &str) -> Result<TransportId, ToolError> {
    ctx.mcp_session.as_deref().map(TransportId::new).ok_or_else(|| {
        ToolError::new(format!(
            "agent action={action} needs an MCP session: call initialize first and send its mcp-session-id header"
        ))
    })
}

fn uuid_param(action: &str, field: &str, value: Option<String>) -> Result<Option<Uuid>, ToolError> {
    value
        .map(|v| {
            Uuid::parse_str(v.trim())
                .map_err(|_| ToolError::new(format!("agent action={action}: {field} '{v}' is not a UUID")))
        })
        .transpose()
}

fn failed(action: &str, error: MessagingError) -> ToolError {
    ToolError::new(format!("agent action={action}: {error}"))
}

pub(super) fn register(ctx: &CallContext, p: Register) -> Result<Value, ToolError> {
    let transport = transport(ctx, "register")?;
    let request = RegisterRequest {
        tuic_session: uuid_param("register", "tuic_session", p.tuic_session)?,
        name: p.name,
        project: p.project,
        orchestrator: p.orchestrator,
        replaces: uuid_param("register", "replaces", p.replaces)?,
    };
    let app = &ctx.app;
    let outcome = app.peers.messaging.register(&transport, request, &View(app)).map_err(|e| failed("register", e))?;
    crate::messaging_runtime::identity_bound(app, &transport.0, &outcome);
    if let Some(old) = outcome.superseded_identity
        && outcome.mail_stranded.is_none()
    {
        app.events.publish(crate::messaging_runtime::PEER_UNREGISTERED, &json!({"tuic_session": old}));
    }
    app.events.publish(
        crate::messaging_runtime::PEER_REGISTERED,
        &json!({"tuic_session": outcome.tuic_session, "name": outcome.name}),
    );
    tracing::info!(
        source = "agent_identity", session = %transport.0, tuic_session = %outcome.tuic_session,
        attach = ?outcome.attach, superseded = ?outcome.superseded_identity, "agent action=register"
    );
    let mut answer = to_value(&outcome)?;
    answer["ok"] = json!(true);
    Ok(answer)
}

pub(super) fn list_peers(ctx: &CallContext, p: ListPeers) -> Result<Value, ToolError> {
    let peers = ctx.app.peers.messaging.list_peers(p.project.as_deref(), &View(&ctx.app));
    Ok(json!({"peers": peers}))
}

pub(super) fn send(ctx: &CallContext, p: Send) -> Result<Value, ToolError> {
    let transport = transport(ctx, "send")?;
    let app = &ctx.app;
    let outcome = app.peers.messaging.send(&transport, &p.to, p.message, &View(app)).map_err(|e| failed("send", e))?;
    tracing::info!(
        source = "agent_msg", recipient = %outcome.recipient, message_id = %outcome.message_id,
        route = outcome.delivery_path.as_str(), "accepted"
    );
    let mut answer = to_value(&outcome)?;
    answer["ok"] = json!(true);
    answer["accepted"] = json!(true);
    answer["buffered_in_inbox"] = json!(true);
    let session = View(app).session_of(outcome.recipient);
    if let Some(status) = session.as_deref().and_then(AgentLink::of).map(AgentLink::status) {
        let mut state = serde_json::Map::new();
        if let Some(shell) = status.shell_state {
            state.insert("shell_state".into(), json!(shell));
        }
        if let Some(agent) = status.agent_state {
            state.insert("agent_state".into(), json!(agent));
        }
        answer["recipient_state"] = Value::Object(state);
    }
    if outcome.delivery_path == DeliveryPath::InboxOnly {
        answer["warning"] = json!(if outcome.recipient_has_terminal {
            "Recipient's terminal cannot take the message now (busy orchestrator or wake budget spent); it waits in the inbox"
        } else {
            "Recipient has NO managed terminal and no active wait: the message waits in its inbox until it calls agent action=inbox or wait"
        });
    }
    Ok(answer)
}

pub(super) fn inbox(ctx: &CallContext, p: Inbox) -> Result<Value, ToolError> {
    let transport = transport(ctx, "inbox")?;
    let query = InboxQuery { since: p.since, limit: p.limit };
    let page = ctx.app.peers.messaging.inbox(&transport, query).map_err(|e| failed("inbox", e))?;
    let mut answer = to_value(&page)?;
    answer["count"] = json!(page.messages.len());
    Ok(answer)
}

pub(super) async fn wait(ctx: &CallContext, p: Wait) -> Result<Value, ToolError> {
    if let Some(sessions) = p.sessions {
        return super::wait_set::wait_set(ctx, sessions, p.since, p.timeout_ms).await;
    }
    let transport = transport(ctx, "wait")?;
    let outcome =
        ctx.app.peers.messaging.wait(&transport, p.since, p.timeout_ms).await.map_err(|e| failed("wait", e))?;
    to_value(&outcome)
}
