//! The `task` tool (`get`, `cancel`); the standard MCP Tasks methods over the same handles are in
//! `mcp_tasks.rs`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::spawn::caller_identity;
use super::tasks::{Task, TaskError, TaskStatus};
use crate::agent::AgentState;
use crate::mcp::tools::schema::{self, ActionSchema};
use crate::mcp::tools::{CallContext, ToolDef, ToolError, ToolFuture, boxed, params as parse, take_action};
use crate::state::App;

pub const NAME: &str = "task";

pub const TASK_ACTIONS: &[&str] = &["get", "cancel"];

pub const DESCRIPTION: &str = "Task handles returned by agent action=spawn, for work longer than one wait.

Actions:
- get: {task_id, status, poll_interval_ms, session_id, created_at_ms, last_updated_at_ms, ttl_ms, result?, error_detail?}. status: working (the agent runs), input_required (it waits on a question; still live), completed (exited 0; result {session_id, exit_code}), failed (non-zero exit; error_detail), cancelled. completed, failed and cancelled are terminal and never change again. Only the identity that spawned the task may read it; handles are kept 24 h.
- cancel: mark the task cancelled (it does not stop the agent; close the session for that). Returns {task_id, status, cancelled (false when it had already ended; its state is kept), note}. Loopback only.";

pub static TOOL: ToolDef = ToolDef { name: NAME, actions: TASK_ACTIONS, description: DESCRIPTION, input_schema, call };

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskRef {
    /// The task_id from agent action=spawn.
    pub task_id: String,
}

fn input_schema() -> Value {
    let per_action: Vec<ActionSchema> = vec![schema::action::<TaskRef>("get"), schema::action::<TaskRef>("cancel")];
    schema::merge(TASK_ACTIONS, &per_action)
}

/// An open task's live status: `input_required` while its agent waits on a question.
pub(super) fn live_status(app: &App, task: &Task) -> Option<TaskStatus> {
    let session = app.sessions.resolve(&task.session_id).ok()?;
    let waiting = session.agent.status().agent_state == Some(AgentState::AwaitingInput);
    Some(if waiting { TaskStatus::InputRequired } else { TaskStatus::Working })
}

fn render(app: &App, task: &Task) -> Value {
    task.to_json(live_status(app, task))
}

fn call(ctx: CallContext, mut args: Map<String, Value>) -> ToolFuture {
    boxed(async move {
        let action = take_action(NAME, TASK_ACTIONS, &mut args)?;
        let action = action.as_str();
        let p: TaskRef = parse(NAME, action, args)?;
        let owner = caller_identity(&ctx);
        let tasks = &ctx.app.agents.tasks;
        let fail = |e: TaskError| ToolError::new(format!("task action={action}: {e}"));
        if action == "get" {
            let task = tasks.get(&p.task_id, owner.as_deref()).map_err(fail)?;
            return Ok(render(&ctx.app, &task));
        }
        // Ownership first, so a remote caller learns nothing about another's task either.
        tasks.get(&p.task_id, owner.as_deref()).map_err(fail)?;
        ctx.require_loopback(NAME, action)?;
        let (cancelled, task) = tasks.cancel(&p.task_id, owner.as_deref()).map_err(fail)?;
        let note = if cancelled {
            "marked cancelled; the agent session keeps running (close it with session action=close)"
        } else {
            "the task had already ended; its terminal state is kept"
        };
        Ok(json!({"task_id": task.task_id, "status": task.status, "cancelled": cancelled, "note": note}))
    })
}
