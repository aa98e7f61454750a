//! One exchange with the server: the credential on every attempt and the one recovery after a
//! 401; a POST answered with JSON or with an SSE stream (the response plus the notifications
//! related to it); a stream that breaks before the response resumed by GET with `Last-Event-ID`.

use reqwest::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::sse::SseParser;
use super::{Session, Shared};
use crate::limits::{UPSTREAM_BACKOFF_START, UPSTREAM_MAX_RETRIES, UPSTREAM_MESSAGE_MAX_BYTES};
use crate::proxy::oauth::discovery;
use crate::proxy::wire::UpstreamError;

/// How much of a refusal's body an error quotes.
const REFUSAL_EXCERPT: usize = 300;
/// How much of a refusal's body is read, looking for a JSON-RPC error in it.
const REFUSAL_BODY_MAX: usize = 64 * 1024;

pub(super) enum Outcome {
    /// The JSON-RPC response, and the session id the server assigned with it (on `initialize`).
    Answer { message: Value, session_id: Option<String> },
    /// A 404 to a request that carried a session id: the server no longer knows the session.
    SessionExpired,
}

/// Sends `request` with the credential current now; after a 401, asks the bearer source once
/// for a better one and retries. Every other status is the caller's to read.
pub(super) async fn send(shared: &Shared, request: RequestBuilder) -> Result<Response, UpstreamError> {
    let mut bearer = match &shared.bearer {
        Some(source) => source.fresh().await,
        None => None,
    };
    let mut recovered = false;
    loop {
        let Some(mut attempt) = request.try_clone() else {
            return Err(UpstreamError::Io("a request body that cannot be sent twice".into()));
        };
        if let Some(token) = &bearer {
            attempt = attempt.bearer_auth(token);
        }
        let response = attempt.send().await.map_err(|e| UpstreamError::Closed(describe(&e)))?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        if !std::mem::replace(&mut recovered, true)
            && let Some(source) = &shared.bearer
            && let Some(next) = source.recover(bearer.as_deref()).await
        {
            bearer = Some(next);
            continue;
        }
        let challenge = response.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).unwrap_or_default();
        let scheme = challenge.split_whitespace().next().unwrap_or_default();
        return Err(if scheme.eq_ignore_ascii_case("bearer") {
            UpstreamError::NeedsOAuth { www_authenticate: challenge.to_owned() }
        } else if bearer.is_some() {
            UpstreamError::AuthFailed("401 for the bearer credential".into())
        } else {
            UpstreamError::AuthFailed("401 without a Bearer challenge".into())
        });
    }
}

/// POSTs one request and reads its response, from JSON or from the SSE stream.
pub(super) async fn call(
    shared: &Shared,
    message: &Value,
    id: i64,
    related: Option<&mpsc::Sender<Value>>,
    session: &Session,
) -> Result<Outcome, UpstreamError> {
    let response = send(shared, post(shared, message, session)).await?;
    let status = response.status();
    if status == StatusCode::NOT_FOUND && session.id.is_some() {
        return Ok(Outcome::SessionExpired);
    }
    if !status.is_success() {
        return Err(refused(response).await);
    }
    let session_id = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let message = if is_event_stream(&response) {
        read_stream(shared, response, id, related, session).await?
    } else {
        read_json(response, id).await?
    };
    Ok(Outcome::Answer { message, session_id })
}

/// POSTs a notification or a response to the server (answered 202, no body to read).
pub(super) async fn deliver(shared: &Shared, message: &Value, session: &Session) -> Result<(), UpstreamError> {
    let response = send(shared, post(shared, message, session)).await?;
    match response.status() {
        status if status.is_success() => Ok(()),
        StatusCode::NOT_FOUND if session.id.is_some() => Err(UpstreamError::Closed("the session expired".into())),
        _ => Err(refused(response).await),
    }
}

fn post(shared: &Shared, message: &Value, session: &Session) -> RequestBuilder {
    shared
        .with_session(shared.http.post(shared.url.clone()), session)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(message.to_string())
}

/// A GET for the server's event stream, resuming after `last_event_id` when there is one.
pub(super) fn get(shared: &Shared, session: &Session, last_event_id: Option<&str>) -> RequestBuilder {
    let request = shared.with_session(shared.http.get(shared.url.clone()), session).header(ACCEPT, "text/event-stream");
    match last_event_id {
        Some(id) => request.header("last-event-id", id),
        None => request,
    }
}

pub(super) fn is_event_stream(response: &Response) -> bool {
    let content_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    content_type.trim_start().to_ascii_lowercase().starts_with("text/event-stream")
}

async fn read_json(mut response: Response, id: i64) -> Result<Value, UpstreamError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| UpstreamError::Closed(describe(&e)))? {
        if body.len() + chunk.len() > UPSTREAM_MESSAGE_MAX_BYTES {
            return Err(UpstreamError::Protocol(format!("a response exceeds {UPSTREAM_MESSAGE_MAX_BYTES} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    let value: Value =
        serde_json::from_slice(&body).map_err(|e| UpstreamError::Protocol(format!("the response is not JSON: {e}")))?;
    let found = match value {
        Value::Array(batch) => batch.into_iter().find(|message| message["id"] == json!(id)),
        message if message["id"] == json!(id) => Some(message),
        _ => None,
    };
    found.ok_or_else(|| UpstreamError::Protocol(format!("the JSON answer holds no response to request {id}")))
}

/// Reads the POST's SSE stream up to the response with `id`, resuming the stream by GET when it
/// ends first and the server gave its events ids.
async fn read_stream(
    shared: &Shared,
    mut response: Response,
    id: i64,
    related: Option<&mpsc::Sender<Value>>,
    session: &Session,
) -> Result<Value, UpstreamError> {
    let mut parser = SseParser::new(UPSTREAM_MESSAGE_MAX_BYTES);
    let mut resumes = 0;
    loop {
        if let Some(answer) = read_events(shared, response, &mut parser, Some(id), related, session).await? {
            return Ok(answer);
        }
        let Some(last_event_id) = parser.last_event_id().map(str::to_owned) else {
            return Err(UpstreamError::Closed("the response stream ended before the response".into()));
        };
        if resumes == UPSTREAM_MAX_RETRIES {
            return Err(UpstreamError::Closed(format!(
                "the response stream ended {resumes} times before the response"
            )));
        }
        resumes += 1;
        tokio::time::sleep(parser.retry().unwrap_or(UPSTREAM_BACKOFF_START)).await;
        parser = parser.resumed();
        response = send(shared, get(shared, session, Some(&last_event_id))).await?;
        if !response.status().is_success() || !is_event_stream(&response) {
            let status = response.status();
            return Err(UpstreamError::Closed(format!("resuming the response stream was answered {status}")));
        }
    }
}

/// Reads one SSE stream to its end (or its break), handing each message on. Returns the
/// response with id `want` as soon as it arrives.
pub(super) async fn read_events(
    shared: &Shared,
    mut response: Response,
    parser: &mut SseParser,
    want: Option<i64>,
    related: Option<&mpsc::Sender<Value>>,
    session: &Session,
) -> Result<Option<Value>, UpstreamError> {
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return Ok(None),
            Err(error) => {
                tracing::debug!(source = "upstream", upstream = %shared.name, error = %describe(&error), "event stream broke");
                return Ok(None);
            }
        };
        let events = parser.push(&chunk).map_err(|e| UpstreamError::Protocol(e.to_string()))?;
        for event in events {
            let Ok(message) = serde_json::from_str::<Value>(&event.data) else {
                tracing::warn!(source = "upstream", upstream = %shared.name, "an event that is not JSON; skipped");
                continue;
            };
            if let Some(answer) = handle(shared, message, related, session).await {
                if want.is_some_and(|id| answer["id"] == json!(id)) {
                    return Ok(Some(answer));
                }
                tracing::debug!(source = "upstream", upstream = %shared.name, id = %answer["id"], "a response nobody waits for");
            }
        }
    }
}

/// One message from the server: a notification is forwarded, a ping answered here, any other
/// request handed on like a notification (the registry puts it to the client of the call it
/// belongs to, and answers it), a response returned to the caller.
async fn handle(
    shared: &Shared,
    message: Value,
    related: Option<&mpsc::Sender<Value>>,
    session: &Session,
) -> Option<Value> {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Some(message);
    };
    let Some(id) = message.get("id").cloned() else {
        shared.forward(related, message);
        return None;
    };
    let answer = if method == "ping" {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        let text = format!("tuicd's queue of messages from upstream {} is full; {method} not forwarded", shared.name);
        let busy = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": text}});
        if shared.forward(related, message) {
            return None;
        }
        busy
    };
    if let Err(error) = deliver(shared, &answer, session).await {
        tracing::debug!(source = "upstream", upstream = %shared.name, %error, "answer to a server request not delivered");
    }
    None
}

/// A 403 whose `Bearer` challenge says `error="insufficient_scope"` (RFC 6750 §3.1): the typed
/// error that lets the registry ask for a step-up authorization. Any other 403 is not one.
fn insufficient_scope(response: &Response) -> Option<UpstreamError> {
    if response.status() != StatusCode::FORBIDDEN {
        return None;
    }
    let header = response.headers().get(WWW_AUTHENTICATE)?.to_str().ok()?;
    let challenge = discovery::insufficient_scope(header)?;
    Some(UpstreamError::InsufficientScope { scope: challenge.scope, resource_metadata: challenge.resource_metadata })
}

/// A non-success status as an error: a 403 for lack of scope is typed, a JSON-RPC error in the
/// body is passed on as such.
async fn refused(mut response: Response) -> UpstreamError {
    if let Some(error) = insufficient_scope(&response) {
        return error;
    }
    let status = response.status();
    let mut body = Vec::new();
    while body.len() < REFUSAL_BODY_MAX {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    if let Ok(message) = serde_json::from_slice::<Value>(&body)
        && let Some(error) = message.get("error").filter(|e| e.is_object())
    {
        return UpstreamError::Rpc {
            code: error["code"].as_i64().unwrap_or(0),
            message: error["message"].as_str().unwrap_or_default().to_owned(),
            data: error.get("data").cloned(),
        };
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(REFUSAL_EXCERPT)]).trim().to_owned();
    UpstreamError::Io(if text.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {text}") })
}

/// A reqwest error with its causes, which name what actually failed (refused, reset, DNS).
pub(super) fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
