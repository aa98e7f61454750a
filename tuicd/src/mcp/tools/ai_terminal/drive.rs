//! The writing tools: `send_input`, `send_key`, `drive_agent`. Each asks the person first and is
//! refused while an agent loop drives the session.

use std::time::Instant;

use bytes::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::common::{TYPE_INSTEAD, claim, confirmed, pattern, shown_whole, target};
use super::observe::{lines_param, screen_answer, wait_budget, watch};
use crate::agent_runtime::AgentLink;
use crate::agent_runtime::submit::{SubmitError, submit};
use crate::agent_runtime::wait::{FirstTurn, wait_settled};
use crate::limits::{
    AI_TERMINAL_DRIVE_DEFAULT_MS, AI_TERMINAL_DRIVE_LINES_DEFAULT, AI_TERMINAL_INPUT_MAX_BYTES, AI_TERMINAL_PROMPT_POLL,
};
use crate::mcp::tools::session::agent::{inject, prefill_only};
use crate::mcp::tools::session::keys::bytes_for;
use crate::mcp::tools::session::session_error;
use crate::mcp::tools::{CallContext, ToolError};
use crate::session::{Session, WaitFor, WaitOutcome};

fn input_text(name: &str, text: &str) -> Result<(), ToolError> {
    if text.trim().is_empty() {
        return Err(ToolError::new(format!("{name}: must not be empty")));
    }
    if text.len() > AI_TERMINAL_INPUT_MAX_BYTES {
        return Err(ToolError::new(format!(
            "{name}: {} bytes is over the limit of {AI_TERMINAL_INPUT_MAX_BYTES}",
            text.len()
        )));
    }
    Ok(())
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SendInput {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
    /// The command; Enter is pressed after it.
    text: String,
}

pub(super) async fn send_input(ctx: &CallContext, p: SendInput) -> Result<Value, ToolError> {
    const TOOL: &str = "ai_terminal_send_input";
    input_text("text", &p.text)?;
    let session = target(ctx, &p.session_id)?;
    let what = format!("Type into {} and press Enter:\n{}", session.alias, shown_whole("text", &p.text, TYPE_INSTEAD)?);
    confirmed(ctx, TOOL, &session, what).await?;
    let _lease = claim(ctx, TOOL, &session)?;
    type_line(&session, &p.text).await?;
    Ok(json!({"ok": true, "bytes": p.text.len() + 1}))
}

/// The text and Enter: framed for an agent whose composer needs it, else one raw write.
async fn type_line(session: &std::sync::Arc<Session>, text: &str) -> Result<(), ToolError> {
    if prefill_only(session) {
        return inject(session, text).await;
    }
    session.write(Bytes::from(format!("{text}\r"))).await.map_err(session_error)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SendKey {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
    /// enter, tab, escape, up, down, left, right, ctrl+c, ctrl+d, backspace, ...
    key: String,
}

pub(super) async fn send_key(ctx: &CallContext, p: SendKey) -> Result<Value, ToolError> {
    const TOOL: &str = "ai_terminal_send_key";
    let bytes = bytes_for(&p.key).map_err(|e| ToolError::new(e.replacen("special_key", "key", 1)))?;
    let session = target(ctx, &p.session_id)?;
    confirmed(ctx, TOOL, &session, format!("Press {} in {}", p.key, session.alias)).await?;
    let _lease = claim(ctx, TOOL, &session)?;
    session.write(Bytes::from_static(bytes.as_bytes())).await.map_err(session_error)?;
    Ok(json!({"ok": true, "key": p.key.to_ascii_lowercase()}))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DriveAgent {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
    /// Sent first (to an agent as one submit); without it, only waits and reads.
    command: Option<String>,
    /// Default 30000; at most 300000 (runs as 295000).
    timeout_ms: Option<u64>,
    /// A regex that ends the wait instead of idle.
    wait_pattern: Option<String>,
    /// Lines to return (default 80, at most 500).
    lines: Option<usize>,
    /// A previous answer's cursor: only the lines after it.
    since_cursor: Option<u64>,
}

#[derive(Debug, Serialize)]
struct Driven {
    /// `idle`, `matched`, `exited` or `timeout`.
    reason: &'static str,
    screen: String,
    cursor: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    shell_state: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_state: Option<Value>,
    elapsed_ms: u64,
}

pub(super) async fn drive_agent(ctx: &CallContext, p: DriveAgent) -> Result<Value, ToolError> {
    const TOOL: &str = "ai_terminal_drive_agent";
    let lines = lines_param(p.lines, AI_TERMINAL_DRIVE_LINES_DEFAULT)?;
    let regex = p.wait_pattern.as_deref().map(|s| pattern("wait_pattern", s)).transpose()?;
    if let Some(command) = &p.command {
        input_text("command", command)?;
    }
    let session = target(ctx, &p.session_id)?;
    if let Some(command) = &p.command {
        let shown = shown_whole("command", command, TYPE_INSTEAD)?;
        let what = format!("Drive {}: send and wait for the turn:\n{shown}", session.alias);
        confirmed(ctx, TOOL, &session, what).await?;
    }
    let _lease = claim(ctx, TOOL, &session)?;
    let started = Instant::now();
    let deadline = started + wait_budget(p.timeout_ms, AI_TERMINAL_DRIVE_DEFAULT_MS);
    let is_agent = AgentLink::of(&session).and_then(AgentLink::adapter).is_some();
    let before = session.total_written();
    if let Some(command) = &p.command {
        if is_agent {
            submit(&session, command, None).await.map_err(|e| match e {
                SubmitError::Invalid(message) => ToolError::new(message),
                SubmitError::Refused(receipt) => ToolError::new(format!(
                    "{TOOL} refused before writing: {}",
                    receipt.reason.as_deref().unwrap_or("the agent is not ready for input")
                )),
            })?;
        } else {
            type_line(&session, command).await?;
        }
    }
    let reason = match &regex {
        Some(regex) => watch(&session, Some(regex), std::time::Duration::ZERO, deadline).await.0,
        None if is_agent => {
            outcome(wait_settled(&session, deadline.saturating_duration_since(Instant::now()), FirstTurn::Await).await)
        }
        None => {
            // A shell reads idle until the echo arrives: wait for output first, then for idle.
            if p.command.is_some() {
                let mut screen = session.screen_progress();
                let _ = tokio::time::timeout_at(deadline.into(), screen.wait_for(|c| *c > before)).await;
            }
            prompt_back(&session, deadline).await
        }
    };
    let reason = if session.exit_info().is_some() { "exited" } else { reason };
    let read = screen_answer(&session, lines, p.since_cursor);
    let driven = Driven {
        reason,
        screen: read.screen,
        cursor: read.cursor,
        shell_state: read.shell_state,
        session_state: session.attached_status().and_then(|s| serde_json::to_value(s).ok()),
        elapsed_ms: started.elapsed().as_millis() as u64,
    };
    crate::mcp::tools::to_value(&driven)
}

/// A plain shell's turn ends when its prompt is back: the session reads idle (shell integration
/// marks when the shell emits them, else silence) and the terminal's foreground process group is
/// the shell's own again. Silence alone is not enough: `sleep 3; echo done` is silent for 3 s while
/// `sleep` holds the foreground.
async fn prompt_back(session: &Session, deadline: Instant) -> &'static str {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if let WaitOutcome::TimedOut = session.wait(WaitFor::Idle, left).await {
            return "timeout";
        }
        if shell_in_foreground(session) != Some(false) || session.exit_info().is_some() {
            return "idle";
        }
        // A command holds the terminal without printing: look again soon, or when output comes.
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return "timeout";
        }
        let mut screen = session.screen_progress();
        let _ = tokio::time::timeout(left.min(AI_TERMINAL_PROMPT_POLL), screen.changed()).await;
    }
}

/// Whether the shell (the session's child) is its terminal's foreground process group, the
/// `tcgetpgrp` of its PTY as `/proc/<pid>/stat` shows it (`tpgid` against the shell's `pgrp`).
/// None when that cannot be read (not Linux, no controlling terminal): the wait is idle alone.
fn shell_in_foreground(session: &Session) -> Option<bool> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", session.pid?)).ok()?;
    // `pid (comm) state ppid pgrp session tty_nr tpgid ...`; comm may hold spaces and parentheses.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let pgrp: i64 = fields.get(2)?.parse().ok()?;
    let tpgid: i64 = fields.get(5)?.parse().ok()?;
    (tpgid > 0).then_some(tpgid == pgrp)
}

fn outcome(waited: WaitOutcome) -> &'static str {
    match waited {
        WaitOutcome::Reached => "idle",
        WaitOutcome::TimedOut => "timeout",
    }
}
