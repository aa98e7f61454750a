//! The `agent` tool: spawn agent CLIs in new sessions and see which are installed and what they
//! do. (Identity and messaging actions belong to the peer-messaging surface, not here.)

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::spawn::{self, Spawn};
use crate::mcp::tools::schema::{self, ActionSchema};
use crate::mcp::tools::{
    CallContext, ToolDef, ToolError, ToolFuture, boxed, params as parse, run_blocking, take_action, to_value,
};

pub const NAME: &str = "agent";

pub const AGENT_ACTIONS: &[&str] = &["spawn", "detect", "stats", "metrics"];

/// Actions refused to remote (non-loopback) callers.
const LOOPBACK_ONLY: &[&str] = &["spawn"];

pub const DESCRIPTION: &str = "AI coding agents in tuicd terminals.

Actions:
- spawn: start an agent CLI in a new PTY session with its prompt always delivered: an argument containing {prompt} receives it by substitution; otherwise normal CLIs get it as the final positional argument and prefill-only TUIs (codex, opencode) get it typed in (framed submit) once their ready prompt is confirmed idle; a prompt not delivered within 30 s is reported (agent-prompt-undelivered on /events). Params: prompt (required), agent_type and/or binary_path, args, model, cwd, name, pty_description (omitted: derived from the prompt, 160 chars; null or \"\": none), progress_tracking (false: this agent's progress calls answer progress_tracking_disabled), rows, cols. Returns {session_id, task_id, poll_interval_ms, name, tuic_session, alias, prompt_delivery (argv|deferred), agent_type?, pty_description?, launch_warning?}. Poll task_id with task action=get. Loopback only.
- detect: installed agent CLIs on the daemon's PATH: [{agent_type, name, path}] (the same list as GET /agents/detect).
- stats: live sessions running a detected agent, counted by agent_type and by agent_state.
- metrics: counters since start: spawned, spawn_failures, submits, submits_refused, submits_acknowledged, deferred_prompts_delivered, deferred_prompts_undelivered, progress_recorded.";

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
