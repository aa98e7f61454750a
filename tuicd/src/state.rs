//! The shared state every handler sees: a cheap handle around one `Arc`. The composition root:
//! it builds every part of the daemon and starts its background services.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::config::ConfigStore;
use crate::events::EventBus;
use crate::mcp::McpState;
use crate::server::auth::AuthGate;
use crate::server::tcp::TcpControl;
use crate::session::SessionRegistry;

#[derive(Clone)]
pub(crate) struct App {
    inner: Arc<Shared>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").field("config_dir", &self.inner.config_dir).finish_non_exhaustive()
    }
}

pub(crate) struct Shared {
    pub config: ConfigStore,
    pub config_dir: PathBuf,
    pub socket_path: PathBuf,
    pub started: Instant,
    /// Names this process image (`/health`): a fresh one at every start and upgrade in place.
    pub boot_id: String,
    pub events: Arc<EventBus>,
    /// Every PTY session (live and tombstoned).
    pub sessions: SessionRegistry,
    pub auth: AuthGate,
    /// Scoped access tokens for remote callers (see [`crate::principals`]).
    pub tokens: Arc<crate::principals::tokens::TokenStore>,
    pub tcp: TcpControl,
    /// The MCP endpoint: protocol sessions and their GET streams.
    pub mcp: McpState,
    /// Spawned agents, task handles, the progress journal (see [`crate::agent_runtime`]).
    pub agents: crate::agent_runtime::AgentsState,
    /// Peer identities, inboxes and delivery (see [`crate::messaging_runtime`]).
    pub peers: crate::messaging_runtime::Peers,
    /// Requests a connected UI client answers for a person: confirmations (see [`crate::ui`]).
    pub ui: Arc<crate::ui::Ui>,
    /// The registered repositories (see [`crate::repos`]).
    pub repos: Arc<crate::repos::Repos>,
    /// The frontends' output watcher sets, matched on each session's own task.
    pub plugins: Arc<crate::plugins::OutputWatchers>,
    /// OAuth for upstream MCP servers: flows, callback servers, the credential store.
    pub oauth: Arc<crate::proxy::oauth::OAuth>,
    /// Flips to true once when the daemon starts shutting down; long-lived streams end on it.
    pub shutdown: watch::Receiver<bool>,
    pub request_timeout: Duration,
    /// `TUIC_PORT`: overrides `services.server.port` for this process without persisting it.
    pub port_override: Option<u16>,
    /// The upstream MCP servers tuicd proxies (see [`crate::proxy`]).
    pub upstreams: Arc<crate::proxy::registry::Upstreams>,
    /// Held while `mcp-upstreams.json` is saved or re-read and applied to `upstreams`, so the
    /// registry sees the writes in order.
    pub upstreams_saving: tokio::sync::Mutex<()>,
    /// The ACP agents tuicd drives for a person (see [`crate::acp`]).
    pub acp: Arc<crate::acp::Acp>,
    /// Upgrade-in-place requests, served by the serve loop (see [`crate::upgrade`]).
    pub upgrades: crate::upgrade::Requests,
}

impl Shared {
    /// The daemon's state with its parts fresh: one event bus shared by the session registry,
    /// empty MCP, agent and peer state. The one place that lists every part.
    pub(crate) fn new(
        config: ConfigStore,
        config_dir: PathBuf,
        socket_path: PathBuf,
        shutdown: watch::Receiver<bool>,
        request_timeout: Duration,
        port_override: Option<u16>,
    ) -> Self {
        let events = Arc::new(EventBus::new());
        let sessions = SessionRegistry::new(events.clone(), &config_dir);
        let agents = crate::agent_runtime::AgentsState::default();
        let plugins = Arc::new(crate::plugins::OutputWatchers::new(events.clone()));
        // The agent engine attaches to every session from outside the session core.
        let ui = Arc::new(crate::ui::Ui::new(events.clone()));
        let repos = Arc::new(crate::repos::Repos::load(&config_dir));
        let tokens = Arc::new(crate::principals::tokens::TokenStore::load(&config_dir));
        let oauth = Arc::new(crate::proxy::oauth::OAuth::new(
            &config_dir,
            events.clone(),
            ui.clone(),
            crate::proxy::oauth::Timing::from_env(),
        ));
        let upstreams = Arc::new(crate::proxy::registry::Upstreams::new(events.clone(), {
            let oauth = oauth.clone();
            Arc::new(move |server: &crate::proxy::config::UpstreamServer| {
                oauth.bearer_for(server).or_else(|| crate::proxy::registry::static_bearer(server))
            })
        }));
        upstreams.set_stderr_log_dir(crate::paths::upstream_logs_dir(&config_dir));
        oauth.link(upstreams.clone());
        let acp = Arc::new(crate::acp::Acp::new(events.clone(), Some(crate::paths::acp_logs_dir(&config_dir))));
        sessions.set_attach_factory(crate::agent_runtime::attach_factory(
            events.clone(),
            agents.edges.clone(),
            plugins.clone(),
        ));
        Self {
            sessions,
            config,
            config_dir,
            socket_path,
            started: Instant::now(),
            boot_id: uuid::Uuid::new_v4().to_string(),
            events,
            auth: Default::default(),
            tokens,
            tcp: Default::default(),
            mcp: Default::default(),
            agents,
            peers: Default::default(),
            ui,
            repos,
            plugins,
            oauth,
            shutdown,
            request_timeout,
            port_override,
            upstreams,
            upstreams_saving: Default::default(),
            acp,
            upgrades: Default::default(),
        }
    }
}

impl App {
    pub(crate) fn new(shared: Shared) -> Self {
        Self { inner: Arc::new(shared) }
    }

    /// Starts every background service, each until shutdown: the MCP protocol-session reaper
    /// (sessions unused for `mcp_session_ttl` are forgotten), peer delivery, and the progress
    /// journal's intent recorder. Called once, after the listeners are bound.
    pub(crate) fn start_services(&self, mcp_session_ttl: Duration) {
        // The sandbox's Landlock ABI is probed (and logged) at start, not at the first command.
        crate::sandbox::status();
        crate::mcp::spawn_reaper(self, mcp_session_ttl);
        crate::messaging_runtime::start(self);
        tokio::spawn(crate::agent_runtime::progress::record_intents(self.clone()));
        crate::proxy::oauth::spawn_consent_watcher(self.oauth.clone(), self.shutdown.clone());
        self.start_upstreams();
    }

    /// Connects the upstreams of `<config_dir>/mcp-upstreams.json`, starts their health ticker,
    /// and keeps the MCP tool list in step with them.
    fn start_upstreams(&self) {
        let file = crate::proxy::store::load_at_boot(&self.config_dir);
        self.upstreams.apply_diff(&Default::default(), &file);
        crate::proxy::health::spawn(self.upstreams.clone(), self.shutdown.clone());
        crate::mcp::upstream::spawn_watcher(self);
    }

    /// Resolves once the daemon starts shutting down; long-lived streams select on it.
    pub(crate) async fn stopping(&self) {
        let mut shutdown = self.shutdown.clone();
        let _ = shutdown.wait_for(|stopping| *stopping).await;
    }
}

impl std::ops::Deref for App {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.inner
    }
}
