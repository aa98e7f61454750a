//! The `task` tool (`get`, `cancel`); the standard MCP Tasks methods over the same handles are in
//! `mcp/tasks.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::action::action;
use super::{CallContext, ToolDef, ToolError};
use crate::agent::AgentState;
use crate::agent_runtime::tasks::{Task, TaskError, TaskStatus};
use crate::state::App;

pub(crate) const NAME: &str = "task";

pub(crate) const DESCRIPTION: &str = "Task handles from agent action=spawn. \
Status: working, input_required (a question), then completed (exit 0), failed or cancelled, which are final. Only the spawner reads one; kept 24 h.

- get: whether a spawned task finished, and its result.
- cancel: marks it cancelled; the agent keeps running (close its session to stop it).";

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    description: DESCRIPTION,
    takes_action: true,
    actions: &[
        action!(NAME, "get", TaskRef => sync get, loopback: false, blocks: false),
        action!(NAME, "cancel", TaskRef => sync cancel, loopback: true, blocks: false),
    ],
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskRef {
    /// The task_id from agent action=spawn.
    pub task_id: String,
}

fn get(ctx: &CallContext, p: TaskRef) -> Result<Value, ToolError> {
    let task = ctx.app.agents.tasks.get(&p.task_id, ctx.owner().as_deref()).map_err(|e| failed("get", e))?;
    Ok(render(&ctx.app, &task))
}

#[derive(Debug, Serialize)]
struct Cancelled {
    task_id: String,
    status: TaskStatus,
    /// false when the task had already ended (its state is kept).
    cancelled: bool,
    note: &'static str,
}

fn cancel(ctx: &CallContext, p: TaskRef) -> Result<Cancelled, ToolError> {
    let (cancelled, task) =
        ctx.app.agents.tasks.cancel(&p.task_id, ctx.owner().as_deref()).map_err(|e| failed("cancel", e))?;
    let note = if cancelled {
        "marked cancelled; the agent session keeps running (close it with session action=close)"
    } else {
        "the task had already ended; its terminal state is kept"
    };
    Ok(Cancelled { task_id: task.task_id, status: task.status, cancelled, note })
}

fn failed(action: &str, e: TaskError) -> ToolError {
    ToolError::new(format!("task action={action}: {e}"))
}

/// An open task's live status: `input_required` while its agent waits on a question.
pub(crate) fn live_status(app: &App, task: &Task) -> Option<TaskStatus> {
    let session = app.sessions.resolve(&task.session_id).ok()?;
    let waiting = session.attached_status().and_then(|s| s.agent_state) == Some(AgentState::AwaitingInput);
    Some(if waiting { TaskStatus::InputRequired } else { TaskStatus::Working })
}

fn render(app: &App, task: &Task) -> Value {
    task.to_json(live_status(app, task))
}
