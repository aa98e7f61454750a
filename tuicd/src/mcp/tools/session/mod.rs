//! The `session` tool: every PTY the daemon owns, for agents. Each action is declared once in
//! [`TOOL`], its parameters a struct in [`params`]; reads run inline, process spawns and signals
//! on the blocking pool, waits on their own async handler.

mod actions;
pub(crate) mod agent;
pub(crate) mod keys;
mod params;
mod status;
mod wait;

use super::action::action;
use super::{Answer, CallContext, ToolDef, ToolError};
use crate::agent_runtime::submit::SubmitParams;
use crate::session::SessionError;
use params::{Create, Input, List, Output, Resize, Target, Wait};

pub(crate) const NAME: &str = "session";

pub(crate) const DESCRIPTION: &str = "PTY sessions owned by tuicd: list, start, type into, read, wait on and stop terminals. \
A session reference is the PTY session_id, the tuic_session UUID or the alias (tu-1). \
Actions that start, drive or stop processes are loopback only.

- list: live sessions in one call; is_caller marks the PTY this client runs in (never close it).
- input: text and a special key in one raw write; no Enter is added. Text plus enter to a prefill-only agent (codex, opencode) goes in framed (Ctrl-U, paste, gap, Enter). It proves the write only.
- submit: the managed-agent command surface: one atomic framed write to a confirmed-idle agent with an empty composer, then a wait for output after Enter (an acknowledgement, not task success). A busy, unconfirmed or questioning agent or a non-empty composer is refused before the first byte, with the receipt and its reason. Never queues.
- output: text strips ANSI and its cursors count log lines; raw keeps escapes and counts bytes. Pass the answer's cursor back as since_cursor for only what came after. Works on exited sessions while their output is retained.
- status: one session's state, including the agent engine's view (question, idle confirmation, turn, suggested actions, composer).
- wait: prefer it over polling. until=idle for a detected agent is a confirmed idle (a marker, a stable ready prompt, or an open question), not silence alone; otherwise quiet output or exit.
- close: SIGHUP, then SIGKILL; refuses the caller's own session; idempotent.
- kill: ends a session at once.
- pause: stops reading its output (the child blocks when the PTY fills).
- process_stats: CPU% and RSS of tuicd and each session's process tree.";

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    description: DESCRIPTION,
    takes_action: true,
    actions: &[
        action!(NAME, "list", List => sync list, loopback: false, blocks: false),
        action!(NAME, "create", Create => async actions::create, loopback: true, blocks: true),
        action!(NAME, "input", Input => async actions::input, loopback: true, blocks: false),
        action!(NAME, "submit", SubmitParams => async agent::submit, loopback: true, blocks: true),
        action!(NAME, "output", Output => sync actions::output, loopback: false, blocks: false),
        action!(NAME, "status", Target => sync status, loopback: false, blocks: false),
        action!(NAME, "wait", Wait => async wait::wait, loopback: false, blocks: true),
        action!(NAME, "resize", Resize => sync actions::resize, loopback: false, blocks: false),
        action!(NAME, "close", Target => async close, loopback: true, blocks: true),
        action!(NAME, "kill", Target => async kill, loopback: true, blocks: true),
        action!(NAME, "pause", Target => sync pause, loopback: true, blocks: false),
        action!(NAME, "resume", Target => sync resume, loopback: true, blocks: false),
        action!(NAME, "process_stats", List => async process_stats, loopback: false, blocks: true),
    ],
};

fn list(ctx: &CallContext, _: List) -> Result<serde_json::Value, ToolError> {
    Ok(actions::list(ctx))
}

fn status(ctx: &CallContext, p: Target) -> Result<Answer, ToolError> {
    status::status(ctx, p).map(Answer::Escaped)
}

async fn close(ctx: &CallContext, p: Target) -> Result<serde_json::Value, ToolError> {
    actions::close(ctx, p, false).await
}

async fn kill(ctx: &CallContext, p: Target) -> Result<serde_json::Value, ToolError> {
    actions::close(ctx, p, true).await
}

fn pause(ctx: &CallContext, p: Target) -> Result<serde_json::Value, ToolError> {
    actions::pause(ctx, p, true)
}

fn resume(ctx: &CallContext, p: Target) -> Result<serde_json::Value, ToolError> {
    actions::pause(ctx, p, false)
}

async fn process_stats(ctx: &CallContext, _: List) -> Result<serde_json::Value, ToolError> {
    actions::process_stats(ctx).await
}

/// A session error as a tool error; an unknown reference says which names were tried.
pub(crate) fn session_error(error: SessionError) -> ToolError {
    match error {
        SessionError::NotFound(reference) => ToolError::new(format!(
            "Unknown session \"{reference}\" (tried PTY session_id, tuic_session and alias; see session action=list)"
        ))
        .with("reason", "session_not_found_or_reaped"),
        other => ToolError::new(other.to_string()),
    }
}
