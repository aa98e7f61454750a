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

use super::config::{UpstreamAuth, UpstreamServer, UpstreamsFile};
use super::health::Breaker;
use super::http::HttpClient;
use super::stdio::StdioClient;
use super::wire::{BearerSource, ConnectCtx, Handshake, RequestOpts, StaticBearer, UpstreamError};
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

    /// Whether the transport can tell which request a notification belongs to (and so wants
    /// `RequestOpts::related`); stdio cannot, its notifications all come through the supervisor.
    fn takes_related(&self) -> bool {
        match self {
            Client::Stdio(_) => false,
            Client::Http(_) => true,
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
    server: UpstreamServer,
    state: Mutex<EntryState>,
    commands: mpsc::Sender<actor::Command>,
    /// Calls in flight, each with the sender of its caller's related notifications (logging).
    callers: Mutex<HashMap<u64, Deliver>>,
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

impl Entry {
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
                health_interval: Mutex::new(crate::limits::UPSTREAM_HEALTH_INTERVAL),
                stderr_logs: Mutex::default(),
            }),
            booted: Instant::now(),
        }
    }

    /// Disconnects removed or changed upstreams and connects added or changed ones: exactly
    /// what differs between `before` and `after` (by id). Needs a tokio runtime.
    pub(crate) fn apply_diff(&self, before: &UpstreamsFile, after: &UpstreamsFile) {
        let mut ids: Vec<&str> = before.servers.iter().chain(&after.servers).map(|s| s.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut entries = self.entries.locked();
        let mut changed = false;
        for id in ids {
            let (old, new) = (before.by_id(id), after.by_id(id));
            if old == new && entries.get(id).is_some_and(|e| Some(&e.server) == new) {
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
        UpstreamsFile { servers: self.entries.locked().values().map(|e| e.server.clone()).collect() }
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
