//! The `progress` tool (`{type: done|blocked, text, step?}`) and `repo action=progress_list`,
//! over the shared [`super::journal`]. Project and agent come from the caller's PTY (its
//! `x-tuic-session`): the repository root of its working directory and its spawn name (else its
//! agent type and alias). `intent` entries are written only by tuicd, from observed markers
//! ([`record_intents`], fed by `/events`).

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::journal::{Entry, Filter, now_ms};
use super::state::AgentCounters;
use crate::limits::PROGRESS_TEXT_MAX_CHARS;
use crate::mcp::tools::schema::{self, ActionSchema};
use crate::mcp::tools::{
    CallContext, ToolDef, ToolError, ToolFuture, boxed, params as parse, run_blocking, take_action, to_value,
};
use crate::session::Session;
use crate::state::App;

pub const NAME: &str = "progress";

pub const DESCRIPTION: &str = "Report project progress to the shared journal tuicd keeps for every agent (read it back with repo action=progress_list). Call it when you finish a meaningful step (type=done) or cannot continue without help (type=blocked); text is one sentence (at most 2000 characters), step optionally names the plan step. The project and your name come from your terminal; call it from inside a tuicd PTY. Returns {ok, id, project, agent}. An agent spawned with progress_tracking=false gets progress_tracking_disabled. Intent entries are recorded by tuicd from your intent: markers, not through this tool.";

pub static TOOL: ToolDef = ToolDef { name: NAME, actions: &[], description: DESCRIPTION, input_schema, call };

fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["done", "blocked"], "description": "done: a step finished; blocked: you cannot continue without help."},
            "text": {"type": "string", "description": "One sentence: what was done, or what blocks you."},
            "step": {"type": "string", "description": "The plan step this is about (optional)."}
        },
        "required": ["type", "text"],
        "additionalProperties": false
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Report {
    #[serde(rename = "type")]
    kind: String,
    text: String,
    step: Option<String>,
}

/// The repository root of `cwd` (nearest ancestor with `.git`), else `cwd` itself.
pub fn project_of(cwd: &Path) -> String {
    cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(cwd).display().to_string()
}

/// The journal's name for the agent in `session`.
pub fn agent_name(app: &App, session: &Session) -> String {
    if let Some(info) = app.agents.spawn_info(&session.id) {
        return info.name;
    }
    let kind = session.agent.adapter().map_or("shell", |a| a.id);
    format!("{kind}-{}", session.alias)
}

fn call(ctx: CallContext, args: Map<String, Value>) -> ToolFuture {
    boxed(async move {
        let report: Report = crate::mcp::tools::params(NAME, "report", args)?;
        match report.kind.as_str() {
            "done" | "blocked" => {}
            "intent" => {
                return Err(ToolError::new(
                    "progress: type=intent is recorded by tuicd from your intent: markers; report done or blocked",
                ));
            }
            other => return Err(ToolError::new(format!("progress: unknown type '{other}'; use done or blocked"))),
        }
        let text = report.text.trim();
        if text.is_empty() {
            return Err(ToolError::new("progress: text must not be empty"));
        }
        if text.chars().count() > PROGRESS_TEXT_MAX_CHARS {
            return Err(ToolError::new(format!("progress: text is over {PROGRESS_TEXT_MAX_CHARS} characters")));
        }
        let Some(tuic_session) = ctx.tuic_session.clone() else {
            return Err(ToolError::new(
                "progress: the caller has no tuic identity (x-tuic-session); call it from an agent inside a tuicd PTY",
            ));
        };
        let session = ctx.app.sessions.resolve(&tuic_session).map_err(|_| {
            ToolError::new(format!("progress: no tuicd session carries the caller's tuic_session {tuic_session}"))
        })?;
        if ctx.app.agents.spawn_info(&session.id).is_some_and(|s| !s.progress_tracking) {
            return Err(ToolError::new("progress tracking is disabled for this agent")
                .with("reason", "progress_tracking_disabled"));
        }
        let entry = Entry {
            id: uuid::Uuid::new_v4().to_string(),
            ts: now_ms(),
            project: project_of(&session.cwd),
            agent: agent_name(&ctx.app, &session),
            kind: report.kind,
            text: text.to_owned(),
            step: report.step.filter(|s| !s.trim().is_empty()),
            session_id: Some(session.id.clone()),
        };
        let app = ctx.app.clone();
        let written = entry.clone();
        run_blocking("progress", move || append(&app, &written).map_err(|e| ToolError::new(format!("progress: {e}"))))
            .await?;
        Ok(json!({"ok": true, "id": entry.id, "project": entry.project, "agent": entry.agent}))
    })
}

/// Appends to the journal and tells `/events` (`progress-recorded`).
pub fn append(app: &App, entry: &Entry) -> std::io::Result<()> {
    {
        let journal = app.agents.journal(&app.config_dir);
        journal.as_ref().expect("opened").append(entry)?;
    }
    AgentCounters::bump(&app.agents.counters.progress_recorded);
    app.events.publish(proto::events::PROGRESS_RECORDED, entry);
    Ok(())
}

/// Writes an `intent` entry for every `intent` engine event on `/events`, until shutdown.
pub async fn record_intents(app: App) {
    let mut subscription = app.events.subscribe(None);
    loop {
        let event = tokio::select! {
            () = app.stopping() => return,
            received = subscription.live.recv() => match received {
                Ok(event) => event,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "intent journal fell behind /events");
                    continue;
                }
                Err(_) => return,
            },
        };
        if event.kind != proto::events::PTY_PARSED {
            continue;
        }
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else { continue };
        if data["parsed"]["type"] != "intent" {
            continue;
        }
        let Some(session) = data["session_id"].as_str().and_then(|id| app.sessions.resolve(id).ok()) else { continue };
        let entry = Entry {
            id: uuid::Uuid::new_v4().to_string(),
            ts: now_ms(),
            project: project_of(&session.cwd),
            agent: agent_name(&app, &session),
            kind: "intent".into(),
            text: data["parsed"]["text"].as_str().unwrap_or_default().to_owned(),
            step: data["parsed"]["title"].as_str().map(str::to_owned),
            session_id: Some(session.id.clone()),
        };
        let writer = app.clone();
        let _ = tokio::task::spawn_blocking(move || {
            if let Err(e) = append(&writer, &entry) {
                tracing::warn!(error = %e, "cannot append an intent to the progress journal");
            }
        })
        .await;
    }
}

pub const REPO_NAME: &str = "repo";

pub const REPO_ACTIONS: &[&str] = &["progress_list"];

pub const REPO_DESCRIPTION: &str = "Repositories and their shared progress journal.

Actions:
- progress_list: journal entries, oldest first (at most 1000, the newest): [{id, ts (ms since the epoch), project, agent, type (done|blocked|intent), text, step?, session_id?}]. Filters: project (the repository root path), agent (the agent's name), since (ms since the epoch).";

pub static REPO_TOOL: ToolDef = ToolDef {
    name: REPO_NAME,
    actions: REPO_ACTIONS,
    description: REPO_DESCRIPTION,
    input_schema: repo_schema,
    call: repo_call,
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressList {
    /// Only this project (its repository root path).
    pub project: Option<String>,
    /// Only this agent's entries.
    pub agent: Option<String>,
    /// Only entries at or after this time, in ms since the Unix epoch.
    pub since: Option<u64>,
}

fn repo_schema() -> Value {
    let per_action: Vec<ActionSchema> = vec![schema::action::<ProgressList>("progress_list")];
    schema::merge(REPO_ACTIONS, &per_action)
}

fn repo_call(ctx: CallContext, mut args: Map<String, Value>) -> ToolFuture {
    boxed(async move {
        let action = take_action(REPO_NAME, REPO_ACTIONS, &mut args)?;
        let p: ProgressList = parse(REPO_NAME, &action, args)?;
        let filter = Filter { project: p.project, agent: p.agent, since: p.since };
        let app = ctx.app.clone();
        let entries = run_blocking("repo action=progress_list", move || {
            let journal = app.agents.journal(&app.config_dir);
            Ok(journal.as_ref().expect("opened").list(&filter))
        })
        .await?;
        to_value(&entries)
    })
}
