//! The stdio transport's reading side: stdout lines matched to requests by id (notifications
//! routed, server requests answered, oversized lines refused); `stderr.rs` reads stderr.

use serde_json::{Value, json};
use tokio::io::{AsyncRead, BufReader};
use tokio::sync::mpsc;

use super::Pending;
use crate::jsonl::{Line, leading_id, read_line_bounded};
use crate::jsonl::{Outgoing, line_of};
use crate::limits::UPSTREAM_MESSAGE_MAX_BYTES;
use crate::lock::Recover;
use crate::proxy::wire::UpstreamError;

/// Reads stdout until it closes, then fails every request still waiting. Dropping `notifications`
/// at the end tells the registry the connection is gone.
pub(super) async fn read_loop<R: AsyncRead + Unpin>(
    name: String,
    mut stdout: BufReader<R>,
    pending: Pending,
    writer: mpsc::Sender<Outgoing>,
    notifications: mpsc::Sender<Value>,
) {
    let mut dropped: u64 = 0;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match read_line_bounded(&mut stdout, &mut buf, UPSTREAM_MESSAGE_MAX_BYTES).await {
            Ok(Line::Eof) => break,
            Ok(Line::TooLong(total)) => {
                let id = leading_id(&buf);
                tracing::warn!(source = "upstream", upstream = %name, bytes = total, id = ?id,
                    "refused a message over UPSTREAM_MESSAGE_MAX_BYTES ({UPSTREAM_MESSAGE_MAX_BYTES} bytes)");
                if let Some(tx) = id.and_then(|id| pending.locked().remove(&id)) {
                    let _ = tx.send(Err(UpstreamError::Protocol(format!(
                        "upstream {name} answered with a message of {total} bytes, over the limit of {UPSTREAM_MESSAGE_MAX_BYTES}"
                    ))));
                }
            }
            Ok(Line::Complete) => dispatch_line(&name, &buf, &pending, &writer, &notifications, &mut dropped),
            Err(e) => {
                tracing::warn!(source = "upstream", upstream = %name, error = %e, "reading stdout failed");
                break;
            }
        }
    }
    let waiting: Vec<_> = pending.locked().drain().collect();
    for (_, tx) in waiting {
        let _ = tx.send(Err(UpstreamError::Closed(format!("upstream {name} exited (its stdout closed)"))));
    }
    tracing::info!(source = "upstream", upstream = %name, dropped_notifications = dropped, "stdout closed");
}

fn dispatch_line(
    name: &str,
    line: &[u8],
    pending: &Pending,
    writer: &mpsc::Sender<Outgoing>,
    notifications: &mpsc::Sender<Value>,
    dropped: &mut u64,
) {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let message: Value = match serde_json::from_slice(text) {
        Ok(message) => message,
        Err(e) => {
            let shown = String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
            tracing::warn!(source = "upstream", upstream = %name, error = %e, line = %shown, "stdout line is not JSON; skipped");
            return;
        }
    };
    let method = message.get("method").and_then(Value::as_str);
    match (message.get("id"), method) {
        // A request from the server (ping, roots/list, sampling): answered here so it never waits.
        (Some(id), Some(method)) => {
            let reply = match method {
                "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
                    "message": format!("tuicd does not offer {method} to upstreams")}}),
            };
            let _ = writer.try_send(Outgoing::Line(line_of(&reply)));
        }
        (Some(id), None) => {
            let Some(tx) = id.as_u64().and_then(|id| pending.locked().remove(&id)) else {
                tracing::debug!(source = "upstream", upstream = %name, id = %id, "answer to no request in flight; skipped");
                return;
            };
            let _ = tx.send(answer_of(message));
        }
        (None, Some(_)) => {
            if notifications.try_send(message).is_err() {
                *dropped += 1;
                if dropped.is_power_of_two() {
                    tracing::warn!(source = "upstream", upstream = %name, dropped = *dropped, "notification queue full; dropping");
                }
            }
        }
        (None, None) => {
            tracing::warn!(source = "upstream", upstream = %name, "stdout message has neither id nor method; skipped");
        }
    }
}

/// A JSON-RPC response as the transport answers it: its `result`, or its error.
pub(crate) fn answer_of(mut message: Value) -> Result<Value, UpstreamError> {
    if let Some(error) = message.get_mut("error").map(Value::take) {
        return Err(UpstreamError::Rpc {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
            message: error.get("message").and_then(Value::as_str).unwrap_or("(no message)").to_owned(),
            data: error.get("data").cloned(),
        });
    }
    match message.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(UpstreamError::Protocol("a response with neither result nor error".into())),
    }
}
