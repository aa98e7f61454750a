//! The `task` tool (`get`, `cancel`) and the standard MCP Tasks methods (`tasks/get`,
//! `tasks/list`, `tasks/cancel`, `tasks/result`) over the same handles.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::action::action;
use super::{CallContext, ToolDef, ToolError};
use crate::agent::AgentState;
use crate::agentwire::tasks::{Task, TaskError, TaskStatus};
use crate::mcp::model::RpcError;
use crate::state::App;

pub const NAME: &str = "task";

pub const DESCRIPTION: &str = "Task handles returned by agent action=spawn, for work longer than one wait. \
A task is working while its agent runs, input_required while it waits on a question, then completed (exit 0), failed (non-zero exit) or cancelled; those three never change again. Only the identity that spawned a task may read it; handles are kept 24 h.

- cancel: marks the task cancelled; the agent keeps running (close its session to stop it).";

pub static TOOL: ToolDef = ToolDef {
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
pub struct TaskRef {
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
fn live_status(app: &App, task: &Task) -> Option<TaskStatus> {
    let session = app.sessions.resolve(&task.session_id).ok()?;
    let waiting = session.agent.status().agent_state == Some(AgentState::AwaitingInput);
    Some(if waiting { TaskStatus::InputRequired } else { TaskStatus::Working })
}

fn render(app: &App, task: &Task) -> Value {
    task.to_json(live_status(app, task))
}

/// The MCP Tasks methods. `identity` is the caller's (tuic_session, else MCP session).
pub fn handle_method(
    app: &App,
    identity: Option<&str>,
    loopback: bool,
    method: &str,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let tasks = &app.agents.tasks;
    if method == "tasks/list" {
        let list: Vec<Value> = tasks.list(identity).iter().map(|t| mcp_task(app, t)).collect();
        return Ok(json!({"tasks": list}));
    }
    let task_id = params
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("{method}: \"taskId\" (a string) is required")))?;
    let fail = |e: TaskError| RpcError::invalid_params(format!("{method}: {e}"));
    let task = tasks.get(task_id, identity).map_err(fail)?;
    match method {
        "tasks/get" => Ok(mcp_task(app, &task)),
        "tasks/cancel" => {
            if !loopback {
                return Err(RpcError::invalid_params("tasks/cancel is refused to remote callers (loopback only)"));
            }
            let (_, task) = tasks.cancel(task_id, identity).map_err(fail)?;
            Ok(mcp_task(app, &task))
        }
        _ => match task.status {
            TaskStatus::Completed => {
                Ok(crate::mcp::model::tool_result(task.result.as_ref().unwrap_or(&Value::Null), false))
            }
            TaskStatus::Failed => {
                let detail = json!({"error": task.error_detail, "result": task.result});
                Ok(crate::mcp::model::tool_result(&detail, true))
            }
            TaskStatus::Cancelled => {
                Ok(crate::mcp::model::tool_result(&json!({"error": "the task was cancelled"}), true))
            }
            _ => Err(RpcError::invalid_params(format!(
                "tasks/result: task {task_id} is still {}; poll tasks/get",
                serde_json::to_value(render_status(app, &task))
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            ))),
        },
    }
}

fn render_status(app: &App, task: &Task) -> TaskStatus {
    if task.status.is_terminal() { task.status } else { live_status(app, task).unwrap_or(task.status) }
}

/// A task in the MCP Tasks shape (camelCase).
fn mcp_task(app: &App, task: &Task) -> Value {
    let plain = render(app, task);
    let mut value = json!({
        "taskId": task.task_id,
        "status": plain["status"],
        "pollInterval": plain["poll_interval_ms"],
        "ttl": plain["ttl_ms"],
        "createdAt": plain["created_at_ms"],
        "lastUpdatedAt": plain["last_updated_at_ms"],
    });
    if let Some(detail) = &task.error_detail {
        value["statusMessage"] = json!(detail);
    }
    value
}
