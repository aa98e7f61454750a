//! The standard MCP Tasks methods (specification 2025-11-25) over the handles `agent action=spawn`
//! creates: `tasks/get`, `tasks/list`, `tasks/cancel`, and `tasks/result`, which blocks until the
//! task ends (at most [`TASK_RESULT_WAIT`], below the request timeout); and the task-augmented
//! `tools/call` of `agent action=spawn`, answered with a `CreateTaskResult` for the handle the
//! spawn created.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Map, Value, json};

use super::model::{self, RpcError};
use super::tools::{self, CallContext, task::live_status};
use crate::agent_runtime::tasks::{Task, TaskError, TaskStatus, iso8601_utc};
use crate::limits::{TASK_MAX, TASK_POLL_INTERVAL_MS, TASK_RESULT_WAIT, TASK_TTL};
use crate::lock::Recover;
use crate::state::App;

/// The `_meta` key that ties a message to its task.
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The `_meta` key of a `CreateTaskResult` whose text a host may give the model at once.
pub(crate) const MODEL_IMMEDIATE_RESPONSE: &str = "io.modelcontextprotocol/model-immediate-response";

/// The answers of task-augmented calls by task id, so `tasks/result` answers the call's own
/// result. Bounded as the task handles are: [`TASK_MAX`] entries, each kept [`TASK_TTL`].
#[derive(Debug, Default)]
pub(crate) struct TaskCalls {
    /// Oldest first: (task id, when it was kept, the action's answer). A std mutex held for
    /// microseconds, never across `.await`.
    calls: Mutex<VecDeque<(String, Instant, Value)>>,
}

impl TaskCalls {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(String, Instant, Value)>> {
        let mut calls = self.calls.locked();
        while calls.front().is_some_and(|(_, at, _)| at.elapsed() >= TASK_TTL) {
            calls.pop_front();
        }
        calls
    }

    fn keep(&self, task_id: &str, answer: Value) {
        let mut calls = self.lock();
        if calls.len() >= TASK_MAX {
            calls.pop_front();
        }
        calls.push_back((task_id.to_owned(), Instant::now(), answer));
    }

    fn answer(&self, task_id: &str) -> Option<Value> {
        self.lock().iter().find(|(id, _, _)| id == task_id).map(|(_, _, answer)| answer.clone())
    }
}

/// A task-augmented `tools/call`: runs the action (it creates the task and answers its `task_id`)
/// and answers the `CreateTaskResult` for that task. The action's own answer (session, alias,
/// name...) goes in `_meta` as the text a host may hand the model now, and is the result
/// `tasks/result` answers once the task ends.
pub(crate) async fn call_as_task(
    app: &App,
    ctx: CallContext,
    name: &str,
    arguments: Option<Value>,
) -> Result<Value, RpcError> {
    let owner = ctx.owner();
    let answer = tools::call_task(tools::registry(), ctx, name, arguments).await?;
    let task = answer
        .get("task_id")
        .and_then(Value::as_str)
        .and_then(|id| app.agents.tasks.get(id, owner.as_deref()).ok())
        .ok_or_else(|| RpcError::new(model::code::INTERNAL_ERROR, format!("tools/call: {name} created no task")))?;
    let text = answer.to_string();
    app.mcp.task_calls.keep(&task.task_id, answer);
    Ok(json!({"task": mcp_task(app, &task), "_meta": {MODEL_IMMEDIATE_RESPONSE: text}}))
}

/// One `tasks/*` request. `identity` is the caller's (tuic_session, else MCP session).
pub(crate) async fn handle_method(
    app: &App,
    identity: Option<&str>,
    loopback: bool,
    method: &str,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let tasks = &app.agents.tasks;
    if method == "tasks/list" {
        if params.get("cursor").is_some_and(|c| !c.is_null()) {
            return Err(RpcError::invalid_params("tasks/list: invalid cursor (every task is listed in one page)"));
        }
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
            let (cancelled, task) = tasks.cancel(task_id, identity).map_err(fail)?;
            if !cancelled {
                return Err(RpcError::invalid_params(format!(
                    "tasks/cancel: task {task_id} has already ended ({}); a terminal task cannot be cancelled",
                    status_word(task.status)
                )));
            }
            Ok(mcp_task(app, &task))
        }
        _ => result(app, task_id, identity).await,
    }
}

/// A task in the MCP Tasks shape: camelCase, ISO 8601 times, `ttl` and `pollInterval` in ms.
pub(crate) fn mcp_task(app: &App, task: &Task) -> Value {
    let status = if task.status.is_terminal() { task.status } else { live_status(app, task).unwrap_or(task.status) };
    let mut value = json!({
        "taskId": task.task_id,
        "status": status,
        "pollInterval": TASK_POLL_INTERVAL_MS,
        "ttl": TASK_TTL.as_millis() as u64,
        "createdAt": iso8601_utc(task.created_ms()),
        "lastUpdatedAt": iso8601_utc(task.updated_ms()),
    });
    if let Some(detail) = &task.error_detail {
        value["statusMessage"] = json!(detail);
    }
    value
}

/// Waits for the task to end, then answers what the task's work returned: the tool result of the
/// agent's run (`isError` when it failed or was cancelled), tied to the task by `_meta`.
async fn result(app: &App, task_id: &str, identity: Option<&str>) -> Result<Value, RpcError> {
    let deadline = tokio::time::Instant::now() + TASK_RESULT_WAIT;
    let tasks = &app.agents.tasks;
    loop {
        let ended = tasks.ended();
        tokio::pin!(ended);
        ended.as_mut().enable();
        let task = tasks.get(task_id, identity).map_err(|e| RpcError::invalid_params(format!("tasks/result: {e}")))?;
        if task.status.is_terminal() {
            return Ok(match app.mcp.task_calls.answer(task_id) {
                Some(answer) => call_result(&task, answer),
                None => terminal_result(&task),
            });
        }
        tokio::select! {
            () = &mut ended => {}
            () = tokio::time::sleep_until(deadline) => {
                return Err(RpcError::new(model::code::INTERNAL_ERROR, format!(
                    "tasks/result: task {task_id} is still running after {} s; call tasks/result again",
                    TASK_RESULT_WAIT.as_secs()
                )));
            }
            () = app.stopping() => {
                return Err(RpcError::new(model::code::INTERNAL_ERROR, "tasks/result: the daemon is shutting down"));
            }
        }
    }
}

fn terminal_result(task: &Task) -> Value {
    let mut value = match task.status {
        TaskStatus::Completed => model::tool_result(task.result.as_ref().unwrap_or(&Value::Null), false),
        TaskStatus::Failed => model::tool_result(&json!({"error": task.error_detail, "result": task.result}), true),
        _ => model::tool_result(&json!({"error": "the task was cancelled"}), true),
    };
    value["_meta"] = json!({RELATED_TASK: {"taskId": task.task_id}});
    value
}

/// A task-augmented call's result: the action's answer with how the task ended (`exit_code`, and
/// `error` with `isError` when it failed or was cancelled), tied to the task by `_meta`.
fn call_result(task: &Task, mut answer: Value) -> Value {
    if !answer.is_object() {
        answer = json!({ "result": answer });
    }
    if let Some(code) = task.result.as_ref().and_then(|r| r.get("exit_code")) {
        answer["exit_code"] = code.clone();
    }
    let error = match task.status {
        TaskStatus::Completed => None,
        TaskStatus::Failed => Some(task.error_detail.clone().unwrap_or_else(|| "the task failed".into())),
        _ => Some("the task was cancelled".into()),
    };
    let is_error = error.is_some();
    if let Some(error) = error {
        answer["error"] = json!(error);
    }
    let mut value = model::tool_result(&answer, is_error);
    value["_meta"] = json!({RELATED_TASK: {"taskId": task.task_id}});
    value
}

fn status_word(status: TaskStatus) -> String {
    serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}
