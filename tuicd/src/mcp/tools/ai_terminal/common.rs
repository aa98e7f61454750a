//! What every `ai_terminal_*` tool shares: the target session, the person's confirmation for a
//! write, the agent-loop rule, and reading the screen through secret redaction.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use regex::{Regex, RegexBuilder};

use crate::agent_runtime::loops::DriveLease;
use crate::limits::{AI_TERMINAL_CONFIRM_MAX_BYTES, AI_TERMINAL_REGEX_SIZE, AI_TERMINAL_TEXT_MAX_BYTES};
use crate::mcp::tools::session::session_error;
use crate::mcp::tools::{CallContext, ToolError};
use crate::safety::redact::redact;
use crate::safety::visible::confirmation_block;
use crate::session::Session;
use crate::ui::ConfirmRequest;

/// The live session `reference` names (PTY id, tuic_session or alias).
pub(super) fn target(ctx: &CallContext, reference: &str) -> Result<Arc<Session>, ToolError> {
    ctx.app.sessions.resolve_live(reference).map_err(session_error)
}

/// Refuses while an agent loop drives `session`, then asks the person; `Ok` only when confirmed.
pub(super) async fn confirmed(ctx: &CallContext, tool: &str, session: &Session, what: String) -> Result<(), ToolError> {
    refuse_while_driven(ctx, tool, session)?;
    let request = ConfirmRequest {
        title: format!("{tool} on {}", session.alias),
        message: what,
        requester: requester(ctx),
        kind: "ai_terminal",
    };
    let outcome = ctx.app.ui.confirm(request).await;
    if outcome.confirmed() {
        return Ok(());
    }
    let reason = outcome.reason().unwrap_or("not confirmed");
    Err(ToolError::new(format!("{tool} refused: {reason}; nothing was done"))
        .with("confirmed", false)
        .with("reason", reason))
}

fn refuse_while_driven(ctx: &CallContext, tool: &str, session: &Session) -> Result<(), ToolError> {
    if ctx.app.agents.loops.is_driving(&session.id) {
        return Err(ToolError::new(format!(
            "{tool} refused: an agent loop (ai_terminal_drive_agent) is driving {} now; nothing was done",
            session.alias
        )));
    }
    Ok(())
}

/// Claims `session` for a drive loop, refusing when another loop already drives it.
pub(super) fn claim(ctx: &CallContext, tool: &str, session: &Session) -> Result<DriveLease, ToolError> {
    ctx.app.agents.loops.claim(&session.id).ok_or_else(|| {
        ToolError::new(format!(
            "{tool} refused: an agent loop (ai_terminal_drive_agent) is driving {} now; nothing was done",
            session.alias
        ))
    })
}

/// Who asks, in the words the confirmation shows a person.
fn requester(ctx: &CallContext) -> String {
    let via = if ctx.caller.is_loopback() { "this machine" } else { "a remote connection" };
    match &ctx.tuic_session {
        Some(identity) => match ctx.app.sessions.resolve(identity) {
            Ok(own) => {
                format!("the agent in {} ({}) on {via}", own.alias, own.agent_type.as_deref().unwrap_or("shell"))
            }
            Err(_) => format!("MCP client {identity} on {via}"),
        },
        None => format!("an MCP client on {via}"),
    }
}

/// What a command over the confirmation bound can do instead (`run_command`).
pub(super) const RUN_INSTEAD: &str =
    "Write the commands to a script with ai_terminal_write_file in parts, then ask to run that script instead.";
/// What typed text over the confirmation bound can do instead (`send_input`, `drive_agent`).
pub(super) const TYPE_INSTEAD: &str =
    "Write the text to a file with ai_terminal_write_file and type a short command that reads it instead.";

/// `text` for a confirmation: whole, with its size, its long whitespace runs counted and its
/// control characters escaped ([`confirmation_block`]). Over
/// [`AI_TERMINAL_CONFIRM_MAX_BYTES`] it is refused before anyone is asked, with `instead` (what
/// the agent can do) in the error.
pub(super) fn shown_whole(field: &str, text: &str, instead: &str) -> Result<String, ToolError> {
    if text.len() > AI_TERMINAL_CONFIRM_MAX_BYTES {
        return Err(ToolError::new(format!(
            "{field}: {} bytes is over the {AI_TERMINAL_CONFIRM_MAX_BYTES} bytes a person can read whole in a \
             confirmation; nothing was asked or done. {instead}",
            text.len()
        ))
        .with("limit_bytes", AI_TERMINAL_CONFIRM_MAX_BYTES));
    }
    Ok(confirmation_block(text))
}

/// The screen as an outside agent reads it: the last `lines` lines (tail), or the log lines after
/// `since_cursor` (at most `lines`), redacted; and the cursor to pass next.
/// A full-screen program (an agent's TUI, vim) redraws the alternate screen instead of scrolling
/// lines into the log, so a delta there would always be empty: it answers the screen instead.
pub(super) fn read_lines(session: &Session, lines: usize, since_cursor: Option<u64>) -> (String, u64) {
    let since_cursor = since_cursor.filter(|_| !session.alternate_screen());
    let read = session.text_within(since_cursor, AI_TERMINAL_TEXT_MAX_BYTES);
    // Redacted whole before the lines are cut, so a private key block whose BEGIN line falls
    // above the lines kept is still known as one; redaction keeps every line break, so the
    // line count (and the cursor it gives) is the same.
    let data = redact(&read.data);
    let all: Vec<&str> = if data.is_empty() { Vec::new() } else { data.split('\n').collect() };
    let (kept, cursor) = match since_cursor {
        // A delta keeps the oldest lines so the cursor never skips one.
        Some(_) if all.len() > lines => (&all[..lines], read.cursor - (all.len() - lines) as u64),
        Some(_) => (&all[..], read.cursor),
        None => (&all[all.len().saturating_sub(lines)..], read.cursor),
    };
    (kept.join("\n"), cursor)
}

/// A caller's regex, compiled with a bounded size; the error names the parameter.
pub(super) fn pattern(name: &str, source: &str) -> Result<Regex, ToolError> {
    RegexBuilder::new(source)
        .size_limit(AI_TERMINAL_REGEX_SIZE)
        .build()
        .map_err(|e| ToolError::new(format!("{name}: not a valid regular expression: {e}")))
}

/// The repository the session works in: the one it carries (the nearest ancestor of its cwd with
/// `.git`). Everything the file and command tools touch stays inside it; a session outside any
/// repository has no sandbox (its cwd could be `/`), so those tools refuse it.
pub(super) fn sandbox_root(session: &Session) -> Result<PathBuf, ToolError> {
    session.repo.clone().ok_or_else(|| {
        ToolError::new(format!(
            "{} works in {}, which is inside no git repository: the file and command tools are confined to the session's repository",
            session.alias,
            session.cwd.display()
        ))
    })
}

/// The branch in the work tree's `HEAD` file (no subprocess, no index lock); a detached HEAD
/// answers its short commit.
pub(super) fn git_branch(root: &Path) -> Option<String> {
    let head = std::fs::read_to_string(crate::repos::head::git_dir(root)?.join("HEAD")).ok()?;
    Some(crate::repos::head::branch_of_head(&head).unwrap_or_else(|| head.trim().chars().take(12).collect()))
}
