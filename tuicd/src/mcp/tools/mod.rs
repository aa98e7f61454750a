//! The native tool framework: what every tool module provides, listing, and dispatch.
//!
//! A tool is a module with typed parameters per action (the `inputSchema` is derived from them,
//! see [`schema`]), an `*_ACTIONS` constant, a description documenting every action, and one
//! `call` entry point. Tool failures are results with `isError: true` and `{"error": ...}` in
//! their text; unknown or disabled tools are JSON-RPC `-32602` protocol errors.

pub mod schema;
pub mod session;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;

use futures_util::FutureExt;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::model::RpcError;
pub use super::model::ToolText;
use crate::config::AppConfig;
use crate::http::Caller;
use crate::state::App;

pub type ToolFuture = Pin<Box<dyn Future<Output = Result<Answer, ToolError>> + Send>>;

/// What a tool answered: a value, or (for hot actions) the value already printed as compact JSON
/// escaped for the result's text block ([`crate::mcp::model::escaped_json`]), which goes in as it is.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Value(Value),
    Escaped(String),
}

/// A tool's `call` body that answers with values, as a [`ToolFuture`].
pub fn boxed(work: impl Future<Output = Result<Value, ToolError>> + Send + 'static) -> ToolFuture {
    Box::pin(work.map(|answer| answer.map(Answer::Value)))
}

/// One native tool. Static data plus two function pointers, so the registry is a plain slice.
#[derive(Debug)]
pub struct ToolDef {
    pub name: &'static str,
    /// The tool's `*_ACTIONS` constant (empty for a tool without actions).
    pub actions: &'static [&'static str],
    pub description: &'static str,
    pub input_schema: fn() -> Value,
    pub call: fn(CallContext, Map<String, Value>) -> ToolFuture,
}

/// Every native tool, in `tools/list` order.
pub fn registry() -> &'static [&'static ToolDef] {
    static REGISTRY: &[&ToolDef] = &[
        &session::TOOL,
        &crate::agentwire::agent_tool::TOOL,
        &crate::agentwire::task_tool::TOOL,
        &crate::agentwire::progress::TOOL,
        &crate::agentwire::progress::REPO_TOOL,
    ];
    REGISTRY
}

/// Who is calling a tool, and through what.
#[derive(Debug, Clone)]
pub struct CallContext {
    pub app: App,
    pub caller: Caller,
    /// The protocol session the call came with, if any.
    pub mcp_session: Option<String>,
    /// The caller's tuic identity: `x-tuic-session` on this request, else the one bound at initialize.
    pub tuic_session: Option<String>,
}

impl CallContext {
    /// Refuses an action to remote callers, as a tool error that names the action.
    pub fn require_loopback(&self, tool: &str, action: &str) -> Result<(), ToolError> {
        self.caller.require_loopback(&format!("{tool} action={action}")).map_err(|e| ToolError::new(e.to_string()))
    }
}

/// A tool that ran and failed: `{"error": message, ...extra}` with `isError: true`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError(pub Map<String, Value>);

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        let mut map = Map::new();
        map.insert("error".into(), Value::String(message.into()));
        Self(map)
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    pub fn message(&self) -> &str {
        self.0.get("error").and_then(Value::as_str).unwrap_or("")
    }
}

/// Tools visible under `config`: the registry minus `disabled_native_tools`.
pub fn enabled<'a>(registry: &'a [&'static ToolDef], config: &AppConfig) -> Vec<&'a ToolDef> {
    registry
        .iter()
        .copied()
        .filter(|t| !config.disabled_native_tools.iter().any(|d| d == t.name))
        .filter(|t| config.progress_tracking || t.name != crate::agentwire::progress::NAME)
        .collect()
}

/// The names `tools/list` would show; a change in it is a `tools/list_changed`.
pub fn enabled_names(config: &AppConfig) -> Vec<&'static str> {
    enabled(registry(), config).iter().map(|t| t.name).collect()
}

/// The `tools/list` result.
pub fn list(registry: &[&'static ToolDef], config: &AppConfig) -> Value {
    let tools: Vec<Value> = enabled(registry, config)
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": (t.input_schema)()}))
        .collect();
    json!({ "tools": tools })
}

/// Dispatches `tools/call`. Protocol problems (unknown or disabled tool, non-object arguments)
/// are JSON-RPC errors; everything the tool itself reports, including a panic, is a result.
pub async fn call(
    registry: &[&'static ToolDef],
    ctx: CallContext,
    name: &str,
    arguments: Option<Value>,
) -> Result<ToolText, RpcError> {
    let config = ctx.app.config.get();
    let Some(tool) = registry.iter().find(|t| t.name == name) else {
        let valid: Vec<&str> = enabled(registry, &config).iter().map(|t| t.name).collect();
        return Err(RpcError::invalid_params(format!("Unknown tool: {name}. Valid tools: {}", valid.join(", "))));
    };
    if name == crate::agentwire::progress::NAME && !config.progress_tracking {
        return Err(RpcError::invalid_params(
            "Tool 'progress' is disabled by configuration (progress_tracking is false)",
        ));
    }
    if config.disabled_native_tools.iter().any(|d| d == name) {
        return Err(RpcError::invalid_params(format!(
            "Tool '{name}' is disabled by configuration (remove it from disabled_native_tools to use it)"
        )));
    }
    let args = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(RpcError::invalid_params("tools/call: \"arguments\" must be an object")),
    };
    let outcome = AssertUnwindSafe((tool.call)(ctx, args)).catch_unwind().await;
    Ok(match outcome {
        Ok(Ok(Answer::Value(value))) => ToolText::json(&value, false),
        Ok(Ok(Answer::Escaped(text))) => ToolText::escaped(text, false),
        Ok(Err(error)) => ToolText::json(&error.0, true),
        Err(panic) => {
            let what = panic_message(&panic);
            tracing::error!(source = "mcp", tool = name, panic = %what, "tool handler panicked");
            ToolText::json(&json!({"error": format!("the {name} tool failed unexpectedly: {what}")}), true)
        }
    })
}

/// Splits `action` off the arguments and checks it against the tool's constant.
pub fn take_action(tool: &str, actions: &[&str], args: &mut Map<String, Value>) -> Result<String, ToolError> {
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
pub fn params<T: DeserializeOwned>(tool: &str, action: &str, args: Map<String, Value>) -> Result<T, ToolError> {
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
pub async fn run_blocking<T, F>(what: &'static str, work: F) -> Result<T, ToolError>
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
pub fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, ToolError> {
    serde_json::to_value(value).map_err(|e| ToolError::new(format!("could not encode the result: {e}")))
}

#[cfg(test)]
pub(crate) mod tests;
