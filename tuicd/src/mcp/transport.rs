//! HTTP for `/mcp`: the gate, header rules, status codes and the GET notification stream.
//!
//! - `mcp_server_enabled: false` answers 503 on every method (the rest of the API stays up).
//! - A foreign `Origin` or `Host` is refused before routing, for every route (`server/browser.rs`);
//!   here it answers 403 with a JSON-RPC error body ([`forbidden`]).
//! - An unsupported `MCP-Protocol-Version` answers 400; any supported revision is accepted and a
//!   missing header is fine.
//! - POST: a request gets 200 with one JSON-RPC response; a notification or response gets 202
//!   (a response answers a request put to the client, see [`super::client_requests`]). A
//!   `tools/call` whose upstream sends the client requests while it runs is answered as an SSE
//!   stream instead: those requests, then the response.
//! - GET needs `mcp-session-id` (401 without) and streams server notifications as SSE.
//! - DELETE ends the session named by `mcp-session-id`.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use tokio::sync::mpsc;

use super::model::{self, ACCEPTED_HEADER_VERSIONS, Incoming, Params, RpcError, code};
use super::protocol::{self, RequestMeta};
use super::protocol_sessions::ProtocolSessionError;
use crate::http::body::{empty, json_bytes_response, read_bytes};
use crate::http::sse::{encode, sse_response};
use crate::http::{ApiError, ApiResult, Caller, Request, Response};
use crate::limits::SSE_KEEP_ALIVE;
use crate::state::App;

pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";
pub(crate) const TUIC_SESSION_HEADER: &str = "x-tuic-session";

pub(crate) async fn post(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let meta = match admit(app, caller, req.headers()) {
        Ok(meta) => meta,
        Err(response) => return Ok(*response),
    };
    // A body that cannot be read (too large, cut off) is a JSON-RPC error too, with its status.
    let body = match read_bytes(req).await {
        Ok(body) => body,
        Err(e) => return Ok(rpc_failure(e.status_and_code().0, RpcError::new(code::INVALID_REQUEST, e.to_string()))),
    };
    match model::classify(&body) {
        Err(error) => Ok(rpc_failure(StatusCode::BAD_REQUEST, error)),
        Ok(Incoming::Notification { method }) if method == "notifications/cancelled" => {
            if let Some(session) = &meta.session_id {
                let _ = app.mcp.protocol_sessions.touch(session);
                let message: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                if let Some(request) = message.pointer("/params/requestId") {
                    super::upstream::cancel(app, session, request);
                }
            }
            let mut response = Response::new(empty());
            *response.status_mut() = StatusCode::ACCEPTED;
            Ok(response)
        }
        Ok(Incoming::Response) => {
            if let Some(session) = &meta.session_id {
                let _ = app.mcp.protocol_sessions.touch(session);
                if let Ok(answer) = serde_json::from_slice::<serde_json::Value>(&body)
                    && !app.mcp.client_requests.resolve(session, answer)
                {
                    tracing::debug!(source = "mcp", session = %session, "a response to no request waiting; dropped");
                }
            }
            let mut response = Response::new(empty());
            *response.status_mut() = StatusCode::ACCEPTED;
            Ok(response)
        }
        Ok(Incoming::Notification { .. }) => {
            if let Some(id) = &meta.session_id {
                let _ = app.mcp.protocol_sessions.touch(id);
            }
            let mut response = Response::new(empty());
            *response.status_mut() = StatusCode::ACCEPTED;
            Ok(response)
        }
        Ok(Incoming::Request { id, method, params }) => {
            if method != "initialize"
                && let Some(session) = &meta.session_id
                && let Err(e) = app.mcp.protocol_sessions.touch(session)
            {
                return Ok(session_failure(e));
            }
            if method == model::TOOLS_CALL
                && !app.upstreams.is_empty()
                && meta.session_id.as_deref().is_some_and(|s| app.mcp.protocol_sessions.answers_requests(s))
            {
                return Ok(streamed(app, meta, id, params.map(|p| Params::Object(p.into_object()))).await);
            }
            let handled = protocol::handle(app, meta, &id, &method, params).await;
            let response = json_bytes_response(StatusCode::OK, handled.body);
            Ok(with_session(response, handled.session_id.as_deref()))
        }
    }
}

pub(crate) async fn get(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let meta = match admit(app, caller, req.headers()) {
        Ok(meta) => meta,
        Err(response) => return Ok(*response),
    };
    let Some(session) = meta.session_id else {
        return Ok(rpc_failure(
            StatusCode::UNAUTHORIZED,
            RpcError::new(code::INVALID_REQUEST, "GET /mcp needs the mcp-session-id header from initialize"),
        ));
    };
    let claim = match app.mcp.protocol_sessions.attach_stream(&session) {
        Ok(claim) => claim,
        Err(e) => return Ok(session_failure(e)),
    };
    let (tx, rx) = mpsc::channel::<Bytes>(crate::limits::MCP_STREAM_QUEUE);
    tokio::spawn(pump(app.clone(), session.clone(), claim, tx));
    Ok(with_session_header(sse_response(rx), &session))
}

pub(crate) async fn delete(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let meta = match admit(app, caller, req.headers()) {
        Ok(meta) => meta,
        Err(response) => return Ok(*response),
    };
    let Some(session) = meta.session_id else {
        return Ok(rpc_failure(
            StatusCode::BAD_REQUEST,
            RpcError::new(code::INVALID_REQUEST, "DELETE /mcp needs the mcp-session-id header of the session to end"),
        ));
    };
    let existed = app.mcp.protocol_sessions.remove(&session);
    tracing::info!(source = "mcp", session = %session, existed, "MCP session ended by DELETE");
    crate::messaging_runtime::transport_ended(app, &session);
    crate::http::body::ok_json(&serde_json::json!({"ok": true}))
}

/// A `tools/call` of a client that may be asked for sampling, elicitation or roots: answered
/// with JSON, exactly as any call, when its upstream sends the client no request; at the first
/// request, answered as an SSE stream that carries each request, then the call's response, and
/// ends. The call runs on a task of its own, so the stream is answered while it still runs.
async fn streamed(
    app: &App,
    mut meta: RequestMeta,
    id: serde_json::Value,
    params: Option<Params<'static>>,
) -> Response {
    let (outbox, mut requests) = mpsc::channel(crate::limits::MCP_STREAM_QUEUE);
    meta.outbox = Some(outbox);
    let session = meta.session_id.clone();
    let mut handled = tokio::spawn({
        let (app, id) = (app.clone(), id.clone());
        async move { protocol::handle(&app, meta, &id, model::TOOLS_CALL, params).await.body }
    });
    // A call that panicked is answered as any failure inside tuicd: a JSON-RPC error.
    let body_of = move |done: Result<Vec<u8>, tokio::task::JoinError>| {
        done.unwrap_or_else(|_| {
            model::error_body(Some(&id), &RpcError::new(code::INTERNAL_ERROR, "tools/call failed inside tuicd"))
        })
    };
    let first = tokio::select! {
        done = &mut handled => {
            return with_session(json_bytes_response(StatusCode::OK, body_of(done)), session.as_deref());
        }
        Some(first) = requests.recv() => first,
    };
    let (tx, rx) = mpsc::channel::<Bytes>(crate::limits::MCP_STREAM_QUEUE);
    tokio::spawn(async move {
        let mut next = Some(first);
        loop {
            if let Some(message) = next.take()
                && tx.send(encode(None, "message", &message.to_string())).await.is_err()
            {
                // The client left: the call goes on to its answer; the requests it still sends
                // find no stream and are answered with an error.
                return;
            }
            tokio::select! {
                done = &mut handled => {
                    let body = body_of(done);
                    let _ = tx.send(encode(None, "message", &String::from_utf8_lossy(&body))).await;
                    return;
                }
                Some(message) = requests.recv() => next = Some(message),
            }
        }
    });
    with_session(sse_response(rx), session.as_deref())
}

/// Forwards one session's notifications to its GET stream until the client leaves, the stream
/// is superseded or the session ends, or the daemon stops. Its teardown releases the session's
/// stream slot only while it still holds its generation.
async fn pump(app: App, session: String, mut claim: super::protocol_sessions::StreamClaim, tx: mpsc::Sender<Bytes>) {
    struct Release<'a>(&'a App, &'a str, u64);
    impl Drop for Release<'_> {
        fn drop(&mut self) {
            self.0.mcp.protocol_sessions.detach_stream(self.1, self.2);
        }
    }
    let _release = Release(&app, &session, claim.generation);
    if tx.send(Bytes::from_static(b": stream open\n\n")).await.is_err() {
        return;
    }
    let mut keep_alive = tokio::time::interval(SSE_KEEP_ALIVE);
    keep_alive.tick().await;
    loop {
        let frame = tokio::select! {
            () = app.stopping() => return,
            () = tx.closed() => return,
            _ = keep_alive.tick() => Bytes::from_static(b": keep-alive\n\n"),
            message = claim.receiver.recv() => match message {
                Some(message) => encode(None, "message", &message),
                None => return,
            },
        };
        if tx.send(frame).await.is_err() {
            return;
        }
    }
}

/// The checks every method shares. `Err` is the response to send instead.
/// The refusal is boxed: a `Response` is large and this is the hot path's common `Ok`.
fn admit(app: &App, caller: &Caller, headers: &HeaderMap) -> Result<RequestMeta, Box<Response>> {
    if !app.config.get().mcp_server_enabled {
        return Err(Box::new(
            ApiError::Unavailable("the MCP endpoint is off (mcp_server_enabled is false in config.json)".into())
                .into_response(),
        ));
    }
    if let Some(version) = headers.get(VERSION_HEADER) {
        let version = version.to_str().unwrap_or("");
        if !ACCEPTED_HEADER_VERSIONS.contains(&version) {
            return Err(Box::new(rpc_failure(
                StatusCode::BAD_REQUEST,
                RpcError::new(
                    code::INVALID_REQUEST,
                    format!(
                        "Unsupported MCP-Protocol-Version '{version}'; supported: {}",
                        ACCEPTED_HEADER_VERSIONS.join(", ")
                    ),
                ),
            )));
        }
    }
    let session_id = match headers.get(SESSION_HEADER).map(|v| v.to_str().map(str::to_owned)) {
        None => None,
        Some(Ok(id)) if super::protocol_sessions::valid_id(&id) => Some(id),
        Some(_) => return Err(Box::new(session_failure(ProtocolSessionError::BadId))),
    };
    // Only a process on the socket can have inherited a tuicd terminal's `TUIC_SESSION`; over
    // TCP the header is anyone's word for another agent's identity, so it is not read there.
    let on_socket = matches!(caller.transport, crate::http::Transport::Ipc);
    let tuic_session = headers
        .get(TUIC_SESSION_HEADER)
        .filter(|_| on_socket)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| uuid::Uuid::parse_str(v.trim()).ok())
        .map(|u| u.to_string());
    Ok(RequestMeta { caller: caller.clone(), session_id, tuic_session, outbox: None })
}

fn session_failure(error: ProtocolSessionError) -> Response {
    let status = match error {
        ProtocolSessionError::BadId => StatusCode::BAD_REQUEST,
        ProtocolSessionError::Full => StatusCode::SERVICE_UNAVAILABLE,
    };
    rpc_failure(status, RpcError::new(code::INVALID_REQUEST, error.to_string()))
}

/// An HTTP-level refusal with a JSON-RPC error body (`id: null`), as the transport spec allows.
fn rpc_failure(status: StatusCode, error: RpcError) -> Response {
    json_bytes_response(status, model::error_body(None, &error))
}

/// The browser guard's refusal (`server/browser.rs`) in this endpoint's shape: 403 with a
/// JSON-RPC error body.
pub(crate) fn forbidden(message: &str) -> Response {
    rpc_failure(StatusCode::FORBIDDEN, RpcError::new(code::INVALID_REQUEST, message))
}

/// Names the protocol session a response belongs to, when there is one.
fn with_session(response: Response, session: Option<&str>) -> Response {
    match session {
        Some(session) => with_session_header(response, session),
        None => response,
    }
}

/// Names the protocol session a response belongs to (`mcp-session-id`).
fn with_session_header(mut response: Response, session: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(session) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}
