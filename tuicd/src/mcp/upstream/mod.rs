//! Upstream tools on tuicd's own `/mcp`: the aggregate `{upstream}__{tool}` list, kept in step
//! with the registry ([`crate::proxy::registry`]); dispatch and passthrough live in [`call`].
//!
//! The MCP layer calls the proxy, never the reverse: a watcher task reads the registry's tool
//! changes, rebuilds the aggregate, the search index, and tells every GET stream
//! `notifications/tools/list_changed` when what a client would list changed.

mod call;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;
use tokio::sync::oneshot;

use super::tools::meta::ToolDoc;
use crate::lock::{Recover, RecoverRw};
use crate::state::App;

pub(crate) use call::{call, cancel, target};

/// Separates an upstream's name from its tool's in a qualified name.
pub(crate) const SEPARATOR: &str = "__";
/// MCP's tool-name rule: 1 to 128 characters of `[A-Za-z0-9_.-]`.
const TOOL_NAME_MAX: usize = 128;

/// One upstream tool as tuicd lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listed {
    pub qualified: String,
    pub upstream: String,
    pub tool: String,
    /// The upstream's tool object with `name` set to `qualified`; everything else as listed.
    pub value: Value,
}

/// The aggregate of upstream tools and the proxied calls in flight.
#[derive(Debug)]
pub(crate) struct UpstreamTools {
    current: RwLock<Arc<Vec<Listed>>>,
    /// The registry's tool generation `current` was built from (`u64::MAX`: never built); held
    /// while rebuilding, so a reader that finds the aggregate stale waits for the rebuild.
    built_from: Mutex<u64>,
    /// Proxied calls in flight by (protocol session, JSON-RPC id), for `notifications/cancelled`.
    in_flight: Mutex<HashMap<(String, String), oneshot::Sender<()>>>,
}

impl Default for UpstreamTools {
    fn default() -> Self {
        Self { current: RwLock::default(), built_from: Mutex::new(u64::MAX), in_flight: Mutex::default() }
    }
}

impl UpstreamTools {
    pub(crate) fn listed(&self) -> Arc<Vec<Listed>> {
        self.current.read_locked().clone()
    }

    pub(crate) fn lists(&self, qualified: &str) -> bool {
        self.current.read_locked().iter().any(|t| t.qualified == qualified)
    }

    pub(crate) fn find(&self, qualified: &str) -> Option<Listed> {
        self.current.read_locked().iter().find(|t| t.qualified == qualified).cloned()
    }

    /// Rebuilds the aggregate when the registry's tools changed since it was last built (skipped
    /// names are logged once per change); `true` when it changed. Any reader may refresh (a list
    /// or a call may come before the watcher); the watcher alone announces changes.
    pub(super) fn refresh(&self, app: &App) -> bool {
        let mut built_from = self.built_from.locked();
        let generation = app.upstreams.tools_generation();
        if *built_from == generation {
            return false;
        }
        *built_from = generation;
        let native: Vec<&str> = super::tools::registry().iter().map(|t| t.name).collect();
        let meta = super::tools::meta::NAMES;
        let mut seen = std::collections::HashSet::new();
        let mut next = Vec::new();
        for tool in app.upstreams.tools() {
            let name = tool.name().to_owned();
            let qualified = format!("{}{SEPARATOR}{name}", tool.upstream);
            let refusal = if name.contains(SEPARATOR) {
                Some("its name contains \"__\", which separates upstream and tool")
            } else if !valid_tool_name(&qualified) {
                Some("the qualified name does not fit MCP's tool-name rule (1-128 characters of A-Z a-z 0-9 _ . -)")
            } else if native.contains(&qualified.as_str()) || meta.contains(&qualified.as_str()) {
                Some("the qualified name collides with a native tool")
            } else if !seen.insert(qualified.clone()) {
                Some("the upstream lists this name twice")
            } else {
                None
            };
            if let Some(why) = refusal {
                tracing::warn!(source = "upstream", upstream = %tool.upstream, tool = %name, reason = why, "tool skipped");
                continue;
            }
            let mut value = tool.tool;
            value["name"] = Value::String(qualified.clone());
            state_deadline(&mut value, deadline_ms(tool.timeout_secs));
            next.push(Listed { qualified, upstream: tool.upstream, tool: name, value });
        }
        let mut current = self.current.write_locked();
        if **current == next {
            return false;
        }
        *current = Arc::new(next);
        true
    }

    /// The search documents of the aggregate.
    pub(crate) fn documents(&self) -> Vec<ToolDoc> {
        self.listed().iter().map(document).collect()
    }

    pub(super) fn register(&self, key: (String, String)) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.in_flight.locked().insert(key, tx);
        rx
    }

    pub(super) fn unregister(&self, key: &(String, String)) {
        self.in_flight.locked().remove(key);
    }

    pub(super) fn take(&self, key: &(String, String)) -> Option<oneshot::Sender<()>> {
        self.in_flight.locked().remove(key)
    }
}

/// The deadline a client is told for one call of an upstream tool whose upstream waits
/// `timeout_secs`: that plus a margin, bounded by tuicd's own request timeout (which answers first).
fn deadline_ms(timeout_secs: u64) -> u64 {
    let limits = (crate::limits::REQUEST_TIMEOUT, crate::limits::UPSTREAM_CALL_MARGIN);
    let waits = std::time::Duration::from_secs(timeout_secs).min(limits.0);
    (waits + limits.1).as_millis() as u64
}

/// Writes the deadline into the tool's `_meta` (kept beside the upstream's own keys).
fn state_deadline(tool: &mut Value, deadline_ms: u64) {
    if !tool.get("_meta").is_some_and(Value::is_object) {
        tool["_meta"] = Value::Object(serde_json::Map::new());
    }
    tool["_meta"][proto::TOOL_DEADLINE_META] = Value::from(deadline_ms);
}

/// States on the collapsed surface's `call_tool` the longest deadline of any configured
/// upstream: it may reach any of their tools.
pub(crate) fn state_call_tool_deadline(app: &App, listing: &mut Value) {
    let Some(longest) = app.upstreams.current_file().servers.iter().map(|s| s.timeout_secs.max(1)).max() else {
        return;
    };
    let tools = listing.get_mut("tools").and_then(Value::as_array_mut);
    if let Some(call_tool) = tools.into_iter().flatten().find(|t| t["name"] == super::tools::meta::CALL_TOOL) {
        state_deadline(call_tool, deadline_ms(longest));
    }
}

/// Whether `name` fits MCP's tool-name rule.
pub(crate) fn valid_tool_name(name: &str) -> bool {
    (1..=TOOL_NAME_MAX).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// An upstream tool's search document: its name, description and its schema's parameters.
fn document(tool: &Listed) -> ToolDoc {
    let params = tool
        .value
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let description = tool.value.get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
    ToolDoc { name: tool.qualified.clone(), description, actions: Vec::new(), params }
}

/// Appends the upstream tools to a `tools/list` result. The first listing after boot waits (at
/// most `UPSTREAM_SETTLE`) for upstreams still connecting, so a client's first list is complete.
pub(crate) async fn extend_listing(app: &App, listing: &mut Value) {
    if app.upstreams.is_empty() {
        return;
    }
    app.upstreams.settle(crate::limits::UPSTREAM_SETTLE).await;
    app.mcp.upstream.refresh(app);
    if let Some(tools) = listing.get_mut("tools").and_then(Value::as_array_mut) {
        tools.extend(app.mcp.upstream.listed().iter().map(|t| t.value.clone()));
    }
}

/// Follows the registry's tool changes until shutdown: rebuilds the aggregate and the search
/// index, and sends `notifications/tools/list_changed` when the aggregate changed.
pub(crate) fn spawn_watcher(app: &App) {
    let app = app.clone();
    let mut changes = app.upstreams.subscribe_tools();
    tokio::spawn(async move {
        // What the streams were last told of; compared, not the refresh's answer, since a list
        // or a call may have refreshed the aggregate first.
        let mut announced: Arc<Vec<Listed>> = Arc::default();
        loop {
            tokio::select! {
                () = app.stopping() => return,
                changed = changes.changed() => if changed.is_err() { return },
            }
            app.mcp.upstream.refresh(&app);
            let now = app.mcp.upstream.listed();
            if now != announced {
                announced = now;
                app.mcp.search_index.set_upstream(app.mcp.upstream.documents(), &app.config.get());
                app.mcp.notify_tools_changed();
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_mcps_rule() {
        assert!(valid_tool_name("everything__echo"));
        assert!(valid_tool_name("a.b-c_d"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("has space"));
        assert!(!valid_tool_name("slash/name"));
        assert!(!valid_tool_name(&"x".repeat(129)));
    }

    #[test]
    fn a_tool_states_its_upstreams_timeout_plus_the_margin_beside_its_own_meta() {
        assert_eq!(deadline_ms(30), 35_000);
        assert_eq!(deadline_ms(10_000), 306_000, "bounded by tuicd's request timeout");
        let mut tool = serde_json::json!({"name": "t", "_meta": {"vendor": 1}});
        state_deadline(&mut tool, 35_000);
        assert_eq!(tool["_meta"], serde_json::json!({"vendor": 1, proto::TOOL_DEADLINE_META: 35_000}));
        let mut bare = serde_json::json!({"name": "t"});
        state_deadline(&mut bare, 6_000);
        assert_eq!(bare["_meta"][proto::TOOL_DEADLINE_META], 6_000);
    }
}
