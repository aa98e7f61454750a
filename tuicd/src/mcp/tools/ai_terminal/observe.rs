//! The reading tools: `read_screen`, `get_state`, `get_context`, `wait_for`. None writes.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{git_branch, pattern, read_lines, sandbox_root, target};
use crate::limits::{
    AI_TERMINAL_LINES_DEFAULT, AI_TERMINAL_LINES_MAX, AI_TERMINAL_STABILITY_DEFAULT_MS, AI_TERMINAL_TEXT_MAX_BYTES,
    AI_TERMINAL_WAIT_DEFAULT_MS, SESSION_WAIT_RUN_MAX_MS,
};
use crate::mcp::tools::{CallContext, ToolError, to_value};
use crate::safety::redact::redact;
use crate::session::Session;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadScreen {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
    /// Lines to return (default 50, at most 500).
    lines: Option<usize>,
    /// A previous answer's cursor: only the lines after it.
    since_cursor: Option<u64>,
}

#[derive(Debug, Serialize)]
pub(super) struct ScreenAnswer {
    pub screen: String,
    pub cursor: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell_state: Option<Value>,
    pub awaiting_input: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_intent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
}

pub(super) fn lines_param(lines: Option<usize>, default: usize) -> Result<usize, ToolError> {
    match lines.unwrap_or(default) {
        0 => Err(ToolError::new(format!("lines: must be between 1 and {AI_TERMINAL_LINES_MAX}"))),
        n if n > AI_TERMINAL_LINES_MAX => {
            Err(ToolError::new(format!("lines: {n} is over the maximum of {AI_TERMINAL_LINES_MAX}")))
        }
        n => Ok(n),
    }
}

pub(super) fn screen_answer(session: &Session, lines: usize, since_cursor: Option<u64>) -> ScreenAnswer {
    let (screen, cursor) = read_lines(session, lines, since_cursor);
    let status = session.attached_status();
    ScreenAnswer {
        screen,
        cursor,
        shell_state: session.shell_state().and_then(|s| serde_json::to_value(s).ok()),
        awaiting_input: status.as_ref().is_some_and(|s| s.awaiting_input),
        agent_intent: status.as_ref().and_then(|s| s.agent_intent.clone()),
        agent_type: session.agent_type.clone(),
    }
}

pub(super) fn read_screen(ctx: &CallContext, p: ReadScreen) -> Result<ScreenAnswer, ToolError> {
    let lines = lines_param(p.lines, AI_TERMINAL_LINES_DEFAULT)?;
    let session = target(ctx, &p.session_id)?;
    Ok(screen_answer(&session, lines, p.since_cursor))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Target {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
}

fn terminal_mode(session: &Session) -> &'static str {
    if session.alternate_screen() { "alternate_screen" } else { "normal" }
}

pub(super) fn get_state(ctx: &CallContext, p: Target) -> Result<Value, ToolError> {
    let session = target(ctx, &p.session_id)?;
    let mut state = to_value(&session.info())?;
    state["terminal_mode"] = Value::from(terminal_mode(&session));
    Ok(state)
}

#[derive(Debug, Serialize)]
pub(super) struct Context {
    session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    shell_state: Option<Value>,
    cwd: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    git_branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_type: Option<String>,
    terminal_mode: &'static str,
}

pub(super) fn get_context(ctx: &CallContext, p: Target) -> Result<Context, ToolError> {
    let session = target(ctx, &p.session_id)?;
    Ok(Context {
        session_id: session.id.clone(),
        shell_state: session.shell_state().and_then(|s| serde_json::to_value(s).ok()),
        cwd: session.cwd.display().to_string(),
        git_branch: sandbox_root(&session).ok().and_then(|root| git_branch(&root)),
        last_exit_code: session.attached_status().and_then(|s| s.last_exit_code),
        agent_type: session.agent_type.clone(),
        terminal_mode: terminal_mode(&session),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitFor {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
    /// A regex to wait for on the screen; without it, waits for the screen to stop changing.
    pattern: Option<String>,
    /// Default 10000; at most 300000 (runs as 295000).
    timeout_ms: Option<u64>,
    /// How long the screen must stay unchanged (default 500).
    stability_ms: Option<u64>,
}

#[derive(Debug, Serialize)]
struct WaitAnswer {
    /// `matched`, `stable`, `exited` or `timeout`.
    reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    matched: Option<String>,
    screen: String,
    cursor: u64,
    elapsed_ms: u64,
}

pub(super) fn wait_budget(timeout_ms: Option<u64>, default: u64) -> Duration {
    Duration::from_millis(timeout_ms.unwrap_or(default).min(SESSION_WAIT_RUN_MAX_MS))
}

pub(super) async fn wait_for(ctx: &CallContext, p: WaitFor) -> Result<Value, ToolError> {
    let regex = p.pattern.as_deref().map(|s| pattern("pattern", s)).transpose()?;
    let session = target(ctx, &p.session_id)?;
    let timeout = wait_budget(p.timeout_ms, AI_TERMINAL_WAIT_DEFAULT_MS);
    let stability = Duration::from_millis(p.stability_ms.unwrap_or(AI_TERMINAL_STABILITY_DEFAULT_MS));
    let started = Instant::now();
    let (reason, matched) = watch(&session, regex.as_ref(), stability, started + timeout).await;
    let (screen, cursor) = read_lines(&session, AI_TERMINAL_LINES_DEFAULT, None);
    to_value(&WaitAnswer { reason, matched, screen, cursor, elapsed_ms: started.elapsed().as_millis() as u64 })
}

/// Waits for `regex` on the recent text (or, without one, for `stability` without output), the
/// exit, or `deadline`. Wakes when the screen model moves on, never on a polling tick.
pub(super) async fn watch(
    session: &Session,
    regex: Option<&regex::Regex>,
    stability: Duration,
    deadline: Instant,
) -> (&'static str, Option<String>) {
    let mut screen = session.screen_progress();
    let mut last_total = *screen.borrow_and_update();
    let mut quiet_since = Instant::now();
    loop {
        if let Some(regex) = regex {
            // Matched against the redacted text only: a pattern that would match inside a secret
            // never matches, so neither the answer nor its timing tells the secret apart.
            let text = session.text_within(None, AI_TERMINAL_TEXT_MAX_BYTES).data;
            if let Some(found) = regex.find(&redact(&text)) {
                return ("matched", Some(found.as_str().to_owned()));
            }
        }
        if session.exit_info().is_some() {
            return ("exited", None);
        }
        let now = Instant::now();
        let total = *screen.borrow_and_update();
        if total != last_total {
            last_total = total;
            quiet_since = now;
        }
        if regex.is_none() && now >= quiet_since + stability {
            return ("stable", None);
        }
        if now >= deadline {
            return ("timeout", None);
        }
        let wake = if regex.is_none() { (quiet_since + stability).min(deadline) } else { deadline };
        tokio::select! {
            () = tokio::time::sleep_until(wake.into()) => {}
            _ = screen.changed() => {}
            () = session.finished() => {}
        }
    }
}
