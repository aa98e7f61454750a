//! The ACP connections a person drives (see [`crate::acp`]), read through the `session` tool like
//! terminals: `list` names them (`session_id` acp-N, `agent_state` from the connection), and
//! `output` reads what was said, the cursor counting frames. Nothing more: driving them stays with
//! people (the `/acp` routes), so the tool's surface and rules are the terminals' own.

use serde_json::{Value, json};

use crate::acp::Connection;
use crate::acp::journal::Since;
use crate::mcp::tools::{CallContext, ToolError};

/// Frames looked at per `output` call; the byte limit usually stops well before.
const MAX_FRAMES: usize = 1000;

/// `list` entries for the ACP connections, in the terminals' shape.
pub(super) fn list_entries(ctx: &CallContext) -> Vec<Value> {
    ctx.app
        .acp
        .list()
        .iter()
        .map(|c| {
            let s = c.snapshot();
            let sessions = s["sessions"].as_array().cloned().unwrap_or_default();
            let agent_state = match (s["state"].as_str(), s["interactions_pending"].as_u64()) {
                (Some("ready"), Some(n)) if n > 0 => Some("awaiting_input"),
                (Some("ready"), _) if sessions.iter().any(|x| x["turn_running"] == true) => Some("working"),
                (Some("ready"), _) => Some("idle"),
                (Some("starting"), _) => Some("starting"),
                _ => None,
            };
            let agent = s["agent_info"]["name"].as_str().unwrap_or("ACP agent").to_owned();
            let mut entry = json!({
                "session_id": s["id"],
                "tuic_session": s["id"],
                "is_caller": false,
                "alias": s["id"],
                "display_name": format!("{agent} (ACP, {})", s["state"].as_str().unwrap_or("?")),
                "cwd": s["cwd"],
                "agent_type": agent,
                "pty_description": "an ACP agent a person drives: output reads what it said",
            });
            if let Some(state) = agent_state {
                entry["agent_state"] = json!(state);
            }
            entry
        })
        .collect()
}

/// `output` of an ACP connection: each frame as a line a reader follows (prompts, the agent's
/// text joined, tool calls, questions, turn ends), at most `limit` bytes, from `since` (a frame
/// sequence) on.
pub(super) fn output(connection: &Connection, since: Option<u64>, limit: usize) -> Result<Value, ToolError> {
    let (newest, first) = connection.journal.bounds();
    let after = since.unwrap_or(first.saturating_sub(1));
    let frames = match connection.journal.since(after, MAX_FRAMES) {
        Since::Frames(frames) => frames,
        Since::Dropped { first } => {
            return Err(ToolError::new(format!(
                "{}: frame {} is no longer kept; the journal starts at {first} (since_cursor={})",
                connection.id,
                after + 1,
                first - 1
            )));
        }
        Since::Ahead { newest } => {
            return Err(ToolError::new(format!(
                "{}: since_cursor {after} is beyond the newest frame ({newest})",
                connection.id
            )));
        }
    };
    let mut data = String::new();
    let mut cursor = after;
    let mut in_text = false;
    for frame in &frames {
        let Ok(parsed) = serde_json::from_str::<Value>(&frame.text) else { continue };
        let (piece, text) = line_of(&parsed);
        let mut piece = piece;
        if text && in_text {
            // Consecutive chunks of the agent's text continue one line.
        } else if !data.is_empty() || in_text {
            piece.insert(0, '\n');
        }
        if !data.is_empty() && data.len() + piece.len() > limit {
            break;
        }
        in_text = text;
        data.push_str(&piece);
        cursor = frame.seq;
    }
    let state = connection.snapshot();
    Ok(json!({
        "data_length": data.len(),
        "data": data,
        "cursor": cursor,
        "oldest_offset": first,
        "more": cursor < newest,
        "exited": state["state"] == "settled",
    }))
}

/// One frame as text; `true` when it is a chunk of the agent's message (joined with the next).
fn line_of(frame: &Value) -> (String, bool) {
    let message = &frame["message"];
    let params = &message["params"];
    let seq = frame["seq"].as_u64().unwrap_or(0);
    match frame["kind"].as_str() {
        Some("state") => {
            let reason = frame["reason"].as_str().map(|r| format!(": {r}")).unwrap_or_default();
            return (format!("[{seq}] agent {}{reason}", frame["state"].as_str().unwrap_or("?")), false);
        }
        Some("invalid") => return (format!("[{seq}] invalid line: {}", frame["reason"].as_str().unwrap_or("")), false),
        _ => {}
    }
    let update = &params["update"];
    match (message["method"].as_str(), update["sessionUpdate"].as_str()) {
        (Some("session/update"), Some("agent_message_chunk")) => {
            (update["content"]["text"].as_str().unwrap_or("").to_owned(), true)
        }
        (Some("session/update"), Some(kind @ ("tool_call" | "tool_call_update"))) => {
            let title = update["title"].as_str().unwrap_or("");
            let status = update["status"].as_str().unwrap_or("");
            (format!("[{seq}] {kind}: {title} {status}").trim_end().to_owned(), false)
        }
        (Some("session/update"), Some(kind)) => (format!("[{seq}] {kind}"), false),
        (Some("session/prompt"), _) => {
            let text: Vec<&str> =
                params["prompt"].as_array().into_iter().flatten().filter_map(|b| b["text"].as_str()).collect();
            (format!("[{seq}] prompt: {}", text.join(" ")), false)
        }
        (Some("session/request_permission"), _) => {
            let title = params["toolCall"]["title"].as_str().unwrap_or("");
            (format!("[{seq}] asks permission: {title}"), false)
        }
        (Some(method), _) => (format!("[{seq}] {method}"), false),
        (None, _) => match message["result"]["stopReason"].as_str() {
            Some(reason) => (format!("[{seq}] turn ended: {reason}"), false),
            None => match message["error"]["message"].as_str() {
                Some(error) => (format!("[{seq}] error: {error}"), false),
                None => (format!("[{seq}] answer"), false),
            },
        },
    }
}
