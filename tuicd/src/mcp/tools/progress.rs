//! The `progress` tool (`{type: done|blocked, text, step?}`): a report into the shared journal
//! ([`crate::agent_runtime::progress`]), from the caller's PTY (its `x-tuic-session`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::action::action;
use super::{CallContext, ToolDef, ToolError, run_blocking};
use crate::agent_runtime::journal::{Entry, now_ms};
use crate::agent_runtime::progress::{agent_name, append, project_of};
use crate::limits::PROGRESS_TEXT_MAX_CHARS;

pub(crate) const NAME: &str = "progress";

pub(crate) const DESCRIPTION: &str = "Report progress to the journal tuicd keeps per project (repo action=progress_list): \
a step finished, or you are blocked and need help. Call it from a tuicd PTY, which names your project and you. \
Intent entries come from intent: markers.";

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    description: DESCRIPTION,
    takes_action: false,
    actions: &[action!(NAME, "report", Report => async report, loopback: false, blocks: true)],
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Report {
    /// done or blocked.
    #[serde(rename = "type")]
    #[schemars(schema_with = "kind_schema")]
    kind: String,
    /// One sentence (at most 2000 chars): what was done or what blocks you.
    text: String,
    /// The plan step this is about.
    step: Option<String>,
}

fn kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["done", "blocked"],
        "description": "done: a step finished; blocked: you cannot continue without help.",
    })
}

#[derive(Debug, Serialize)]
struct Recorded {
    ok: bool,
    id: String,
    project: String,
    agent: String,
}

async fn report(ctx: &CallContext, report: Report) -> Result<Recorded, ToolError> {
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
        return Err(
            ToolError::new("progress tracking is disabled for this agent").with("reason", "progress_tracking_disabled")
        );
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
    Ok(Recorded { ok: true, id: entry.id, project: entry.project, agent: entry.agent })
}
