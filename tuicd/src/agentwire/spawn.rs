//! `agent action=spawn`: start an agent CLI in a new session with its prompt always delivered
//! ([`crate::agent::launch`]), register a task handle, watch the exit, and for prefill-only TUIs
//! inject the prompt once the agent is confirmed idle at its ready prompt, reporting a prompt that
//! did not go in within [`DEFERRED_PROMPT_WATCHDOG`].

use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::state::{AgentCounters, SpawnInfo};
use super::submit::{SubmitError, submit};
use crate::agent::adapters::{self, Adapter};
use crate::agent::launch::{self, ArgvSource, DescriptionParam};
use crate::limits::{DEFERRED_PROMPT_WATCHDOG, TASK_POLL_INTERVAL_MS};
use crate::mcp::tools::session::session_error;
use crate::mcp::tools::{CallContext, ToolError, run_blocking};
use crate::messaging::{ChildState, SpawnLink, TransportId, child_prompt_instruction};
use crate::session::Session;
use crate::state::App;

/// `/events` kind: a deferred prompt did not go in within the watchdog.
pub const PROMPT_UNDELIVERED: &str = "agent-prompt-undelivered";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spawn {
    /// The task for the agent; always delivered (argv `{prompt}`, final positional argument, or
    /// typed into a prefill-only TUI once its ready prompt shows).
    pub prompt: String,
    /// The agent: claude, codex, gemini, aider, opencode, ... (see action=detect). Selects the
    /// binary (unless binary_path is given) and how the screen is read.
    pub agent_type: Option<String>,
    /// An explicit executable (absolute path or a name in PATH).
    pub binary_path: Option<String>,
    /// Arguments; an argument containing {prompt} receives the prompt there and nowhere else.
    #[serde(default)]
    pub args: Vec<String>,
    /// A model, passed with the agent's model flag.
    pub model: Option<String>,
    /// Working directory (default: the daemon's home directory).
    pub cwd: Option<String>,
    /// The agent's name (default: <agent_type>-<alias>); also the session's display name.
    pub name: Option<String>,
    /// The PTY's short task description: omitted derives it from the prompt (160 chars), a
    /// string sets it, null or "" keeps the PTY descriptionless.
    #[serde(default, deserialize_with = "present")]
    pub pty_description: Option<Option<String>>,
    /// false: this agent's progress calls answer progress_tracking_disabled.
    pub progress_tracking: Option<bool>,
    /// Terminal rows (1..=500, default 24).
    #[schemars(range(min = 1, max = 500))]
    pub rows: Option<u16>,
    /// Terminal columns (1..=500, default 80).
    #[schemars(range(min = 1, max = 500))]
    pub cols: Option<u16>,
}

fn present<'de, D: Deserializer<'de>>(de: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(de).map(Some)
}

/// The identity a task is owned by: the caller's tuic_session, else its MCP session.
pub fn caller_identity(ctx: &CallContext) -> Option<String> {
    ctx.tuic_session.clone().or_else(|| ctx.mcp_session.clone())
}

fn resolve_agent(p: &Spawn) -> Result<(String, Option<&'static Adapter>), ToolError> {
    let by_type = match p.agent_type.as_deref() {
        Some(t) => Some(adapters::by_id(t).ok_or_else(|| {
            let known: Vec<&str> = adapters::ADAPTERS.iter().map(|a| a.id).collect();
            ToolError::new(format!("agent action=spawn: unknown agent_type '{t}'; known: {}", known.join(", ")))
        })?),
        None => None,
    };
    match (&p.binary_path, by_type) {
        (Some(path), adapter) => Ok((path.clone(), adapter.or_else(|| adapters::by_binary(path)))),
        (None, Some(adapter)) => Ok((adapter.binaries[0].to_owned(), Some(adapter))),
        (None, None) => Err(ToolError::new("agent action=spawn: give agent_type, binary_path, or both")),
    }
}

pub async fn spawn(ctx: &CallContext, p: Spawn) -> Result<Value, ToolError> {
    let app = ctx.app.clone();
    let (program, adapter) = resolve_agent(&p)?;
    // A registered caller becomes the child's parent: the prompt names it and how to report.
    let transport = ctx.mcp_session.as_deref().map(TransportId::new);
    let prompt = match transport.as_ref().and_then(|t| app.peers.messaging.identity_of(t)) {
        Some(parent) => format!("{}\n\n{}", p.prompt, child_prompt_instruction(parent)),
        None => p.prompt.clone(),
    };
    let plan = launch::plan(adapter, &p.args, &prompt, p.model.as_deref(), ArgvSource::Caller);
    let description = match &p.pty_description {
        None => DescriptionParam::Absent,
        Some(None) => DescriptionParam::Clear,
        Some(Some(text)) if text.trim().is_empty() => DescriptionParam::Clear,
        Some(Some(text)) => DescriptionParam::Set(text),
    };
    let pty_description = launch::pty_description(description, &p.prompt);
    let request = proto::session::CreateSessionRequest {
        rows: p.rows,
        cols: p.cols,
        shell: Some(program),
        args: plan.args.clone(),
        cwd: p.cwd.clone(),
        display_name: p.name.clone(),
        agent_type: adapter.map(|a| a.id.to_owned()).or(p.agent_type.clone()),
        ..Default::default()
    };
    let max = app.config.get().max_sessions;
    let creating = app.clone();
    let created = run_blocking("agent action=spawn", move || {
        creating
            .sessions
            .create(&request, max)
            .map_err(|e| ToolError::new(format!("agent action=spawn: {}", session_error(e).message())))
    })
    .await;
    let session = match created {
        Ok(session) => session,
        Err(e) => {
            AgentCounters::bump(&app.agents.counters.spawn_failures);
            return Err(e);
        }
    };
    AgentCounters::bump(&app.agents.counters.spawned);
    let name = p.name.clone().unwrap_or_else(|| format!("{}-{}", adapter.map_or("agent", |a| a.id), session.alias));
    let task = app.agents.tasks.create(&session.id, caller_identity(ctx));
    let delivery = if plan.deferred_prompt.is_some() { "deferred" } else { "argv" };
    let info = SpawnInfo {
        name: name.clone(),
        tuic_session: session.tuic_session.clone(),
        task_id: task.task_id.clone(),
        progress_tracking: p.progress_tracking.unwrap_or(true),
        prompt_delivery: delivery,
    };
    let sessions = app.sessions.clone();
    app.agents.record_spawn(&session.id, info, |id| sessions.resolve(id).is_ok());
    let link = match uuid::Uuid::parse_str(&session.tuic_session) {
        Ok(child) => app.peers.messaging.record_spawn(transport.as_ref(), child, Some(name.clone())),
        Err(_) => SpawnLink { parent_session_id: None, warning: None },
    };
    if let Some(description) = pty_description.clone() {
        app.mcp.set_pty_description(&app, &session.id, Some(description));
    }
    tokio::spawn(watch_exit(app.clone(), session.clone()));
    if let Some(prompt) = plan.deferred_prompt {
        tokio::spawn(deliver_deferred(app.clone(), session.clone(), prompt, task.task_id.clone()));
    }
    let mut answer = json!({
        "session_id": session.id,
        "task_id": task.task_id,
        "poll_interval_ms": TASK_POLL_INTERVAL_MS,
        "name": name,
        "tuic_session": session.tuic_session,
        "alias": session.alias,
        "prompt_delivery": delivery,
    });
    if let Some(adapter) = adapter {
        answer["agent_type"] = json!(adapter.id);
    }
    if let Some(description) = pty_description {
        answer["pty_description"] = json!(description);
    }
    if let Some(parent) = link.parent_session_id {
        answer["parent_session_id"] = json!(parent);
    }
    if let Some(warning) = link.warning {
        answer["communication_warning"] = json!(warning);
    }
    if plan.model_ignored {
        answer["launch_warning"] = json!("model was not passed: tuicd knows no model flag for this agent");
    }
    Ok(answer)
}

/// Drives the session's tasks to their outcome when it exits, whether or not anyone listens.
async fn watch_exit(app: App, session: Arc<Session>) {
    session.finished().await;
    let code = session.exit_info().and_then(|e| e.exit_code);
    app.agents.tasks.session_exited(&session.id, code);
}

/// Waits for a confirmed-idle ready prompt, then submits the prompt; reports it undelivered when
/// the watchdog passes first (or the session ended).
async fn deliver_deferred(app: App, session: Arc<Session>, prompt: String, task_id: String) {
    let deadline = Instant::now() + DEFERRED_PROMPT_WATCHDOG;
    let reason = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break "the agent never showed a confirmed-idle ready prompt within 30 s".to_owned();
        }
        super::wait::wait_settled(&session, left).await;
        if session.exit_info().is_some() {
            break "the agent session exited before its ready prompt".to_owned();
        }
        match submit(&session, &prompt, None).await {
            Ok(_) => {
                AgentCounters::bump(&app.agents.counters.deferred_delivered);
                app.agents.set_prompt_delivery(&session.id, "delivered");
                return;
            }
            Err(SubmitError::Invalid(message)) => break message,
            // Not idle yet (a question, unconfirmed): look again shortly.
            Err(SubmitError::Refused(_)) => {
                tokio::time::sleep(crate::limits::AGENT_TICK_INTERVAL.min(left)).await;
            }
        }
    };
    AgentCounters::bump(&app.agents.counters.deferred_undelivered);
    app.agents.set_prompt_delivery(&session.id, "undelivered");
    tracing::warn!(session = %session.id, task = %task_id, reason = %reason, "deferred prompt was not delivered");
    app.events.publish(PROMPT_UNDELIVERED, &json!({"session_id": session.id, "task_id": task_id, "reason": reason}));
    // One prompt_delivery_failed to the parent (state only, like every lifecycle mail).
    if let Ok(child) = uuid::Uuid::parse_str(&session.tuic_session) {
        let view = crate::peers::view::View(&app);
        app.peers.messaging.child_lifecycle(child, ChildState::PromptDeliveryFailed, &view);
    }
}
