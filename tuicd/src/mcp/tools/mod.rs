//! The native tool framework: what every tool module provides, listing, and dispatch.
//!
//! A tool is a module with a [`ToolDef`]: its name, a description of what it is for, and one
//! [`action::ActionDef`] per action (name, typed parameters, handler, flags). The `inputSchema`
//! ([`schema`]), the `action` enum and dispatch all come from those declarations. Tool failures are results with `isError: true` and `{"error": ...}` in
//! their text; unknown or disabled tools are JSON-RPC `-32602` protocol errors.

mod access;
pub(crate) mod action;
pub(crate) mod agent;
pub(crate) mod ai_terminal;
pub(crate) mod config;
pub(crate) mod debug;
pub(crate) mod meta;
pub(crate) mod plugin_dev_guide;
pub(crate) mod progress;
pub(crate) mod repo;
pub(crate) mod repo_github;
pub(crate) mod schema;
pub(crate) mod session;
pub(crate) mod task;
pub(crate) mod ui;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;

use action::ActionDef;
use futures_util::FutureExt;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::model::RpcError;
pub(crate) use super::model::ToolText;
use crate::config::AppConfig;
use crate::http::Caller;
use crate::state::App;

pub(crate) type ToolFuture = Pin<Box<dyn Future<Output = Result<Answer, ToolError>> + Send>>;

/// What a tool answered: a value, or (for hot actions) the value already printed as compact JSON
/// escaped for the result's text block ([`crate::mcp::model::escaped_json`]), which goes in as it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    Value(Value),
    Escaped(String),
    /// Another tool's whole result, `isError` included (what `call_tool` answers).
    Result(ToolText),
}

/// One native tool: static data, so the registry is a plain slice.
#[derive(Debug)]
pub(crate) struct ToolDef {
    pub name: &'static str,
    /// What the tool is for and what its schema cannot say; never a list of its parameters.
    pub description: &'static str,
    /// false for a tool that is a single action called without an `action` parameter.
    pub takes_action: bool,
    pub actions: &'static [ActionDef],
}

impl ToolDef {
    /// The `inputSchema`, derived from the actions' typed parameters.
    pub(crate) fn input_schema(&self) -> Value {
        schema::merge(self)
    }

    pub(crate) fn action_names(&self) -> Vec<&'static str> {
        self.actions.iter().map(|a| a.name).collect()
    }

    /// The declaration `args` selects: its `action` when the tool takes one, else its only action.
    fn select(&self, args: &mut Map<String, Value>) -> Result<&'static ActionDef, ToolError> {
        if !self.takes_action {
            return self.actions.first().ok_or_else(|| ToolError::new(format!("{} declares no action", self.name)));
        }
        let action = take_action(self.name, &self.action_names(), args)?;
        self.actions
            .iter()
            .find(|a| a.name == action)
            .ok_or_else(|| ToolError::new(format!("Unknown action '{action}' for tool {}", self.name)))
    }
}

/// The actions that may run as an MCP task (a task-augmented `tools/call`, `execution.taskSupport`
/// "optional" on their tool): each creates a task handle and answers its `task_id`.
const TASK_ACTIONS: &[(&str, &str)] = &[(agent::NAME, "spawn")];

/// Whether any action of `tool` may run as a task.
pub(crate) fn supports_tasks(tool: &str) -> bool {
    TASK_ACTIONS.iter().any(|(t, _)| *t == tool)
}

/// Every native tool, in `tools/list` order.
pub(crate) fn registry() -> &'static [&'static ToolDef] {
    static REGISTRY: &[&ToolDef] = &[
        &session::TOOL,
        &agent::TOOL,
        &task::TOOL,
        &progress::TOOL,
        &repo::TOOL,
        &ui::TOOL,
        &plugin_dev_guide::TOOL,
        &config::TOOL,
        &debug::TOOL,
        &ai_terminal::READ_SCREEN,
        &ai_terminal::SEND_INPUT,
        &ai_terminal::SEND_KEY,
        &ai_terminal::WAIT_FOR,
        &ai_terminal::GET_STATE,
        &ai_terminal::GET_CONTEXT,
        &ai_terminal::DRIVE_AGENT,
        &ai_terminal::RUN_COMMAND,
        &ai_terminal::READ_FILE,
        &ai_terminal::WRITE_FILE,
        &ai_terminal::EDIT_FILE,
        &ai_terminal::LIST_FILES,
        &ai_terminal::SEARCH_FILES,
    ];
    REGISTRY
}

/// Who is calling a tool, and through what.
#[derive(Debug, Clone)]
pub(crate) struct CallContext {
    pub app: App,
    pub caller: Caller,
    /// The protocol session the call came with, if any.
    pub mcp_session: Option<String>,
    /// The caller's tuic identity: `x-tuic-session` on this request, else the one bound at initialize.
    pub tuic_session: Option<String>,
}

impl CallContext {
    /// The identity a task is owned by: the caller's tuic_session, else its MCP session.
    pub(crate) fn owner(&self) -> Option<String> {
        self.tuic_session.clone().or_else(|| self.mcp_session.clone())
    }

    /// Refuses an action to remote callers, as a tool error that names the action.
    pub(crate) fn require_loopback(&self, tool: &str, action: &str) -> Result<(), ToolError> {
        self.caller.require_loopback(&format!("{tool} action={action}")).map_err(|e| ToolError::new(e.to_string()))
    }
}

/// A tool that ran and failed: `{"error": message, ...extra}` with `isError: true`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolError(pub Map<String, Value>);

impl ToolError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        let mut map = Map::new();
        map.insert("error".into(), Value::String(message.into()));
        Self(map)
    }

    pub(crate) fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    pub(crate) fn message(&self) -> &str {
        self.0.get("error").and_then(Value::as_str).unwrap_or("")
    }
}

/// Tools visible under `config`: the registry minus `disabled_native_tools`.
pub(crate) fn enabled<'a>(registry: &'a [&'static ToolDef], config: &AppConfig) -> Vec<&'a ToolDef> {
    registry
        .iter()
        .copied()
        .filter(|t| !config.disabled_native_tools.iter().any(|d| d == t.name))
        .filter(|t| config.progress_tracking || t.name != progress::NAME)
        .filter(|t| config.ai_terminal_mcp_enabled || !ai_terminal::is_ai_terminal(t.name))
        .collect()
}

/// The names `tools/list` would show; a change in it is a `tools/list_changed`.
pub(crate) fn enabled_names(config: &AppConfig) -> Vec<&'static str> {
    enabled(registry(), config).iter().map(|t| t.name).collect()
}

/// The `tools/list` result.
pub(crate) fn list(registry: &[&'static ToolDef], config: &AppConfig) -> Value {
    listing(&enabled(registry, config))
}

/// A `tools/list` result of exactly `tools`.
pub(crate) fn listing(tools: &[&ToolDef]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            let mut tool = json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema()});
            if supports_tasks(t.name) {
                tool["execution"] = json!({"taskSupport": "optional"});
            }
            tool
        })
        .collect();
    json!({ "tools": tools })
}

/// Dispatches `tools/call`. Protocol problems (unknown or disabled tool, non-object arguments)
/// are JSON-RPC errors; everything the tool itself reports, including a panic, is a result.
pub(crate) async fn call(
    registry: &[&'static ToolDef],
    ctx: CallContext,
    name: &str,
    arguments: Option<Value>,
) -> Result<ToolText, RpcError> {
    let (tool, args) = resolve(registry, &ctx, name, arguments)?;
    Ok(match run_caught(name, dispatch(tool, ctx, args)).await {
        Ok(Ok(Answer::Value(value))) => ToolText::json(&value, false),
        Ok(Ok(Answer::Escaped(text))) => ToolText::escaped(text, false),
        Ok(Ok(Answer::Result(result))) => result,
        Ok(Err(error)) => ToolText::json(&error.0, true),
        Err(failed) => ToolText::json(&json!({"error": failed}), true),
    })
}

/// Runs a tool handler; a panic becomes its message (logged here), so one failed call never takes
/// the request task down.
async fn run_caught(
    name: &str,
    run: impl Future<Output = Result<Answer, ToolError>>,
) -> Result<Result<Answer, ToolError>, String> {
    AssertUnwindSafe(run).catch_unwind().await.map_err(|panic| {
        let what = panic_message(&panic);
        tracing::error!(source = "mcp", tool = name, panic = %what, "tool handler panicked");
        format!("the {name} tool failed unexpectedly: {what}")
    })
}

/// Runs a task-augmented `tools/call` up to the point where its task exists, and answers what the
/// action answered (its `task_id` names the task). A tool or action that cannot run as a task is
/// `-32601`, as the MCP Tasks specification says for `taskSupport` "forbidden"; an action refused
/// before it started anything is `-32602` with the tool's error as `data` (no task exists to
/// carry it).
pub(crate) async fn call_task(
    registry: &[&'static ToolDef],
    ctx: CallContext,
    name: &str,
    arguments: Option<Value>,
) -> Result<Value, RpcError> {
    let (tool, mut args) = resolve(registry, &ctx, name, arguments)?;
    if !supports_tasks(tool.name) {
        return Err(RpcError::new(
            super::model::code::METHOD_NOT_FOUND,
            format!("tools/call: tool '{name}' does not support task augmentation; call it without \"task\""),
        ));
    }
    let refused = |error: ToolError| RpcError {
        code: super::model::code::INVALID_PARAMS,
        message: error.message().to_owned(),
        data: Some(Value::Object(error.0)),
    };
    let action = tool.select(&mut args).map_err(refused)?;
    if !TASK_ACTIONS.contains(&(tool.name, action.name)) {
        let supported: Vec<&str> = TASK_ACTIONS.iter().filter(|(t, _)| *t == tool.name).map(|(_, a)| *a).collect();
        return Err(RpcError::new(
            super::model::code::METHOD_NOT_FOUND,
            format!(
                "tools/call: {name} action={} does not support task augmentation (only action={} does); call it without \"task\"",
                action.name,
                supported.join(", action=")
            ),
        ));
    }
    if action.loopback_only {
        ctx.require_loopback(tool.name, action.name).map_err(refused)?;
    }
    access::authorize(&ctx, tool.name, action.name, &args).map_err(refused)?;
    let internal = |what: String| RpcError::new(super::model::code::INTERNAL_ERROR, what);
    match run_caught(name, (action.call)(ctx, args)).await {
        Ok(Ok(Answer::Value(value))) => Ok(value),
        Ok(Ok(Answer::Escaped(text))) => serde_json::from_str(&ToolText::escaped(text, false).text())
            .map_err(|e| internal(format!("the {name} tool answered unreadable JSON: {e}"))),
        Ok(Ok(Answer::Result(result))) => serde_json::from_str(&result.text())
            .map_err(|e| internal(format!("the {name} tool answered unreadable JSON: {e}"))),
        Ok(Err(error)) => Err(refused(error)),
        Err(failed) => Err(internal(failed)),
    }
}

/// The enabled tool `name` and its arguments as an object, or the protocol error that refuses the call.
fn resolve(
    registry: &[&'static ToolDef],
    ctx: &CallContext,
    name: &str,
    arguments: Option<Value>,
) -> Result<(&'static ToolDef, Map<String, Value>), RpcError> {
    let config = ctx.app.config.get();
    let Some(tool) = registry.iter().copied().find(|t| t.name == name) else {
        let valid: Vec<&str> = enabled(registry, &config).iter().map(|t| t.name).collect();
        return Err(RpcError::invalid_params(format!("Unknown tool: {name}. Valid tools: {}", valid.join(", "))));
    };
    if name == progress::NAME && !config.progress_tracking {
        return Err(RpcError::invalid_params(
            "Tool 'progress' is disabled by configuration (progress_tracking is false)",
        ));
    }
    if ai_terminal::is_ai_terminal(name) && !config.ai_terminal_mcp_enabled {
        return Err(RpcError::invalid_params(format!(
            "Tool '{name}' is disabled by configuration (set ai_terminal_mcp_enabled to true to use it)"
        )));
    }
    if config.disabled_native_tools.iter().any(|d| d == name) {
        return Err(RpcError::invalid_params(format!(
            "Tool '{name}' is disabled by configuration (remove it from disabled_native_tools to use it)"
        )));
    }
    match arguments {
        None | Some(Value::Null) => Ok((tool, Map::new())),
        Some(Value::Object(map)) => Ok((tool, map)),
        Some(_) => Err(RpcError::invalid_params("tools/call: \"arguments\" must be an object")),
    }
}

/// Runs the action `args` names, refusing a loopback-only one to remote callers first.
async fn dispatch(tool: &ToolDef, ctx: CallContext, mut args: Map<String, Value>) -> Result<Answer, ToolError> {
    let action = tool.select(&mut args)?;
    if action.loopback_only {
        ctx.require_loopback(tool.name, action.name)?;
    }
    access::authorize(&ctx, tool.name, action.name, &args)?;
    (action.call)(ctx, args).await
}

/// Splits `action` off the arguments and checks it against the tool's declared actions.
pub(crate) fn take_action(tool: &str, actions: &[&str], args: &mut Map<String, Value>) -> Result<String, ToolError> {
    let valid = || actions.join(", ");
    match args.remove("action") {
        Some(Value::String(a)) if actions.contains(&a.as_str()) => Ok(a),
        Some(Value::String(a)) => {
            Err(ToolError::new(format!("Unknown action '{a}' for tool {tool}. Valid actions: {}", valid())))
        }
        Some(_) => Err(ToolError::new(format!("action must be a string, one of: {}", valid()))),
        None => Err(ToolError::new(format!("action is required, one of: {}", valid()))),
    }
}

/// Reads one action's typed parameters; errors name the field and what was expected.
pub(crate) fn params<T: DeserializeOwned>(tool: &str, action: &str, args: Map<String, Value>) -> Result<T, ToolError> {
    let value = Value::Object(args);
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let at = if path == "." { String::new() } else { format!("{path}: ") };
        ToolError::new(format!("{tool} action={action}: {at}{inner}"))
    })
}

/// Runs blocking work (PTY writes, process spawns, disk) on the blocking pool; a panic there
/// becomes a tool error instead of taking the request task down.
pub(crate) async fn run_blocking<T, F>(what: &'static str, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => {
            let what_panicked = panic_message(&e.into_panic());
            tracing::error!(source = "mcp", action = what, panic = %what_panicked, "blocking handler panicked");
            Err(ToolError::new(format!("{what} failed unexpectedly: {what_panicked}")))
        }
        Err(_) => Err(ToolError::new(format!("{what} was cancelled (the daemon is shutting down)"))),
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

/// Serialises a tool's answer compactly, with optional values omitted by the types themselves.
pub(crate) fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, ToolError> {
    serde_json::to_value(value).map_err(|e| ToolError::new(format!("could not encode the result: {e}")))
}

#[cfg(test)]
mod registry_tests;
#[cfg(test)]
pub(crate) mod tests;
