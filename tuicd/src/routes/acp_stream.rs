//! `GET /acp/connections/:id/stream?after=N`: the WebSocket carrying a connection's frames in
//! sequence order, no gap and no duplicate. A `hello` frame first (not journaled), then every
//! retained frame after `after` (from the oldest retained without it), then live. A cursor the
//! journal has dropped is refused with 404 before the upgrade; a reader that falls behind the
//! journal while connected gets a terminal `gap` frame and the close. Client frames are ignored
//! (driving goes through the REST routes), except Close, which is answered.

use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use hyper_tungstenite::WebSocketStream;
use hyper_tungstenite::tungstenite::Message;
use hyper_tungstenite::tungstenite::protocol::frame::CloseFrame;
use hyper_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use hyper_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::json;

use crate::acp::Connection;
use crate::acp::journal::Since;
use crate::http::body::query;
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::limits::{ACP_STREAM_BATCH, ACP_STREAM_PING, WS_READ_BUFFER};
use crate::state::App;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StreamQuery {
    after: Option<u64>,
}

pub(crate) async fn stream(app: &App, caller: &Caller, id: &str, mut req: Request) -> ApiResult {
    let connection = app.acp.get(id)?;
    let params: StreamQuery = query(&req)?;
    let (newest, first) = connection.journal.bounds();
    let after = match params.after {
        None => first.saturating_sub(1),
        Some(after) if after > newest => {
            return Err(ApiError::InvalidField(format!(
                "after: {after} is beyond the newest frame ({newest}) of ACP connection {id}"
            )));
        }
        Some(after) if after + 1 < first => {
            return Err(ApiError::NotFound(format!(
                "after: frame {} of ACP connection {id} is no longer kept (the journal starts at {first}); \
                 recover with a fresh connection and session/load",
                after + 1
            )));
        }
        Some(after) => after,
    };
    if !hyper_tungstenite::is_upgrade_request(&req) {
        return Err(ApiError::BadRequest("this endpoint expects a WebSocket upgrade".into()));
    }
    let accept = super::stream::websocket_accept(&req)?;
    let upgrading = hyper::upgrade::on(&mut req);
    let token = caller.grant.token_id().map(str::to_owned);
    let app = app.clone();
    tokio::spawn(async move {
        let upgraded = match upgrading.await {
            Ok(upgraded) => upgraded,
            Err(e) => {
                tracing::debug!(error = %e, "WebSocket handshake failed");
                return;
            }
        };
        let config = WebSocketConfig::default().read_buffer_size(WS_READ_BUFFER);
        let socket = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await;
        let run = pump(socket, connection, after);
        tokio::select! {
            () = run => {}
            () = app.stopping() => {}
            () = async {
                match &token {
                    Some(id) => app.tokens.ended(id).await,
                    None => std::future::pending().await,
                }
            } => tracing::info!(token = ?token, "closed an ACP stream: its token was revoked or expired"),
        }
    });
    super::stream::switching_protocols(&accept)
}

type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// Sends the frames after `after` as they come, until the client closes or falls behind.
async fn pump(socket: Socket, connection: Arc<Connection>, mut after: u64) {
    let (mut sink, mut incoming) = socket.split();
    let (_, first) = connection.journal.bounds();
    let snapshot = connection.snapshot();
    let hello = json!({"seq": after, "kind": "hello", "connection": connection.id, "first_sequence": first,
        "state": snapshot["state"], "generation": snapshot["generation"], "created_at_ms": connection.created_at_ms});
    if sink.send(Message::text(hello.to_string())).await.is_err() {
        return;
    }
    loop {
        match connection.journal.since(after, ACP_STREAM_BATCH) {
            Since::Frames(frames) if !frames.is_empty() => {
                for frame in &frames {
                    if sink.feed(Message::text(frame.text.to_string())).await.is_err() {
                        return;
                    }
                }
                if sink.flush().await.is_err() {
                    return;
                }
                after = frames.last().map_or(after, |f| f.seq);
                continue;
            }
            Since::Frames(_) | Since::Ahead { .. } => {}
            Since::Dropped { first } => {
                let gap = json!({"seq": after, "kind": "gap", "missed_after": after, "first_sequence": first});
                let _ = sink.send(Message::text(gap.to_string())).await;
                let close = CloseFrame { code: CloseCode::Again, reason: "fell behind the journal".into() };
                let _ = sink.send(Message::Close(Some(close))).await;
                return;
            }
        }
        tokio::select! {
            () = connection.journal.wait_past(after) => {}
            // A ping while quiet, so a client (a phone back from sleep) can tell a live socket
            // from a half-open one.
            () = tokio::time::sleep(ACP_STREAM_PING) => {
                if sink.send(Message::Ping(Default::default())).await.is_err() {
                    return;
                }
            }
            message = incoming.next() => match message {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                    let _ = sink.send(Message::Close(None)).await;
                    return;
                }
                Some(Ok(_)) => {}
            },
        }
    }
}
