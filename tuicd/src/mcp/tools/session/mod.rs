//! The `session` tool: every PTY the daemon owns, for agents. Each action's parameters are a
//! struct in [`params`]; reads run inline, process spawns and signals on the blocking pool, waits
//! on their own async handler.

mod actions;
mod keys;
mod params;
mod status;
mod wait;

use serde_json::{Map, Value};

use super::schema::{self, ActionSchema};
use super::{Answer, CallContext, ToolDef, ToolError, ToolFuture, params as parse, take_action};
use crate::session::SessionError;

pub const NAME: &str = "session";

pub const SESSION_ACTIONS: &[&str] = &[
    "list",
    "create",
    "input",
    "submit",
    "output",
    "status",
    "wait",
    "resize",
    "close",
    "kill",
    "pause",
    "resume",
    "process_stats",
];

/// Actions refused to remote (non-loopback) callers: they start, drive or stop processes.
const LOOPBACK_ONLY: &[&str] = &["create", "input", "submit", "kill", "close", "pause", "resume"];

pub const DESCRIPTION: &str = "PTY sessions owned by tuicd: list, start, type into, read, wait on and stop terminals. \
Every session_id parameter accepts the PTY session_id, the tuic_session UUID or the alias (tu-1).

Actions:
- list: every live session with session_id, tuic_session, is_caller (true for the PTY this MCP client runs in; never close it), alias, display_name, cwd, shell_state (busy|idle, omitted before the first output), agent_type, agent_state (starting|working|awaiting_input|idle|completed, detected agents only), background_work (only when true), pty_description. One call, no per-session fan-out.
- create: start a terminal (rows, cols, shell, args, cwd, display_name). Returns {session_id, tuic_session, alias}. Loopback only.
- input: write input text and/or a special_key (enter, tab, escape, up, ctrl+c, ...) in one write; no Enter is added to text. Text + enter to a prefill-only agent (codex, opencode) is written as the framed injection (Ctrl-U, paste, gap, Enter). Optional pty_description sets the short task description shown for the PTY (empty or null clears it). Returns {ok:true}: proof of the PTY write only. Loopback only.
- submit: the managed-agent command surface: submit input (a prompt or command; no Enter needed) to a confirmed-idle agent with an empty composer, as one atomic framed write (Ctrl-U, bracketed paste when multiline, a 50 ms gap, Enter), then wait up to timeout_ms (default 3000, clamped 250..10000) for terminal output after Enter. Never queues. Returns {submission_id, submitted, write_state (not_written|complete|uncertain), acknowledged (output moved after Enter; not task success), retry_safe (true only when no byte was written), turn_epoch, composer_state (cleared|partial|empty|unknown), acknowledgement?, reason?}. A busy, unconfirmed or questioning agent, or a non-empty composer, is refused before the first byte (an error carrying the receipt with its reason). Optional pty_description as for input. Loopback only.
- output: read output. Default format text strips ANSI; format=raw keeps escape sequences. limit is the most bytes returned (default 8192). Every response carries cursor; pass it back as since_cursor to get only what came after (text cursors count log lines, raw cursors count bytes). Works on exited sessions while their output is retained.
- status: one session's state: shell_state, agent_state, background_work, exited, exit_code, paused, size, cwd, pid, cursors, and state (the agent engine's view: awaiting_input, question_text, choice_prompt, idle_confirmed, turn_epoch, agent_intent, suggested_actions, composer_state, ...).
- wait: block until=idle (default; for a detected agent a confirmed idle: a marker or a stable ready prompt, or an open question; otherwise output quiet; or exited) or until=exited. timeout_ms default 60000; at or above 300000 it runs as 295000. Returns {met, timed_out, until, timeout_ms, shell_state?, exit_code?}. Prefer it over polling.
- resize: set rows and cols (1..=500).
- close: end a session (its child gets SIGHUP, then SIGKILL). Refuses the caller's own session. Idempotent. Loopback only.
- kill: end a session at once. Loopback only.
- pause: stop reading the session's output (the child blocks when the PTY fills). Loopback only.
- resume: read its output again. Loopback only.
- process_stats: CPU% and RSS of tuicd and of each session's process tree.";

pub static TOOL: ToolDef =
    ToolDef { name: NAME, actions: SESSION_ACTIONS, description: DESCRIPTION, input_schema, call };

fn input_schema() -> Value {
    let per_action: Vec<ActionSchema> = vec![
        schema::action::<params::List>("list"),
        schema::action::<params::Create>("create"),
        schema::action::<params::Input>("input"),
        schema::action::<crate::agentwire::submit::SubmitParams>("submit"),
        schema::action::<params::Output>("output"),
        schema::action::<params::Target>("status"),
        schema::action::<params::Wait>("wait"),
        schema::action::<params::Resize>("resize"),
        schema::action::<params::Target>("close"),
        schema::action::<params::Target>("kill"),
        schema::action::<params::Target>("pause"),
        schema::action::<params::Target>("resume"),
        schema::action::<params::List>("process_stats"),
    ];
    schema::merge(SESSION_ACTIONS, &per_action)
}

fn call(ctx: CallContext, mut args: Map<String, Value>) -> ToolFuture {
    Box::pin(async move {
        let action = take_action(NAME, SESSION_ACTIONS, &mut args)?;
        let action = action.as_str();
        if LOOPBACK_ONLY.contains(&action) {
            ctx.require_loopback(NAME, action)?;
        }
        if action == "status" {
            return status::status(&ctx, parse(NAME, action, args)?).map(Answer::Escaped);
        }
        let answer = match action {
            "list" => parse::<params::List>(NAME, action, args).map(|_| actions::list(&ctx)),
            "create" => actions::create(&ctx, parse(NAME, action, args)?).await,
            "input" => actions::input(&ctx, parse(NAME, action, args)?).await,
            "submit" => crate::agentwire::tools::submit(&ctx, parse(NAME, action, args)?).await,
            "output" => actions::output(&ctx, parse(NAME, action, args)?),
            "wait" => wait::wait(&ctx, parse(NAME, action, args)?).await,
            "resize" => actions::resize(&ctx, parse(NAME, action, args)?),
            "close" => actions::close(&ctx, parse(NAME, action, args)?, false).await,
            "kill" => actions::close(&ctx, parse(NAME, action, args)?, true).await,
            "pause" => actions::pause(&ctx, parse(NAME, action, args)?, true),
            "resume" => actions::pause(&ctx, parse(NAME, action, args)?, false),
            _ => {
                parse::<params::List>(NAME, action, args)?;
                actions::process_stats(&ctx).await
            }
        };
        answer.map(Answer::Value)
    })
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
