//! Compose: user commands queued for an agent's terminal (`/sessions/:id/compose`). They share
//! one FIFO with peer messages ([`crate::messaging_runtime`]) and are typed one per idle transition through
//! the same framed submit; clearing drops only the commands.

use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use crate::http::body::{json_response, ok_json, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::limits::COMPOSE_COMMAND_MAX_BYTES;
use crate::state::App;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ComposeRequest {
    command: String,
}

fn identity(app: &App, id: &str, live: bool) -> Result<uuid::Uuid, ApiError> {
    let session = if live { app.sessions.resolve_live(id)? } else { app.sessions.resolve(id)? };
    uuid::Uuid::parse_str(&session.tuic_session)
        .map_err(|_| ApiError::BadRequest(format!("session {} has no UUID tuic_session", session.id)))
}

/// `POST`: queues `{command}`; 202 `{queued}` (the commands now waiting).
pub async fn push(app: &App, caller: &Caller, id: &str, req: Request) -> ApiResult {
    caller.require_loopback("queueing a Compose command")?;
    let tuic_session = identity(app, id, true)?;
    let body: ComposeRequest = read_json(req).await?;
    if body.command.trim().is_empty() {
        return Err(ApiError::BadRequest("command must not be empty".into()));
    }
    if body.command.len() > COMPOSE_COMMAND_MAX_BYTES {
        return Err(ApiError::BadRequest(format!(
            "command is {} bytes; the limit is {COMPOSE_COMMAND_MAX_BYTES}",
            body.command.len()
        )));
    }
    let queued = app.peers.compose(tuic_session, body.command);
    Ok(json_response(StatusCode::ACCEPTED, &json!({"queued": queued})))
}

/// `GET`: `{queued}`, the commands waiting.
pub async fn count(app: &App, id: &str) -> ApiResult {
    ok_json(&json!({"queued": app.peers.composed(identity(app, id, false)?)}))
}

/// `DELETE`: drops the waiting commands (peer messages stay): `{cleared}`.
pub async fn clear(app: &App, caller: &Caller, id: &str) -> ApiResult {
    caller.require_loopback("clearing Compose commands")?;
    ok_json(&json!({"cleared": app.peers.clear_composed(identity(app, id, false)?)}))
}
