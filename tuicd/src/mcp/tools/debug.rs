//! The `debug` tool (hidden by default): what the daemon sees, for a person or agent diagnosing
//! it. `logs` reads the in-memory ring of the daemon's own tracing events
//! ([`crate::log_ring`]); `invoke_js` has no WebView to run in and says so.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::action::{NoParams, action};
use super::{CallContext, ToolDef, ToolError, run_blocking};
use crate::agent::detect::{InstalledAgent, detect_installed};
use crate::limits::{LOG_READ_DEFAULT, LOG_RING_BYTES, LOG_RING_EVENTS};
use crate::log_ring::{LogEntry, LogFilter, parse_level, ring};

pub(crate) const NAME: &str = "debug";

pub(crate) const DESCRIPTION: &str = "Diagnostics of the tuicd daemon itself: its recent log, its sessions, agent detection. Call action=help for the usage guide.";

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    description: DESCRIPTION,
    takes_action: true,
    actions: &[
        action!(NAME, "agent_detection", NoParams => async agent_detection, loopback: false, blocks: true),
        action!(NAME, "logs", Logs => sync logs, loopback: false, blocks: false),
        action!(NAME, "sessions", NoParams => sync sessions, loopback: false, blocks: false),
        action!(NAME, "invoke_js", InvokeJs => sync invoke_js, loopback: true, blocks: false),
        action!(NAME, "help", NoParams => sync help, loopback: false, blocks: false),
    ],
};

/// The usage guide; its numbers are the limits the daemon enforces.
fn help_text() -> String {
    format!(
        "debug: diagnostics of the tuicd daemon (no WebView, so no window.__TUIC__).

- action=logs [source] [level] [limit]: the daemon's recent tracing events, oldest first, from an in-memory ring of the last {LOG_RING_EVENTS} (at most {} KiB). source is the module that logged (session, mcp, server, routes, agent_runtime, messaging_runtime, config, ...) or the event's own source field; level is the least severe returned (error, warn, info, debug, trace); limit defaults to {LOG_READ_DEFAULT}. Events below the daemon's log filter (RUST_LOG, default info) are never recorded.
- action=sessions: every live PTY session: ids (PTY id, tuic_session, alias), pid, cwd, shell, created, bytes written, paused, exit, agent type, spawn facts, task description.
- action=agent_detection: agent CLIs installed on the daemon's PATH, and per session what the agent engine detected: agent_type, shell_state, agent_state, question, idle_confirmed, turn_epoch, composer_state.
- action=invoke_js: refused; tuicd is headless. Use logs, sessions or agent_detection instead.
- action=help: this text.",
        LOG_RING_BYTES / 1024
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Logs {
    /// Only events from this source (a daemon module such as session or mcp).
    source: Option<String>,
    /// The least severe level returned: error, warn, info, debug or trace.
    level: Option<String>,
    /// How many of the newest events (1..1000, default 50).
    limit: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InvokeJs {
    /// JavaScript for a WebView; tuicd has none, so it is refused.
    // Accepted so that a call carrying a script gets the clear refusal, not an unknown-field error.
    #[allow(dead_code)]
    script: Option<String>,
}

#[derive(Debug, Serialize)]
struct LogsAnswer {
    events: Vec<LogEntry>,
    /// How many events the ring holds now.
    held: usize,
}

fn logs(_: &CallContext, p: Logs) -> Result<LogsAnswer, ToolError> {
    let level = match p.level.as_deref() {
        None => None,
        Some(name) => Some(parse_level(name).ok_or_else(|| {
            ToolError::new(format!("debug action=logs: level '{name}' is not one of error, warn, info, debug, trace"))
        })?),
    };
    let limit = p.limit.unwrap_or(LOG_READ_DEFAULT as u64);
    if limit == 0 || limit > LOG_RING_EVENTS as u64 {
        return Err(ToolError::new(format!("debug action=logs: limit must be 1..{LOG_RING_EVENTS}, got {limit}")));
    }
    let filter = LogFilter { source: p.source, level, limit: limit as usize };
    let ring = ring();
    Ok(LogsAnswer { events: ring.read(&filter), held: ring.len() })
}

fn sessions(ctx: &CallContext, _: NoParams) -> Result<Value, ToolError> {
    let app = &ctx.app;
    let sessions: Vec<Value> = app
        .sessions
        .list()
        .iter()
        .map(|s| {
            let created_ms = s.created.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
            let mut row = json!({
                "session_id": s.id, "tuic_session": s.tuic_session, "alias": s.alias,
                "cwd": s.cwd, "shell": s.shell, "created_ms": created_ms,
                "bytes_written": s.total_written(), "paused": s.is_paused(),
            });
            let extra = [
                ("pid", s.pid.map(Value::from)),
                ("display_name", s.display_name.clone().map(Value::from)),
                ("agent_type", s.agent_type.clone().map(Value::from)),
                ("exit", s.exit_info().map(|e| json!({"exit_code": e.exit_code, "reason": e.reason}))),
                ("pty_description", app.mcp.pty_description(&s.id).map(Value::from)),
                (
                    "spawn",
                    app.agents.spawn_info(&s.id).map(|i| {
                        json!({"name": i.name, "progress_tracking": i.progress_tracking, "prompt_delivery": i.prompt_delivery})
                    }),
                ),
            ];
            for (key, value) in extra {
                if let Some(value) = value {
                    row[key] = value;
                }
            }
            row
        })
        .collect();
    Ok(json!({ "sessions": sessions }))
}

#[derive(Debug, Serialize)]
struct Detection {
    installed: Vec<InstalledAgent>,
    sessions: Vec<Value>,
}

async fn agent_detection(ctx: &CallContext, _: NoParams) -> Result<Detection, ToolError> {
    let installed = run_blocking("debug action=agent_detection", || Ok(detect_installed())).await?;
    let sessions = ctx
        .app
        .sessions
        .list()
        .iter()
        .map(|s| {
            let mut row = json!({"session_id": s.id, "alias": s.alias, "shell": s.shell});
            if let Some(declared) = &s.agent_type {
                row["declared_agent_type"] = json!(declared);
            }
            if let Some(status) = s.attached_status() {
                row["engine"] = serde_json::to_value(status).unwrap_or(Value::Null);
            }
            row
        })
        .collect();
    Ok(Detection { installed, sessions })
}

fn invoke_js(_: &CallContext, _: InvokeJs) -> Result<Value, ToolError> {
    Err(ToolError::new(
        "debug action=invoke_js is not available in tuicd: the daemon is headless and has no WebView to run JavaScript in. \
Read its state with debug action=sessions, action=logs or action=agent_detection.",
    ))
}

fn help(_: &CallContext, _: NoParams) -> Result<Value, ToolError> {
    Ok(json!({ "content": help_text() }))
}
