//! The MCP endpoint (`POST/GET/DELETE /mcp`, Streamable HTTP, legacy 2025-11-25 revision) and the
//! native tools behind it.
//!
//! Layers, as in rmcp: [`model`] (JSON-RPC wire types, no IO) / [`protocol`] (what each method
//! does) / [`transport`] (HTTP: headers, status codes, the GET stream) / [`tools`] (the native
//! tool framework and one module per tool). [`protocol_sessions`] holds the protocol sessions.

pub(crate) mod client_requests;
pub(crate) mod instructions;
pub(crate) mod model;
pub(crate) mod protocol;
pub(crate) mod protocol_sessions;
pub(crate) mod tasks;
pub(crate) mod tools;
pub(crate) mod transport;
pub(crate) mod upstream;

use std::collections::HashMap;
use std::sync::Mutex;

use crate::config::AppConfig;
use std::time::Duration;

use crate::limits::{MCP_REAPER_INTERVAL, MCP_REAPER_MIN_INTERVAL};
use crate::lock::Recover;
use crate::state::App;
use protocol_sessions::ProtocolSessions;

/// The endpoint's process-wide state, one field of [`crate::state::Shared`].
#[derive(Debug, Default)]
pub(crate) struct McpState {
    pub protocol_sessions: ProtocolSessions,
    /// `pty_description` per PTY id: the orchestrator's short description of a PTY's work.
    /// Bounded by the live session count (entries go when the session leaves `list`).
    pty_descriptions: Mutex<HashMap<String, String>>,
    /// What each task-augmented `tools/call` answered, for its `tasks/result`.
    pub task_calls: tasks::TaskCalls,
    /// The `search_tools` index over the enabled tools.
    pub search_index: tools::meta::SearchIndex,
    /// The upstream tools as listed here, and the proxied calls in flight.
    pub upstream: upstream::UpstreamTools,
    /// The requests put to clients for upstreams, waiting for their answers.
    pub client_requests: client_requests::ClientRequests,
}

impl McpState {
    pub(crate) fn pty_description(&self, session_id: &str) -> Option<String> {
        self.pty_descriptions.locked().get(session_id).cloned()
    }

    /// Sets (or, with `None` / an empty string, clears) a PTY's description, as one line, and
    /// tells `/events`.
    pub(crate) fn set_pty_description(&self, app: &App, session_id: &str, description: Option<String>) {
        let description = description.map(|d| crate::agent::launch::one_line(&d)).filter(|d| !d.is_empty());
        {
            let mut map = self.pty_descriptions.locked();
            let live: Vec<String> = app.sessions.list().iter().map(|s| s.id.clone()).collect();
            map.retain(|id, _| live.contains(id));
            match &description {
                Some(d) => map.insert(session_id.to_owned(), d.clone()),
                None => map.remove(session_id),
            };
        }
        app.events.publish(
            proto::events::PTY_DESCRIPTION_CHANGED,
            &serde_json::json!({"session_id": session_id, "pty_description": description}),
        );
    }

    /// Called after every saved config change: tells every GET stream `tools/list_changed` when
    /// the visible tool set changed, and ends the streams when the endpoint was switched off.
    pub(crate) fn config_changed(&self, previous: &AppConfig, next: &AppConfig) {
        if previous.mcp_server_enabled && !next.mcp_server_enabled {
            tracing::info!(source = "mcp", "MCP endpoint switched off; ending its streams");
            self.protocol_sessions.close_streams();
            return;
        }
        let tool_set_changed = tools::enabled_names(previous) != tools::enabled_names(next);
        if tool_set_changed {
            self.search_index.rebuild(next);
        }
        if tool_set_changed || previous.collapse_tools != next.collapse_tools {
            self.notify_tools_changed();
        }
    }

    pub(crate) fn notify_tools_changed(&self) {
        let message = model::notification("notifications/tools/list_changed").to_string();
        let streams = self.protocol_sessions.broadcast(&message);
        tracing::info!(source = "mcp", streams, "tool set changed; sent notifications/tools/list_changed");
    }
}

/// Forgets protocol sessions unused for `ttl` ([`crate::limits::MCP_SESSION_IDLE_TTL`] outside tests), every
/// [`MCP_REAPER_INTERVAL`] (or `ttl`, if shorter) until shutdown. A reaped session's peer
/// identity survives while it is still addressable (see [`crate::messaging_runtime::transport_ended`]).
pub(crate) fn spawn_reaper(app: &App, ttl: Duration) {
    let app = app.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(MCP_REAPER_INTERVAL.min(ttl).max(MCP_REAPER_MIN_INTERVAL));
        tick.tick().await;
        loop {
            tokio::select! {
                () = app.stopping() => return,
                _ = tick.tick() => {
                    let reaped = app.mcp.protocol_sessions.reap(ttl);
                    if !reaped.is_empty() {
                        tracing::info!(source = "mcp", reaped = reaped.len(), "reaped idle MCP sessions");
                    }
                    for protocol_session in &reaped {
                        crate::messaging_runtime::transport_ended(&app, protocol_session);
                    }
                    crate::messaging_runtime::sweep(&app);
                }
            }
        }
    });
}
