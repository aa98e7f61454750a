//! The live upstreams: one shared client per configured upstream for every connected agent, its
//! status, its tools and its metrics.
//!
//! Each upstream has one supervisor task ([`actor`]) that owns its connection: it connects,
//! refetches tools on `notifications/tools/list_changed`, runs the health checks the
//! [`super::health`] ticker asks for, and reconnects with backoff. Calls read the entry's client
//! under a std lock held for microseconds and run without it, so every caller shares the one
//! connection. The MCP layer reads [`Upstreams::tools`] and watches [`Upstreams::subscribe_tools`];
//! this module never names it.

mod actor;
mod asks;
mod call;
mod forward;
mod routes;
mod step_up;
mod view;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::config::{ToolFilter, UpstreamAuth, UpstreamServer, UpstreamsFile};
use super::health::Breaker;
use super::http::HttpClient;
use super::stdio::StdioClient;
use super::wire::{BearerSource, BoxFuture, ConnectCtx, Handshake, RequestOpts, StaticBearer, UpstreamError};
use crate::events::EventBus;
use crate::lock::Recover;

pub(crate) use call::CallError;
pub(crate) use step_up::union as scope_union;
pub(crate) use view::UpstreamTool;

/// Where an upstream's bearer credential comes from: [`static_bearer`] for `auth: bearer`, the
/// OAuth module's source for `auth: oauth2`. The registry never names the OAuth module.
pub(crate) type BearerFor = Arc<dyn Fn(&UpstreamServer) -> Option<Arc<dyn BearerSource>> + Send + Sync>;

/// Where a proxied call's notifications for its caller go (progress with the caller's token, the
/// upstream's log messages). Called on the task that reads the upstream; it must not wait.
pub(crate) type Deliver = Arc<dyn Fn(Value) + Send + Sync>;

/// Puts a request the upstream sent (`method`, `params`) to a proxied call's caller: the result
/// its client answered, or the JSON-RPC error object (`{code, message, data?}`) the upstream is
/// answered with.
pub(crate) type Ask = Arc<dyn Fn(String, Value) -> BoxFuture<'static, Result<Value, Value>> + Send + Sync>;

/// Who a proxied call is for: where its notifications go, and who the requests its upstream
/// sends while it runs (sampling, elicitation, roots) are put to.
#[derive(Clone)]
pub(crate) struct Caller {
    pub notify: Deliver,
    pub ask: Ask,
}

/// The static part of [`BearerFor`]: a configured bearer token.
pub(crate) fn static_bearer(server: &UpstreamServer) -> Option<Arc<dyn BearerSource>> {
    match &server.auth {
        Some(UpstreamAuth::Bearer { token }) => Some(Arc::new(StaticBearer(token.clone()))),
        _ => None,
    }
}

/// An upstream's status, as the reference spells it on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    Connecting,
    Ready,
    CircuitOpen,
    Disabled,
    Failed,
    NeedsAuth,
    Authenticating,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Connecting => "connecting",
            Status::Ready => "ready",
            Status::CircuitOpen => "circuit_open",
            Status::Disabled => "disabled",
            Status::Failed => "failed",
            Status::NeedsAuth => "needs_auth",
            Status::Authenticating => "authenticating",
        }
    }
}

/// One connection to an upstream, whichever its transport.
#[derive(Debug)]
pub(crate) enum Client {
    Stdio(Box<StdioClient>),
    Http(HttpClient),
}

impl Client {
    async fn connect(server: &UpstreamServer, ctx: ConnectCtx) -> Result<(Self, Handshake), UpstreamError> {
        match &server.transport {
            super::config::Transport::Stdio { .. } => {
                StdioClient::connect(server, ctx).await.map(|(c, h)| (Client::Stdio(Box::new(c)), h))
            }
            super::config::Transport::Http { .. } => {
                HttpClient::connect(server, ctx).await.map(|(c, h)| (Client::Http(c), h))
            }
        }
    }

    pub(crate) async fn request(&self, method: &str, params: Value, opts: RequestOpts) -> Result<Value, UpstreamError> {
        match self {
            Client::Stdio(c) => c.request(method, params, opts).await,
            Client::Http(c) => c.request(method, params, opts).await,
        }
    }

    /// Sends the answer to a request the upstream sent.
    async fn respond(&self, answer: &Value) -> Result<(), UpstreamError> {
        match self {
            Client::Stdio(c) => c.respond(answer).await,
            Client::Http(c) => c.respond(answer).await,
        }
    }

    async fn close(&self) {
        match self {
            Client::Stdio(c) => c.close().await,
            Client::Http(c) => c.close().await,
        }
    }

    /// A stdio process's last stderr lines, once its stderr closed (or a moment passed).
    async fn stderr_tail(&self) -> Option<String> {
        match self {
            Client::Stdio(c) => c.stderr_tail().await,
            Client::Http(_) => None,
        }
    }

    fn pid(&self) -> Option<i32> {
        match self {
            Client::Stdio(c) => c.pid(),
            Client::Http(_) => None,
        }
    }
}

/// What the registry and every entry share: where status and tool changes are told.
struct Hub {
    events: Arc<EventBus>,
    bearer_for: BearerFor,
    /// Bumped when any upstream's visible tools change (connect, refetch, disconnect).
    tools_changed: watch::Sender<u64>,
    /// Bumped on every status change (the settle wait watches it).
    status_changed: watch::Sender<u64>,
    /// Progress tokens of calls in flight, for routing `notifications/progress` back.
    progress: routes::ProgressRoutes,
    /// Proxied calls in flight across every upstream (shutdown drains them).
    calls: watch::Sender<usize>,
    /// `UPSTREAM_HEALTH_INTERVAL`, or a test's override.
    health_interval: Mutex<Duration>,
    /// Where stdio upstreams' stderr logs go (`None`: the daemon's log only).
    stderr_logs: Mutex<Option<std::path::PathBuf>>,
}

impl Hub {
    fn bump_tools(&self) {
        self.tools_changed.send_modify(|n| *n += 1);
    }
}

/// One configured upstream.
struct Entry {
    /// The entry as connected; its [`Tuning`] fields are stale after a change applied in place
    /// and are read from `tuning` instead.
    server: UpstreamServer,
    tuning: Mutex<Tuning>,
    state: Mutex<EntryState>,
    commands: mpsc::Sender<actor::Command>,
    /// Calls in flight, each with its caller when it has one: a message the transport cannot
    /// relate to a request (any on stdio) belongs to the call in flight when there is one only.
    callers: Mutex<HashMap<u64, Option<Caller>>>,
    next_call: AtomicU64,
    /// The `tools/list` re-fetch after `list_changed`: one runs, at most one more waits.
    refetch: Mutex<Refetch>,
}

#[derive(Debug, Default)]
struct Refetch {
    running: bool,
    queued: bool,
}

#[derive(Debug, Default)]
struct Metrics {
    call_count: u64,
    error_count: u64,
    last_latency_ms: Option<u64>,
}

struct EntryState {
    status: Status,
    client: Option<Arc<Client>>,
    /// The upstream's tools as it listed them (unfiltered), each a tool object.
    tools: Vec<Value>,
    /// What the upstream's last `initialize` declared: `capabilities` and `instructions`.
    capabilities: Value,
    instructions: Option<String>,
    metrics: Metrics,
    last_error: Option<String>,
    breaker: Breaker,
    step_up: step_up::StepUp,
}

/// The fields of an upstream's entry a change applies to in place, without reconnecting: how
/// long its requests may take, and which of its tools are listed under which names. Every other
/// field (transport, auth, name, enabled) names another connection.
#[derive(Debug, Clone, PartialEq)]
struct Tuning {
    timeout_secs: u64,
    tool_filter: Option<ToolFilter>,
    tool_aliases: BTreeMap<String, String>,
}

impl Tuning {
    fn of(server: &UpstreamServer) -> Self {
        Self {
            timeout_secs: server.timeout_secs,
            tool_filter: server.tool_filter.clone(),
            tool_aliases: server.tool_aliases.clone(),
        }
    }
}

/// Whether `a` and `b` differ in their [`Tuning`] only (so `b` applies to `a`'s connection).
fn same_connection(a: &UpstreamServer, b: &UpstreamServer) -> bool {
    let tuning = Tuning::of(a);
    let b = UpstreamServer {
        timeout_secs: tuning.timeout_secs,
        tool_filter: tuning.tool_filter,
        tool_aliases: tuning.tool_aliases,
        ..b.clone()
    };
    *a == b
}

impl Entry {
    /// The entry as configured now: its connection's fields and its current tuning.
    fn current(&self) -> UpstreamServer {
        let tuning = self.tuning.locked().clone();
        UpstreamServer {
            timeout_secs: tuning.timeout_secs,
            tool_filter: tuning.tool_filter,
            tool_aliases: tuning.tool_aliases,
            ..self.server.clone()
        }
    }

    /// How long one request to the upstream may take.
    fn timeout(&self) -> Duration {
        Duration::from_secs(self.tuning.locked().timeout_secs.max(1))
    }

    /// Whether the tool filter lists the upstream's tool `tool`.
    fn admits(&self, tool: &str) -> bool {
        self.tuning.locked().tool_filter.as_ref().is_none_or(|f| f.admits(tool))
    }

    /// The caller of the one call in flight, to which a message the transport could not relate
    /// to a request belongs; when no call or several are in flight, why it belongs to nobody.
    fn sole_caller(&self) -> Result<Caller, String> {
        let callers = self.callers.locked();
        match (callers.len(), callers.values().next()) {
            (1, Some(Some(caller))) => Ok(caller.clone()),
            (1, _) => Err("the tool call in flight on it has no MCP protocol session to ask".into()),
            (calls, _) => Err(super::wire::unattributed(calls)),
        }
    }

    fn status(&self) -> Status {
        self.state.locked().status
    }

    /// Sets the status; a change is published as `upstream-status-changed` and may change the
    /// visible tools (only ready upstreams list theirs).
    fn set_status(&self, hub: &Hub, status: Status) {
        let previous = std::mem::replace(&mut self.state.locked().status, status);
        if previous == status {
            return;
        }
        tracing::info!(source = "upstream", upstream = %self.server.name, from = previous.as_str(), to = status.as_str(), "status changed");
        hub.events.publish(
            proto::events::UPSTREAM_STATUS_CHANGED,
            &serde_json::json!({"name": self.server.name, "status": status}),
        );
        hub.status_changed.send_modify(|n| *n += 1);
        if previous == Status::Ready || status == Status::Ready {
            hub.bump_tools();
        }
    }

    fn record_error(&self, error: &str) {
        self.state.locked().last_error = Some(error.to_owned());
    }
}

/// The registry: every configured upstream by id.
pub(crate) struct Upstreams {
    entries: Mutex<BTreeMap<String, Arc<Entry>>>,
    hub: Arc<Hub>,
    booted: Instant,
}

impl std::fmt::Debug for Upstreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstreams").field("count", &self.entries.locked().len()).finish_non_exhaustive()
    }
}

impl Upstreams {
    pub(crate) fn new(events: Arc<EventBus>, bearer_for: BearerFor) -> Self {
        Self {
            entries: Mutex::default(),
            hub: Arc::new(Hub {
                events,
                bearer_for,
                tools_changed: watch::channel(0).0,
                status_changed: watch::channel(0).0,
                progress: routes::ProgressRoutes::default(),
                calls: watch::channel(0).0,
                health_interval: Mutex::new(crate::limits::UPSTREAM_HEALTH_INTERVAL),
                stderr_logs: Mutex::default(),
            }),
            booted: Instant::now(),
        }
    }

    /// Disconnects removed or changed upstreams and connects added or changed ones: exactly
    /// what differs between `before` and `after` (by id). A change to an upstream's [`Tuning`]
    /// only is applied in place: its connection and the calls in flight on it go on. Needs a
    /// tokio runtime.
    pub(crate) fn apply_diff(&self, before: &UpstreamsFile, after: &UpstreamsFile) {
        let mut ids: Vec<&str> = before.servers.iter().chain(&after.servers).map(|s| s.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut entries = self.entries.locked();
        let mut changed = false;
        for id in ids {
            let new = after.by_id(id);
            if let (Some(entry), Some(new)) = (entries.get(id), new)
                && same_connection(&entry.server, new)
            {
                let tuning = Tuning::of(new);
                if *entry.tuning.locked() != tuning {
                    tracing::info!(source = "upstream", upstream = %new.name,
                        "timeout_secs, tool_filter or tool_aliases changed; applied in place, without reconnecting");
                    *entry.tuning.locked() = tuning;
                    changed = true;
                }
                continue;
            }
            if let Some(entry) = entries.remove(id) {
                tracing::info!(source = "upstream", upstream = %entry.server.name, "disconnecting (removed or changed)");
                let _ = entry.commands.try_send(actor::Command::Stop);
                changed = true;
            }
            if let Some(server) = new {
                tracing::info!(source = "upstream", upstream = %server.name, "connecting (added or changed)");
                entries.insert(id.to_owned(), actor::start(server.clone(), self.hub.clone()));
                changed = true;
            }
        }
        drop(entries);
        if changed {
            self.hub.bump_tools();
        }
    }

    /// The configuration the registry runs now (servers in id order).
    pub(crate) fn current_file(&self) -> UpstreamsFile {
        UpstreamsFile { servers: self.entries.locked().values().map(|e| e.current()).collect() }
    }

    /// Applies `after` against what runs now (SIGHUP re-reads the file this way).
    pub(crate) fn reload(&self, after: &UpstreamsFile) {
        self.apply_diff(&self.current_file(), after);
    }

    /// The status of the upstream named `name`.
    pub(crate) fn status(&self, name: &str) -> Option<Status> {
        self.by_name(name).map(|e| e.status())
    }

    /// Sets an upstream's status from outside (the OAuth flow: `authenticating` while a flow is
    /// recorded, back to `needs_auth` when it ends without a token).
    pub(crate) fn set_status(&self, name: &str, status: Status) {
        if let Some(entry) = self.by_name(name) {
            entry.set_status(&self.hub, status);
        }
    }

    /// The scope the upstream's next authorization asks for beyond the usual choice, after a 403
    /// `insufficient_scope` (see [`step_up`]).
    pub(crate) fn step_up_scope(&self, name: &str) -> Option<String> {
        self.by_name(name)?.state.locked().step_up.scope.clone().filter(|s| !s.is_empty())
    }

    /// Drops the upstream's connection (if any) and connects again now, with a fresh breaker.
    pub(crate) fn reconnect(&self, name: &str) {
        if let Some(entry) = self.by_name(name) {
            let _ = entry.commands.try_send(actor::Command::Reconnect);
        }
    }

    /// Resolves when the visible tool set may have changed.
    pub(crate) fn subscribe_tools(&self) -> watch::Receiver<u64> {
        self.hub.tools_changed.subscribe()
    }

    /// The generation of the visible tool set: it moves whenever [`Self::subscribe_tools`] fires.
    pub(crate) fn tools_generation(&self) -> u64 {
        *self.hub.tools_changed.borrow()
    }

    /// Whether any upstream is configured (upstream tools are listed only then).
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.locked().is_empty()
    }

    /// Waits until no upstream is still connecting for the first time, or `settle` after boot.
    pub(crate) async fn settle(&self, settle: Duration) {
        let deadline = tokio::time::Instant::from_std(self.booted + settle);
        let mut changes = self.hub.status_changed.subscribe();
        loop {
            let waiting = self.entries.locked().values().any(|e| {
                let state = e.state.locked();
                state.status == Status::Connecting && state.metrics.call_count == 0 && !state.breaker.tried()
            });
            if !waiting {
                return;
            }
            if tokio::time::timeout_at(deadline, changes.changed()).await.is_err() {
                return;
            }
        }
    }

    /// Sets the health check interval (tests shorten it) before [`super::health::spawn`].
    pub(crate) fn set_health_interval(&self, interval: Duration) {
        *self.hub.health_interval.locked() = interval;
    }

    /// Sets where stdio upstreams write their stderr, `<dir>/<name>.log`, before any connects.
    pub(crate) fn set_stderr_log_dir(&self, dir: std::path::PathBuf) {
        *self.hub.stderr_logs.locked() = Some(dir);
    }

    pub(crate) fn health_interval(&self) -> Duration {
        *self.hub.health_interval.locked()
    }

    /// One health tick for every upstream (see [`super::health`]).
    pub(crate) fn tick(&self) {
        for entry in self.entries.locked().values() {
            let _ = entry.commands.try_send(actor::Command::Tick);
        }
    }

    /// Waits until no proxied call is in flight, at most `limit`: at shutdown the calls in
    /// flight get their answers before their upstreams stop.
    pub(crate) async fn drain(&self, limit: Duration) {
        let mut calls = self.hub.calls.subscribe();
        let waiting = *calls.borrow_and_update();
        if waiting == 0 {
            return;
        }
        tracing::info!(source = "upstream", calls = waiting, limit = ?limit, "waiting for proxied calls in flight");
        if tokio::time::timeout(limit, calls.wait_for(|n| *n == 0)).await.is_err() {
            let left = *self.hub.calls.borrow();
            tracing::warn!(source = "upstream", calls = left, "proxied calls still in flight after the drain limit");
        }
    }

    /// Stops every upstream (daemon shutdown).
    pub(crate) fn stop_all(&self) {
        for (_, entry) in std::mem::take(&mut *self.entries.locked()) {
            let _ = entry.commands.try_send(actor::Command::Stop);
        }
    }

    fn by_name(&self, name: &str) -> Option<Arc<Entry>> {
        self.entries.locked().values().find(|e| e.server.name == name).cloned()
    }

    fn all(&self) -> Vec<Arc<Entry>> {
        self.entries.locked().values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(json: Value) -> UpstreamServer {
        serde_json::from_value(json).expect("a valid entry")
    }

    #[test]
    fn only_timeout_filter_and_aliases_apply_without_a_new_connection() {
        let base = serde_json::json!({"id": "u", "name": "u", "transport": {"type": "stdio", "command": "up"}});
        let a = server(base.clone());
        let mut tuned = base.clone();
        tuned["timeout_secs"] = 45.into();
        tuned["tool_filter"] = serde_json::json!({"mode": "deny", "patterns": ["x"]});
        tuned["tool_aliases"] = serde_json::json!({"long_name": "short"});
        assert!(same_connection(&a, &server(tuned)));
        for (field, value) in [
            ("name", serde_json::json!("v")),
            ("enabled", serde_json::json!(false)),
            ("transport", serde_json::json!({"type": "stdio", "command": "other"})),
            ("auth", serde_json::json!({"type": "bearer", "token": "t"})),
        ] {
            let mut changed = base.clone();
            changed[field] = value;
            assert!(!same_connection(&a, &server(changed)), "{field} names another connection");
        }
    }
}
