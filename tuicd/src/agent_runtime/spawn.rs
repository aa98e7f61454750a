//! `agent action=spawn`: start an agent CLI in a new session with its prompt always delivered
//! ([`crate::agent::launch`]), register a task handle, watch the exit, and for prefill-only TUIs
//! inject the prompt once the agent is confirmed idle at its ready prompt, reporting a prompt that
//! did not go in within [`DEFERRED_PROMPT_WATCHDOG`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::json;

use super::state::{AgentCounters, SpawnInfo};
use super::submit::{SubmitError, submit};
use crate::agent::adapters::{self, Adapter};
use crate::agent::launch::{self, DescriptionParam};
use crate::limits::{DEFERRED_PROMPT_WATCHDOG, TASK_POLL_INTERVAL_MS};
use crate::messaging::{SpawnLink, TransportId, child_prompt_instruction};
use crate::session::Session;
use crate::state::App;

/// `/events` kind: a deferred prompt did not go in within the watchdog.
pub(crate) const PROMPT_UNDELIVERED: &str = "agent-prompt-undelivered";

/// What to start.
#[derive(Debug, Default)]
pub(crate) struct SpawnRequest {
    /// Non-empty: the caller checks it.
    pub prompt: String,
    pub agent_type: Option<String>,
    pub binary_path: Option<String>,
    pub args: Vec<String>,
    pub model: Option<String>,
    pub cwd: Option<String>,
    /// Non-blank when given: the caller checks it.
    pub name: Option<String>,
    /// Omitted (`None`): derived from the prompt; `Some(None)` or blank: none.
    pub pty_description: Option<Option<String>>,
    pub progress_tracking: Option<bool>,
    pub rows: Option<u16>,
    pub cols: Option<u16>,
}

/// Who asks: the MCP transport (a registered one becomes the child's parent) and the identity
/// that will own the task handle.
#[derive(Debug, Default)]
pub(crate) struct Spawner {
    pub transport: Option<TransportId>,
    pub owner: Option<String>,
}

/// A started agent. Optional values are omitted, never null.
#[derive(Debug, Serialize)]
pub(crate) struct Spawned {
    pub session_id: String,
    pub task_id: String,
    pub poll_interval_ms: u64,
    pub name: String,
    pub tuic_session: String,
    pub alias: String,
    /// argv or deferred.
    pub prompt_delivery: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pty_description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<uuid::Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub communication_warning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_warning: Option<String>,
}

/// Why nothing was started.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SpawnError(pub String);

fn resolve_agent(p: &SpawnRequest) -> Result<(String, Option<&'static Adapter>), SpawnError> {
    let by_type = match p.agent_type.as_deref() {
        Some(t) => Some(adapters::by_id(t).ok_or_else(|| {
            let known: Vec<&str> = adapters::ADAPTERS.iter().map(|a| a.id).collect();
            SpawnError(format!("unknown agent_type '{t}'; known: {}", known.join(", ")))
        })?),
        None => None,
    };
    match (&p.binary_path, by_type) {
        (Some(path), adapter) => Ok((path.clone(), adapter.or_else(|| adapters::by_binary(path)))),
        (None, Some(adapter)) => Ok((adapter.binaries[0].to_owned(), Some(adapter))),
        (None, None) => Err(SpawnError("give agent_type, binary_path, or both".into())),
    }
}

/// Starts the agent in a new session, registers its task handle and peer identity, and watches
/// it: the exit settles the task; a deferred prompt is typed in once the agent is ready.
pub(crate) async fn spawn(app: &App, p: SpawnRequest, spawner: Spawner) -> Result<Spawned, SpawnError> {
    let (program, adapter) = resolve_agent(&p)?;
    // A registered caller becomes the child's parent: the prompt names it and how to report.
    let transport = spawner.transport;
    let prompt = match transport.as_ref().and_then(|t| app.peers.messaging.identity_of(t)) {
        Some(parent) => format!("{}\n\n{}", p.prompt, child_prompt_instruction(parent)),
        None => p.prompt.clone(),
    };
    let tuic_session = uuid::Uuid::new_v4().to_string();
    let defaults = default_flags(app, adapter, &program, &p, &tuic_session).await;
    let mut env = std::collections::BTreeMap::new();
    let mut warnings: Vec<String> = Vec::new();
    if let Some(settings) = &defaults.gemini_defaults {
        let dir = app.config_dir.join("agents");
        match write_gemini_defaults(&dir, &tuic_session, settings) {
            Ok(path) => {
                env.insert(launch::GEMINI_DEFAULTS_ENV.to_owned(), path.display().to_string());
            }
            Err(why) => warnings.push(format!("the agent has no tuic MCP server: {why}")),
        }
    }
    let args: Vec<String> = defaults.flags.iter().chain(&p.args).cloned().collect();
    let plan = launch::plan(adapter, &args, &prompt, p.model.as_deref());
    let description = match &p.pty_description {
        None => DescriptionParam::Absent,
        Some(None) => DescriptionParam::Clear,
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
        tuic_session: Some(tuic_session.clone()),
        env,
        ..Default::default()
    };
    let max = app.config.get().max_sessions;
    let creating = app.clone();
    let created =
        tokio::task::spawn_blocking(move || creating.sessions.create(&request, max).map_err(|e| e.to_string()))
            .await
            .unwrap_or_else(|e| Err(format!("the session could not be created: {e}")));
    let session = match created {
        Ok(session) => session,
        Err(message) => {
            AgentCounters::bump(&app.agents.counters.spawn_failures);
            return Err(SpawnError(message));
        }
    };
    AgentCounters::bump(&app.agents.counters.spawned);
    let name = p.name.clone().unwrap_or_else(|| format!("{}-{}", adapter.map_or("agent", |a| a.id), session.alias));
    let task = app.agents.tasks.create(&session.id, spawner.owner);
    let delivery = if plan.deferred_prompt.is_some() { "deferred" } else { "argv" };
    let info = SpawnInfo {
        name: name.clone(),
        progress_tracking: p.progress_tracking.unwrap_or(true),
        prompt_delivery: delivery,
        channels: plan.args.iter().any(|a| a == launch::CLAUDE_CHANNELS_FLAG),
    };
    let sessions = app.sessions.clone();
    app.agents.record_spawn(&session.id, info, |id| sessions.resolve(id).is_ok());
    let link = match uuid::Uuid::parse_str(&session.tuic_session) {
        Ok(child) => app.peers.messaging.record_spawn(transport.as_ref(), child, Some(name.clone())),
        Err(_) => SpawnLink { parent_session_id: None, warning: None },
    };
    if let Some(description) = pty_description.clone() {
        app.mcp.set_pty_description(app, &session.id, Some(description));
    }
    tokio::spawn(watch_exit(app.clone(), session.clone()));
    if !p.prompt.trim().is_empty()
        && let Some(link) = super::AgentLink::of(&session)
    {
        link.expect_first_turn(plan.deferred_prompt.is_some());
    }
    if let Some(prompt) = plan.deferred_prompt {
        tokio::spawn(deliver_deferred(app.clone(), session.clone(), prompt, task.task_id.clone()));
    }
    Ok(Spawned {
        session_id: session.id.clone(),
        task_id: task.task_id,
        poll_interval_ms: TASK_POLL_INTERVAL_MS,
        name,
        tuic_session: session.tuic_session.clone(),
        alias: session.alias.clone(),
        prompt_delivery: delivery,
        agent_type: adapter.map(|a| a.id),
        pty_description,
        parent_session_id: link.parent_session_id,
        communication_warning: link.warning,
        launch_warning: launch_warning(plan.model_ignored, defaults.warning.into_iter().chain(warnings).collect()),
    })
}

/// The agent's default flags; for Claude Code this reads its MCP config (on the blocking pool).
async fn default_flags(
    app: &App,
    adapter: Option<&'static Adapter>,
    program: &str,
    p: &SpawnRequest,
    tuic_session: &str,
) -> launch::DefaultFlags {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let cwd = p.cwd.clone().map(PathBuf::from).or_else(|| home.clone());
    let claude = adapter.is_some_and(|a| a.id == "claude");
    let (channel_server, bridge) = tokio::task::spawn_blocking(move || {
        let channel = match (claude, cwd) {
            (true, Some(cwd)) => super::channels::claude_server_name(&cwd, home.as_deref()),
            _ => None,
        };
        (channel, bridge_path())
    })
    .await
    .unwrap_or((None, None));
    let bridge = bridge.map(|path| path.display().to_string());
    let socket = app.socket_path.display().to_string();
    let mcp = bridge.as_deref().map(|bridge| launch::TuicMcp { bridge, socket: &socket, tuic_session });
    launch::default_flags(adapter, program, &p.args, channel_server.as_deref(), mcp)
}

/// Writes the Gemini CLI settings file naming tuicd's MCP server for one launch (0600, in
/// `dir`). Gemini CLI ignores a settings file under a directory that group or others can write
/// (a config dir under `/tmp`, say), so such a place is refused here with the reason instead.
fn write_gemini_defaults(
    dir: &std::path::Path,
    tuic_session: &str,
    settings: &serde_json::Value,
) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).map_err(|e| format!("{} could not be created: {e}", dir.display()))?;
    for ancestor in dir.ancestors() {
        let mode = std::fs::metadata(ancestor).map(|m| m.permissions().mode()).unwrap_or(0);
        if mode & 0o022 != 0 {
            return Err(format!(
                "Gemini CLI refuses settings files under {}, which group or others can write",
                ancestor.display()
            ));
        }
    }
    let path = dir.join(format!("gemini-{tuic_session}.json"));
    crate::private_file::write(&path, settings.to_string().as_bytes())
        .map_err(|e| format!("{} could not be written: {e}", path.display()))?;
    Ok(path)
}

/// `tuic-bridge` beside the running tuicd (an install or a cargo build puts both in one
/// directory), else the first one on `PATH`.
fn bridge_path() -> Option<PathBuf> {
    let beside = std::env::current_exe().ok()?.with_file_name("tuic-bridge");
    if beside.is_file() {
        return Some(beside);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("tuic-bridge")).find(|candidate| candidate.is_file())
}

fn launch_warning(model_ignored: bool, flags: Vec<String>) -> Option<String> {
    let model = model_ignored.then(|| "model was not passed: tuicd knows no model flag for this agent".to_owned());
    let warnings: Vec<String> = model.into_iter().chain(flags).collect();
    (!warnings.is_empty()).then(|| warnings.join("; "))
}

/// Drives the session's tasks to their outcome when it exits, whether or not anyone listens.
async fn watch_exit(app: App, session: Arc<Session>) {
    session.finished().await;
    // The Gemini CLI settings file written for this launch only (see `launch::default_flags`).
    let defaults = app.config_dir.join("agents").join(format!("gemini-{}.json", session.tuic_session));
    let _ = tokio::fs::remove_file(defaults).await;
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
            break format!(
                "the agent never showed a confirmed-idle ready prompt within {} s",
                DEFERRED_PROMPT_WATCHDOG.as_secs()
            );
        }
        super::wait::wait_settled(&session, left, super::wait::FirstTurn::Ignore).await;
        if session.exit_info().is_some() {
            break "the agent session exited before its ready prompt".to_owned();
        }
        match submit(&session, &prompt, None).await {
            // Written but never taken (and cleared again): try again at the next ready prompt.
            Ok(receipt) if !receipt.submitted => {
                tokio::time::sleep(crate::limits::AGENT_TICK_INTERVAL.min(left)).await;
            }
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
    if let Some(link) = super::AgentLink::of(&session) {
        link.report_prompt_undelivered();
    }
}
