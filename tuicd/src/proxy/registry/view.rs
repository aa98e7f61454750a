//! What the registry shows: each upstream's status for `GET /mcp/upstream-status`, and the
//! visible tools of the ready ones for the MCP layer's aggregate.

use serde::Serialize;
use serde_json::{Value, json};

use super::{Status, Upstreams};
use crate::lock::Recover;
use crate::proxy::config::Transport;

/// One upstream in `GET /mcp/upstream-status`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StatusView {
    pub name: String,
    pub status: Status,
    /// `{type, url}` or `{type, command, args, cwd}`; never the entry's `env` (it may hold secrets).
    pub transport: Value,
    pub tool_count: usize,
    /// The upstream's own tool names (unprefixed), after its filter.
    pub tools: Vec<String>,
    pub metrics: MetricsView,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct MetricsView {
    pub call_count: u64,
    pub error_count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_latency_ms: Option<u64>,
}

/// One visible upstream tool: its upstream's name and the tool object as the upstream listed it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UpstreamTool {
    pub upstream: String,
    pub tool: Value,
    /// The upstream's `timeout_secs`: how long tuicd waits for one of its calls.
    pub timeout_secs: u64,
    /// The upstream's `tool_aliases` entry for this tool.
    pub alias: Option<String>,
}

impl UpstreamTool {
    /// The upstream's own name for the tool.
    pub(crate) fn name(&self) -> &str {
        self.tool.get("name").and_then(Value::as_str).unwrap_or_default()
    }
}

impl Upstreams {
    /// Every configured upstream, in configuration-id order.
    pub(crate) fn snapshot(&self) -> Vec<StatusView> {
        self.all()
            .iter()
            .map(|entry| {
                let state = entry.state.locked();
                let tools: Vec<String> = state
                    .tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .filter(|t| entry.admits(t))
                    .map(str::to_owned)
                    .collect();
                let transport = match &entry.server.transport {
                    Transport::Http { url } => json!({"type": "http", "url": url}),
                    Transport::Stdio { command, args, cwd, .. } => {
                        let mut t = json!({"type": "stdio", "command": command, "args": args});
                        if let Some(cwd) = cwd {
                            t["cwd"] = json!(cwd);
                        }
                        t
                    }
                };
                StatusView {
                    name: entry.server.name.clone(),
                    status: state.status,
                    transport,
                    tool_count: tools.len(),
                    tools,
                    metrics: MetricsView {
                        call_count: state.metrics.call_count,
                        error_count: state.metrics.error_count,
                        last_latency_ms: state.metrics.last_latency_ms,
                    },
                    last_error: state.last_error.clone(),
                }
            })
            .collect()
    }

    /// The tools of every ready upstream that its filter admits, in configuration order.
    pub(crate) fn tools(&self) -> Vec<UpstreamTool> {
        let mut out = Vec::new();
        for entry in self.all() {
            let state = entry.state.locked();
            if state.status != Status::Ready {
                continue;
            }
            let tuning = entry.tuning.locked().clone();
            for tool in &state.tools {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                if tuning.tool_filter.as_ref().is_none_or(|f| f.admits(name)) {
                    out.push(UpstreamTool {
                        upstream: entry.server.name.clone(),
                        tool: tool.clone(),
                        timeout_secs: tuning.timeout_secs.max(1),
                        alias: tuning.tool_aliases.get(name).cloned(),
                    });
                }
            }
        }
        out
    }
}

/// A ready upstream as the MCP layer's resources, prompts, completions and instructions see it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Served {
    pub name: String,
    /// What its `initialize` declared (`resources`, `prompts`, `completions`, ...).
    pub capabilities: Value,
    pub instructions: Option<String>,
}

impl Served {
    /// Whether it declared the server capability `name` (`resources`, `prompts`, `completions`).
    pub(crate) fn declares(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(|c| !c.is_null())
    }
}

impl Upstreams {
    /// Every ready upstream, in configuration order, with what its `initialize` declared.
    pub(crate) fn served(&self) -> Vec<Served> {
        self.all()
            .iter()
            .filter_map(|entry| {
                let state = entry.state.locked();
                (state.status == Status::Ready).then(|| Served {
                    name: entry.server.name.clone(),
                    capabilities: state.capabilities.clone(),
                    instructions: state.instructions.clone(),
                })
            })
            .collect()
    }

    /// The upstream names configured (any status), in configuration order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.all().iter().map(|e| e.server.name.clone()).collect()
    }
}
