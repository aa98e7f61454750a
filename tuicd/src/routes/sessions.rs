//! `/sessions` REST: list, create, write, resize, output, shell-family, pause, resume, close.
//! Create, pause, resume and close are loopback-only. Write is not: a person authenticated over
//! TCP (the phone page's quick replies, a remote GUI) may type into a session; the MCP tool
//! actions of remote agents stay loopback-only in the tool layer.

use http::StatusCode;
use proto::session::{
    CreateSessionRequest, CreateSessionResponse, OutputFormat, ResizeRequest, SessionInfo, ShellFamilyResponse,
    WriteRequest,
};
use serde::Deserialize;

use crate::http::body::{json_response, ok_json, query, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::session::OutputQuery;
use crate::state::App;

fn ok() -> ApiResult {
    ok_json(&serde_json::json!({"ok": true}))
}

/// Every session; a token limited to named sessions sees those only.
pub(crate) async fn list(app: &App, caller: &Caller) -> ApiResult {
    let visible = |id: &str| caller.grant.allows(crate::principals::Scope::Observe, Some(id)).is_ok();
    let sessions: Vec<SessionInfo> = app.sessions.list().iter().filter(|s| visible(&s.id)).map(|s| s.info()).collect();
    ok_json(&sessions)
}

pub(crate) async fn create(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("creating a session")?;
    let body: CreateSessionRequest = read_json(req).await?;
    let session = app.sessions.create(&body, app.config.get().max_sessions)?;
    Ok(json_response(
        StatusCode::CREATED,
        &CreateSessionResponse {
            session_id: session.id.clone(),
            tuic_session: session.tuic_session.clone(),
            alias: session.alias.clone(),
        },
    ))
}

/// One session's status (live or tombstone).
pub(crate) async fn get(app: &App, id: &str) -> ApiResult {
    ok_json(&app.sessions.resolve(id)?.info())
}

/// Any caller the listener let in may write: the IPC socket, or TCP after Basic Auth.
pub(crate) async fn write(app: &App, _caller: &Caller, id: &str, req: Request) -> ApiResult {
    let session = app.sessions.resolve(id)?;
    let body: WriteRequest = read_json(req).await?;
    if let Some(client) = &body.client {
        // A named client's input first: under `latest` the program then reads it at its size.
        session.client_active(client, app.config.get().window_size);
    }
    session.write(body.data.into_bytes()).await?;
    ok()
}

/// The size of the attached stream client `client` names, else the session's manual size; the
/// session's size rule then picks its size (docs/http-api.md).
pub(crate) async fn resize(app: &App, id: &str, req: Request) -> ApiResult {
    let session = app.sessions.resolve(id)?;
    let body: ResizeRequest = read_json(req).await?;
    session.resize_for(body.client.as_deref(), body.rows, body.cols, Some(app.config.get().window_size))?;
    ok()
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OutputParams {
    #[serde(default)]
    format: Option<String>,
    limit: Option<usize>,
    since_cursor: Option<u64>,
    /// The reference's name for `since_cursor`.
    offset: Option<u64>,
}

pub(crate) async fn output(app: &App, id: &str, req: Request) -> ApiResult {
    let params: OutputParams = query(&req)?;
    let format = match params.format.as_deref() {
        None | Some("raw") => OutputFormat::Raw,
        Some("text") => OutputFormat::Text,
        Some("log") => OutputFormat::Log,
        Some(other) => {
            return Err(ApiError::InvalidField(format!("format: '{other}' is not one of raw, text, log")));
        }
    };
    if params.limit == Some(0) {
        return Err(ApiError::InvalidField("limit: must be at least 1".into()));
    }
    let session = app.sessions.resolve(id)?;
    let since_cursor = params.since_cursor.or(params.offset);
    ok_json(&session.output(OutputQuery { format, since_cursor, limit: params.limit }))
}

pub(crate) async fn shell_family(app: &App, id: &str) -> ApiResult {
    ok_json(&ShellFamilyResponse { shell_family: app.sessions.resolve(id)?.shell_family() })
}

/// What the session's ring holds, as an asciicast v2 recording with the times it was written.
pub(crate) async fn recording(app: &App, id: &str) -> ApiResult {
    let session = app.sessions.resolve(id)?;
    let cast = tokio::task::spawn_blocking(move || session.recording())
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("building the recording: {e}")))?;
    let mut response = crate::http::Response::new(crate::http::body::full(cast));
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/x-asciicast"));
    Ok(response)
}

pub(crate) async fn pause(app: &App, caller: &Caller, id: &str) -> ApiResult {
    caller.require_loopback("pausing a session")?;
    app.sessions.resolve(id)?.pause()?;
    ok()
}

pub(crate) async fn resume(app: &App, caller: &Caller, id: &str) -> ApiResult {
    caller.require_loopback("resuming a session")?;
    app.sessions.resolve(id)?.resume()?;
    ok()
}

/// Ends the child and waits until the session has closed, so the answer means it is gone. Like
/// MCP `close`, it is idempotent: an exited session (a tombstone) answers the same, at once.
pub(crate) async fn close(app: &App, caller: &Caller, id: &str) -> ApiResult {
    caller.require_loopback("closing a session")?;
    let session = app.sessions.resolve(id)?;
    session.close(proto::session::close_reason::EXPLICIT_CLOSE);
    session.finished().await;
    ok_json(&serde_json::json!({"ok": true, "exit_code": session.exit_info().and_then(|e| e.exit_code)}))
}
