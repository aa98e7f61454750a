//! Upstream tools on tuicd's own `/mcp`: the aggregate `{upstream}__{tool}` list, kept in step
//! with the registry ([`crate::proxy::registry`]); dispatch and passthrough live in [`call`].
//!
//! The MCP layer calls the proxy, never the reverse: a watcher task reads the registry's tool
//! changes, rebuilds the aggregate, the search index, and tells every GET stream
//! `notifications/tools/list_changed` when what a client would list changed.

mod call;
pub(crate) mod prompts;
pub(crate) mod resources;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;
use tokio::sync::oneshot;

use super::tools::meta::ToolDoc;
use crate::lock::{Recover, RecoverRw};
use crate::proxy::registry::UpstreamTool;
use crate::state::App;

pub(crate) use call::{CallerStream, call, cancel, target};

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
    /// The renames and refusals the last rebuild logged, so each is logged once while it lasts.
    warned: Mutex<HashSet<Note>>,
    /// The (upstream, prompt) pair of each name the last `prompts/list` gave.
    pub(super) prompts: Mutex<HashMap<String, prompts::Pair>>,
}

impl Default for UpstreamTools {
    fn default() -> Self {
        Self {
            current: RwLock::default(),
            built_from: Mutex::new(u64::MAX),
            in_flight: Mutex::default(),
            warned: Mutex::default(),
            prompts: Mutex::default(),
        }
    }
}

impl UpstreamTools {
    pub(crate) fn listed(&self) -> Arc<Vec<Listed>> {
        self.current.read_locked().clone()
    }

    pub(crate) fn find(&self, qualified: &str) -> Option<Listed> {
        self.current.read_locked().iter().find(|t| t.qualified == qualified).cloned()
    }

    /// Rebuilds the aggregate when the registry's tools changed since it was last built (each
    /// renamed or refused tool is logged once while it stays so); `true` when it changed. Any
    /// reader may refresh (a list or a call may come before the watcher); the watcher alone
    /// announces changes.
    pub(super) fn refresh(&self, app: &App) -> bool {
        let mut built_from = self.built_from.locked();
        let generation = app.upstreams.tools_generation();
        if *built_from == generation {
            return false;
        }
        *built_from = generation;
        let mut reserved: Vec<&str> = super::tools::registry().iter().map(|t| t.name).collect();
        reserved.extend(super::tools::meta::NAMES);
        let (next, notes) = aggregate(app.upstreams.tools(), &reserved);
        let mut warned = self.warned.locked();
        for note in &notes {
            if !warned.contains(note) {
                tracing::warn!(source = "upstream", upstream = %note.upstream, tool = %note.tool, "{}", note.message);
            }
        }
        *warned = notes.into_iter().collect();
        drop(warned);
        let mut current = self.current.write_locked();
        if **current == next {
            return false;
        }
        *current = Arc::new(next);
        true
    }

    /// The listed tool `name`, refreshing the aggregate first if the registry moved on (a call
    /// may come before the watcher has rebuilt it, just after a reconnect).
    pub(crate) fn find_fresh(&self, app: &App, name: &str) -> Option<Listed> {
        self.refresh(app);
        self.find(name)
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

/// A tool listed under another name than `{upstream}__{tool}`, or not listed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Note {
    pub upstream: String,
    pub tool: String,
    pub message: String,
}

/// The aggregate of the ready upstreams' tools, in their order, and what was renamed or refused.
///
/// Calls are routed by the (upstream, tool) pair each listed name is kept with here, never by
/// splitting the name, so a name is listed only when exactly one pair claims it: two upstreams'
/// tools that would be listed under one name (`c` + `_x` and `c_` + `x` are both `c___x`) are
/// both refused, naming each other, since listing either would hide which one a call means.
fn aggregate(tools: Vec<UpstreamTool>, reserved: &[&str]) -> (Vec<Listed>, Vec<Note>) {
    let mut notes = Vec::new();
    let note =
        |upstream: &str, tool: &str, message: String| Note { upstream: upstream.into(), tool: tool.into(), message };
    let mut candidates: Vec<Listed> = Vec::new();
    for tool in tools {
        let name = tool.name().to_owned();
        if !valid_tool_name(&name) {
            let why =
                "tool skipped: its name does not fit MCP's tool-name rule (1-128 characters of A-Z a-z 0-9 _ . -)";
            notes.push(note(&tool.upstream, &name, why.into()));
            continue;
        }
        if candidates.iter().any(|c| c.upstream == tool.upstream && c.tool == name) {
            notes.push(note(&tool.upstream, &name, "tool skipped: the upstream lists this name twice".into()));
            continue;
        }
        let wanted = format!("{}{SEPARATOR}{}", tool.upstream, tool.alias.as_deref().unwrap_or(&name));
        let qualified = fit(&wanted, &tool.upstream, &name);
        if qualified != wanted {
            notes.push(note(&tool.upstream, &name, format!(
                "tool listed as {qualified:?}: {wanted:?} is longer than {} characters, which a client that prefixes \
                 mcp__tuic__ (Claude Code) refuses; choose a name with tool_aliases in mcp-upstreams.json",
                crate::limits::UPSTREAM_TOOL_NAME_MAX
            )));
        }
        let mut value = tool.tool;
        value["name"] = Value::String(qualified.clone());
        state_deadline(&mut value, deadline_ms(tool.timeout_secs));
        candidates.push(Listed { qualified, upstream: tool.upstream, tool: name, value });
    }
    let mut claims: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, candidate) in candidates.iter().enumerate() {
        claims.entry(candidate.qualified.as_str()).or_default().push(i);
    }
    let mut refused = vec![false; candidates.len()];
    for (i, candidate) in candidates.iter().enumerate() {
        let others: Vec<String> = claims[candidate.qualified.as_str()]
            .iter()
            .filter(|j| **j != i)
            .map(|j| format!("upstream {:?} tool {:?}", candidates[*j].upstream, candidates[*j].tool))
            .collect();
        let why = if reserved.contains(&candidate.qualified.as_str()) {
            format!("tool skipped: {:?} collides with a native tool", candidate.qualified)
        } else if !others.is_empty() {
            format!(
                "tool skipped: upstream {:?} tool {:?} and {} would both be listed as {:?}, so a call could not tell them \
                 apart; rename one with tool_aliases",
                candidate.upstream,
                candidate.tool,
                others.join(" and "),
                candidate.qualified
            )
        } else {
            continue;
        };
        refused[i] = true;
        notes.push(note(&candidate.upstream, &candidate.tool, why));
    }
    let listed = candidates.into_iter().zip(refused).filter(|(_, refused)| !refused).map(|(c, _)| c).collect();
    (listed, notes)
}

/// `wanted` when it fits [`crate::limits::UPSTREAM_TOOL_NAME_MAX`], else its start and a hash of
/// the (upstream, tool) pair: the same pair gets the same name after every restart.
fn fit(wanted: &str, upstream: &str, tool: &str) -> String {
    let max = crate::limits::UPSTREAM_TOOL_NAME_MAX;
    if wanted.len() <= max {
        return wanted.to_owned();
    }
    // FNV-1a, written out so the name never depends on a library's hasher; `\0` cannot occur in
    // either name, so no two pairs hash the same input.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in upstream.bytes().chain([0]).chain(tool.bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let suffix = format!("{:08x}", (hash ^ (hash >> 32)) as u32);
    // `wanted` is ASCII (upstream names and valid tool names are), so any byte is a boundary.
    format!("{}_{suffix}", &wanted[..max - 1 - suffix.len()])
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

/// A request forwarded to an upstream that failed, as the JSON-RPC error the client gets: the
/// upstream's own error as it worded it, -32001 when it needs authorization, else the reason.
pub(crate) fn forward_error(error: crate::proxy::registry::CallError) -> crate::mcp::model::RpcError {
    use crate::mcp::model::{RpcError, code};
    use crate::proxy::registry::CallError;
    use crate::proxy::wire::UpstreamError;
    let message = error.to_string();
    match error {
        CallError::UnknownUpstream { .. } | CallError::UnknownTool { .. } => RpcError::invalid_params(message),
        CallError::NeedsAuth { .. }
        | CallError::NeedsScope { .. }
        | CallError::Upstream { error: UpstreamError::NeedsOAuth { .. }, .. } => {
            RpcError::new(call::NEEDS_AUTH, message)
        }
        CallError::Upstream { error: UpstreamError::Rpc { code, message, data }, .. } => {
            RpcError { code, message, data }
        }
        CallError::Unavailable { .. } | CallError::Upstream { .. } => RpcError::new(code::INTERNAL_ERROR, message),
    }
}

/// The server capabilities tuicd serves for its upstreams: `resources`, `prompts` and
/// `completions`, each only when a ready upstream declares it (the first `initialize` after boot
/// waits, at most `UPSTREAM_SETTLE`, for upstreams still connecting).
pub(crate) async fn capabilities(app: &App) -> Vec<(&'static str, Value)> {
    if app.upstreams.is_empty() {
        return Vec::new();
    }
    app.upstreams.settle(crate::limits::UPSTREAM_SETTLE).await;
    let served = app.upstreams.served();
    ["resources", "prompts", "completions"]
        .into_iter()
        .filter(|c| served.iter().any(|s| s.declares(c)))
        .map(|c| (c, Value::Object(serde_json::Map::new())))
        .collect()
}

/// Each ready upstream's `instructions`, by name, in configuration order.
pub(crate) fn instructions(app: &App) -> Vec<(String, String)> {
    app.upstreams
        .served()
        .into_iter()
        .filter_map(|s| Some((s.name, s.instructions.filter(|i| !i.trim().is_empty())?)))
        .collect()
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

    fn tool(upstream: &str, name: &str, alias: Option<&str>) -> UpstreamTool {
        UpstreamTool {
            upstream: upstream.into(),
            tool: serde_json::json!({"name": name, "inputSchema": {"type": "object"}}),
            timeout_secs: 30,
            alias: alias.map(String::from),
        }
    }

    fn names(listed: &[Listed]) -> Vec<(&str, &str, &str)> {
        listed.iter().map(|l| (l.qualified.as_str(), l.upstream.as_str(), l.tool.as_str())).collect()
    }

    #[test]
    fn each_listed_name_keeps_its_pair_and_names_two_pairs_claim_are_refused_naming_both() {
        let tools = vec![
            tool("b_", "echo", None),
            tool("c", "_x", None),
            tool("c_", "x", None),
            tool("up", "a__b", None),
            tool("up", "session", None),
            tool("up", "twice", None),
            tool("up", "twice", None),
        ];
        let (listed, notes) = aggregate(tools, &["session", "up__session"]);
        assert_eq!(
            names(&listed),
            [("b___echo", "b_", "echo"), ("up__a__b", "up", "a__b"), ("up__twice", "up", "twice")]
        );
        let about = |upstream: &str, tool: &str| {
            notes
                .iter()
                .find(|n| n.upstream == upstream && n.tool == tool)
                .map(|n| n.message.clone())
                .unwrap_or_default()
        };
        for (upstream, tool, other) in
            [("c", "_x", r#"upstream "c_" tool "x""#), ("c_", "x", r#"upstream "c" tool "_x""#)]
        {
            let message = about(upstream, tool);
            assert!(message.contains(other) && message.contains("\"c___x\""), "{message}");
        }
        assert!(about("up", "session").contains("collides with a native tool"));
        assert!(about("up", "twice").contains("lists this name twice"));
    }

    #[test]
    fn long_names_are_shortened_stably_within_64_with_claude_codes_prefix_and_aliases_rename() {
        let long_tool = "trigger-a-really-long-running-operation-with-progress";
        let (listed, notes) = aggregate(vec![tool("everything", long_tool, None)], &[]);
        let shortened = listed[0].qualified.clone();
        assert_eq!(shortened.len(), crate::limits::UPSTREAM_TOOL_NAME_MAX);
        assert_eq!(format!("mcp__tuic__{shortened}").len(), 64);
        assert!(shortened.starts_with("everything__trigger-a-really-long-running"), "{shortened}");
        assert!(valid_tool_name(&shortened));
        assert_eq!((listed[0].upstream.as_str(), listed[0].tool.as_str()), ("everything", long_tool));
        let (again, _) = aggregate(vec![tool("everything", long_tool, None)], &[]);
        assert_eq!(again[0].qualified, shortened, "stable");
        let (other, _) = aggregate(vec![tool("everything", &format!("{long_tool}2"), None)], &[]);
        assert_ne!(other[0].qualified, shortened, "another tool with the same start gets another suffix");
        let message = &notes[0].message;
        assert!(message.contains(&shortened) && message.contains(&format!("everything__{long_tool}")), "{message}");
        let (aliased, notes) = aggregate(vec![tool("everything", long_tool, Some("long-op"))], &[]);
        assert_eq!(names(&aliased), [("everything__long-op", "everything", long_tool)]);
        assert!(notes.is_empty(), "{notes:?}");
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
