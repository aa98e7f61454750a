//! The `agent` tool: spawn agent CLIs in new sessions, see which are installed and what they do,
//! and the peer-messaging actions (register, list_peers, send, inbox, wait; see [`crate::peers`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::spawn::{self, Spawn};
use crate::mcp::tools::schema::{self, ActionSchema};
use crate::mcp::tools::{
    CallContext, ToolDef, ToolError, ToolFuture, boxed, params as parse, run_blocking, take_action, to_value,
};
use crate::peers::actions::{self as peer, Inbox, ListPeers, Register, Send, Wait};

pub const NAME: &str = "agent";

pub const AGENT_ACTIONS: &[&str] =
    &["spawn", "detect", "stats", "metrics", "register", "list_peers", "send", "inbox", "wait"];

/// Actions refused to remote (non-loopback) callers: spawning, and all of messaging (a foreign
/// caller must never reach another agent's identity or mail).
const LOOPBACK_ONLY: &[&str] = &["spawn", "register", "list_peers", "send", "inbox", "wait"];

pub const DESCRIPTION: &str = "AI coding agents in tuicd terminals.

Actions:
- spawn: start an agent CLI in a new PTY session with its prompt always delivered: an argument containing {prompt} receives it by substitution; otherwise normal CLIs get it as the final positional argument and prefill-only TUIs (codex, opencode) get it typed in (framed submit) once their ready prompt is confirmed idle; a prompt not delivered within 30 s is reported (agent-prompt-undelivered on /events). Params: prompt (required), agent_type and/or binary_path, args, model, cwd, name, pty_description (omitted: derived from the prompt, 160 chars; null or \"\": none), progress_tracking (false: this agent's progress calls answer progress_tracking_disabled), rows, cols. Returns {session_id, task_id, poll_interval_ms, name, tuic_session, alias, prompt_delivery (argv|deferred), agent_type?, pty_description?, parent_session_id?, communication_warning?, launch_warning?}. Every child gets a peer identity and inbox at once; when the caller is registered the child's prompt names it as parent (parent_session_id) and the child's idle/completed/exited transitions arrive in the caller's inbox as state_change mail. Poll task_id with task action=get. Loopback only.
- detect: installed agent CLIs on the daemon's PATH: [{agent_type, name, path}] (the same list as GET /agents/detect).
- stats: live sessions running a detected agent, counted by agent_type and by agent_state.
- metrics: counters since start: spawned, spawn_failures, submits, submits_refused, submits_acknowledged, deferred_prompts_delivered, deferred_prompts_undelivered, progress_recorded.
- register: optional rename / project / role for this MCP session's peer identity (a bridge inside a tuic terminal is bound to its $TUIC_SESSION at initialize; others get a stable generated UUID). Params: tuic_session, name, project, orchestrator (true declares, false removes), replaces (an old identity whose unread mail moves here). Returns {ok, tuic_session, name, identity_generated, terminal, orchestrator, mail_wake (managed_pty_lifecycle|none), linked_children, superseded_identity?, mail_migrated?, mail_stranded?, identity_warning?}. Loopback only.
- list_peers: registered peers, oldest first, optionally filtered by project: {peers:[{tuic_session, name, orchestrator, project?, alias?, session_id?}]} (alias and session_id when the peer owns a live terminal; any of the three is a valid send address). Loopback only.
- send: to (tuic_session, PTY session_id or alias), message (<= 64 KB). The inbox always keeps it; delivery_path says what else carried it: waiter_and_inbox, sse_channel_and_inbox (pushed into a working Claude Code turn), terminal_or_queued_and_inbox (typed into an idle agent's terminal, or on its next busy-to-idle edge), wake_notification_and_inbox / coalesced_wake_and_inbox / lifecycle_summary_and_inbox (orchestrators: a payload-free notice), inbox_only. Returns {ok, accepted, message_id, buffered_in_inbox, delivered, delivery_path, recipient_has_terminal, recipient_state?, warning?}. Loopback only.
- inbox: your messages after since (omitted: your stored read position; 0 replays all without rewinding it), limit (default 50): {messages:[{id, from_tuic_session, from_name, content, timestamp}], count, next_since, missed_count?}. Reading acknowledges. Loopback only.
- wait: block until new mail (prefer over polling inbox): since as for inbox, timeout_ms (default 60000; 300000 and above run 295000). Returns {met, timed_out, new_messages, messages, next_since}. Loopback only.";

pub static TOOL: ToolDef = ToolDef { name: NAME, actions: AGENT_ACTIONS, description: DESCRIPTION, input_schema, call };

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

fn input_schema() -> Value {
    let per_action: Vec<ActionSchema> = vec![
        schema::action::<Spawn>("spawn"),
        schema::action::<NoParams>("detect"),
        schema::action::<NoParams>("stats"),
        schema::action::<NoParams>("metrics"),
        schema::action::<Register>("register"),
        schema::action::<ListPeers>("list_peers"),
        schema::action::<Send>("send"),
        schema::action::<Inbox>("inbox"),
        schema::action::<Wait>("wait"),
    ];
    schema::merge(AGENT_ACTIONS, &per_action)
}

fn call(ctx: CallContext, mut args: Map<String, Value>) -> ToolFuture {
    boxed(async move {
        let action = take_action(NAME, AGENT_ACTIONS, &mut args)?;
        let action = action.as_str();
        if LOOPBACK_ONLY.contains(&action) {
            ctx.require_loopback(NAME, action)?;
        }
        match action {
            "spawn" => spawn::spawn(&ctx, parse(NAME, action, args)?).await,
            "detect" => {
                parse::<NoParams>(NAME, action, args)?;
                detect().await
            }
            "stats" => {
                parse::<NoParams>(NAME, action, args)?;
                Ok(stats(&ctx))
            }
            "register" => peer::register(&ctx, parse(NAME, action, args)?),
            "list_peers" => peer::list_peers(&ctx, parse(NAME, action, args)?),
            "send" => peer::send(&ctx, parse(NAME, action, args)?),
            "inbox" => peer::inbox(&ctx, parse(NAME, action, args)?),
            "wait" => peer::wait(&ctx, parse(NAME, action, args)?).await,
            _ => {
                parse::<NoParams>(NAME, action, args)?;
                to_value(&ctx.app.agents.counters.snapshot())
            }
        }
    })
}

/// The installed agents (one list for MCP and REST).
pub async fn detect() -> Result<Value, ToolError> {
    let found = run_blocking("agent action=detect", || Ok(crate::agent::detect::detect_installed())).await?;
    to_value(&found)
}

fn stats(ctx: &CallContext) -> Value {
    let mut by_type: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut by_state: BTreeMap<String, u64> = BTreeMap::new();
    let mut agents = 0;
    for session in ctx.app.sessions.list() {
        let status = session.agent.status();
        let Some(agent_type) = status.agent_type else { continue };
        agents += 1;
        *by_type.entry(agent_type).or_default() += 1;
        if let Some(state) = status.agent_state {
            let key = serde_json::to_value(state).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            *by_state.entry(key).or_default() += 1;
        }
    }
    json!({"agent_sessions": agents, "by_agent_type": by_type, "by_agent_state": by_state})
}
