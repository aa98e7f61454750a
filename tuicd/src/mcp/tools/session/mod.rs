//! The `session` tool: every PTY the daemon owns, for agents. Each action is declared once in
//! [`TOOL`], its parameters a struct in [`params`]; reads run inline, process spawns and signals
//! on the blocking pool, waits on their own async handler.

mod acp;
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

pub(crate) const DESCRIPTION: &str = "Terminals (PTY sessions) owned by tuicd. \
Actions that start, write to or stop processes are loopback only.

- list: every open session; is_caller marks yours (never end it).
- create: a shell or program in a new terminal.
- input: types text and/or a special key (enter, ctrl+c...) into the terminal in one raw write; no Enter added (framed for codex, opencode). Proves the write only.
- submit: sends a prompt or command to an agent's terminal and presses Enter in one framed write, then waits for output (not task success). Refused before any byte, with the reason, unless the agent is confirmed idle with an empty composer. Never queues.
- output: what the terminal printed: text (cursors count lines) or raw (cursors count bytes); since_cursor for only what is new, also after exit.
- status: its state and its agent's (waiting on a question, idle confirmation, turn, composer).
- wait: waits until idle or exit; prefer it to polling. An agent's idle is confirmed, not mere quiet.
- resize: sets the terminal size in rows and cols.
- close: SIGHUP, then SIGKILL; refuses your own session; idempotent.
- kill: ends it at once.
- pause: stops reading its output.
- resume: reads it again.
- process_stats: CPU% and RSS of tuicd and each session.";

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
