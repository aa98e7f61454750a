//! The stdio transport's reading side: stdout lines matched to requests by id (notifications
//! routed, server requests answered or handed on, oversized lines refused); `stderr.rs` reads stderr.

use serde_json::{Value, json};
use tokio::io::{AsyncRead, BufReader};
use tokio::sync::mpsc;

use super::Pending;
use crate::jsonl::{Line, leading_id, read_line_bounded};
use crate::jsonl::{Outgoing, line_of};
use crate::limits::UPSTREAM_MESSAGE_MAX_BYTES;
use crate::lock::Recover;
use crate::proxy::wire::{UpstreamError, not_forwarded, unattributed};

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
                if let Some(waiting) = id.and_then(|id| pending.locked().remove(&id)) {
                    let _ = waiting.answer.send(Err(UpstreamError::Protocol(format!(
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
    for (_, waiting) in waiting {
        let _ = waiting.answer.send(Err(UpstreamError::Closed(format!("upstream {name} exited (its stdout closed)"))));
    }
    tracing::info!(source = "upstream", upstream = %name, dropped_notifications = dropped, "stdout closed");
}

pub(super) fn dispatch_line(
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
        // A request from the server: a ping is answered here so it never waits; any other
        // (sampling, elicitation, roots) goes to the one call in flight, which puts it to its
        // client, and is refused at once when it belongs to no one call or cannot be queued.
        (Some(id), Some(method)) => {
            let reply = match method {
                "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                _ => {
                    let why = match related_of(pending) {
                        Ok(related) => match related.try_send(message.clone()) {
                            Ok(()) => return,
                            Err(_) => "tuicd's queue of messages from it is full".to_owned(),
                        },
                        Err(why) => why,
                    };
                    json!({"jsonrpc": "2.0", "id": id, "error": not_forwarded(method, name, &why)})
                }
            };
            let _ = writer.try_send(Outgoing::Line(line_of(&reply)));
        }
        (Some(id), None) => {
            let Some(waiting) = id.as_u64().and_then(|id| pending.locked().remove(&id)) else {
                tracing::debug!(source = "upstream", upstream = %name, id = %id, "answer to no request in flight; skipped");
                return;
            };
            let _ = waiting.answer.send(answer_of(message));
        }
        // A log message goes to the one call in flight, never to every caller; progress names
        // its call by token and goes to the registry with the rest.
        (None, Some("notifications/message")) => match related_of(pending) {
            Ok(related) => {
                if related.try_send(message).is_err() {
                    *dropped += 1;
                }
            }
            Err(why) => {
                tracing::debug!(source = "upstream", upstream = %name, %why, "log message for no one call; dropped")
            }
        },
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

/// Where the messages related to the one request in flight that takes them go; why there is
/// none when no request or several take them.
fn related_of(pending: &Pending) -> Result<mpsc::Sender<Value>, String> {
    let pending = pending.locked();
    let mut takers = pending.values().filter_map(|w| w.related.as_ref());
    match (takers.next(), takers.next()) {
        (Some(related), None) => Ok(related.clone()),
        _ => Err(unattributed(pending.values().filter(|w| w.related.is_some()).count())),
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
