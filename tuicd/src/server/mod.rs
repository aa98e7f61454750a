//! Listeners and the daemon's lifecycle: bind everything first (so errors surface before we
//! claim to be running), then serve until the shutdown signal, then drain.

mod admission;
pub(crate) mod auth;
mod browser;
pub(crate) mod ipc;
mod ownership;
mod permit;
mod reload;
mod repoll;
pub(crate) mod router;
mod rules;
mod service;
pub(crate) mod tcp;
mod upgrade_glue;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::server::graceful::GracefulShutdown;
use tokio::sync::{Semaphore, watch};

use crate::config::ConfigStore;
use crate::http::Caller;
use crate::limits::{MAX_CONNECTIONS, REQUEST_TIMEOUT, SHUTDOWN_DRAIN, SHUTDOWN_SESSIONS};
use crate::paths;
use crate::state::{App, Shared};
use ipc::IpcListener;
use permit::PermitStream;

/// How the daemon is started. `Default` is `tuicd` with no flags.
#[derive(Debug, Clone)]
pub struct Options {
    pub config_dir: PathBuf,
    pub instance: Option<String>,
    /// Outer request deadline; only tests shorten it.
    pub request_timeout: Duration,
    pub port_override: Option<u16>,
    /// How long an unused MCP protocol session lives; only tests shorten it.
    pub mcp_session_ttl: Duration,
    /// How often each upstream MCP server is health-checked; only tests shorten it.
    pub upstream_health_interval: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            config_dir: paths::default_config_dir(),
            instance: None,
            request_timeout: REQUEST_TIMEOUT,
            port_override: None,
            mcp_session_ttl: crate::limits::MCP_SESSION_IDLE_TTL,
            upstream_health_interval: crate::limits::UPSTREAM_HEALTH_INTERVAL,
        }
    }
}

/// A daemon whose listeners are bound and whose config is loaded.
#[derive(Debug)]
pub struct Daemon {
    app: App,
    ipc: IpcListener,
    stopping: watch::Sender<bool>,
    /// SIGHUP, taken over before the socket is bound; handled once serving.
    hangup: tokio::signal::unix::Signal,
    /// When the previous image froze its sessions (Unix ms), after an upgrade in place.
    frozen_unix_ms: Option<u64>,
}

impl Daemon {
    /// Loads the config (refusing a broken one), binds the IPC socket (refusing to steal a live
    /// daemon's), and starts the TCP listener when remote access is on.
    pub async fn bind(options: Options) -> anyhow::Result<Self> {
        ownership::prepare_config_dir(&options.config_dir).map_err(anyhow::Error::msg)?;
        let config = ConfigStore::open(&options.config_dir)?;
        let socket_path = paths::socket_path(&options.config_dir, options.instance.as_deref());
        if let Some(dir) = socket_path.parent().filter(|d| *d != options.config_dir) {
            ownership::claim_private_dir(dir).map_err(anyhow::Error::msg)?;
        }
        let hangup = reload::listen()?;
        let upgrade_signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined2())?;
        let inherited = match crate::upgrade::take_inherited() {
            Some(Ok(inherited)) => Some(inherited),
            Some(Err(e)) => {
                tracing::error!(error = %e, "the previous image's hand-over is unreadable; starting afresh");
                None
            }
            None => None,
        };
        let (ipc, inherited) = match inherited {
            Some((fd, inherited)) => (IpcListener::inherit(fd, &socket_path)?, Some(inherited)),
            None => (IpcListener::bind(&socket_path).await?, None),
        };
        tracing::info!(listener = "ipc", path = %socket_path.display(), "IPC listener bound (always on)");
        let (stopping, shutdown) = watch::channel(false);
        let app = App::new(Shared::new(
            config,
            options.config_dir,
            socket_path,
            shutdown,
            options.request_timeout,
            options.port_override,
        ));
        let keep_dir = paths::keep_dir(&app.socket_path);
        let upgraded = inherited.is_some();
        let (keep, left) = tokio::task::spawn_blocking(move || crate::keep::Keep::open(&keep_dir, upgraded)).await?;
        app.sessions.set_keep(Arc::new(keep));
        let frozen_unix_ms = inherited.as_ref().map(|i| i.frozen_unix_ms);
        if let Some(inherited) = inherited {
            upgrade_glue::take_over(&app, inherited);
        }
        // What the holder has beyond the sessions handed over is a dead daemon's.
        let recovered = app.sessions.recover(left);
        if recovered > 0 {
            tracing::info!(sessions = recovered, "crash recovery: sessions of the previous daemon taken back");
        }
        if let Err(e) = app.tcp.restart(&app).await {
            ipc.remove_file();
            anyhow::bail!("remote access is enabled but its listener cannot start: {e}");
        }
        app.upstreams.set_health_interval(options.upstream_health_interval);
        // Upstreams read their OAuth tokens as they connect, so the credential store (the OS
        // keyring's one bounded probe and load, else the file) is opened before they start.
        app.oauth.open_credentials().await;
        app.start_services(options.mcp_session_ttl);
        upgrade_glue::on_signal(&app, upgrade_signal);
        Ok(Self { app, ipc, stopping, hangup, frozen_unix_ms })
    }

    /// Serves until `shutdown` resolves, then stops accepting, ends long-lived streams, drains
    /// in-flight requests and removes the socket file.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        let Self { app, ipc, stopping, hangup, frozen_unix_ms } = self;
        if let Some(frozen) = frozen_unix_ms {
            let waited = crate::upgrade::since(frozen).as_millis() as u64;
            tracing::info!(since_frozen_ms = waited, "upgraded in place: accepting connections again");
        }
        reload::spawn(app.clone(), hangup, stopping.subscribe());
        let graceful = GracefulShutdown::new();
        let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        let mut upgrades = app.upgrades.take_receiver().ok_or_else(|| anyhow::anyhow!("serve runs once"))?;
        tokio::pin!(shutdown);
        loop {
            let accept = async {
                let permit = slots.clone().acquire_owned().await?;
                anyhow::Ok((ipc.listener.accept().await, permit))
            };
            let (accepted, permit) = tokio::select! {
                _ = &mut shutdown => break,
                Some(reply) = upgrades.recv() => {
                    // Returns only when refused: on success the process image is replaced.
                    let _ = reply.send(upgrade_glue::run(&app, &ipc).await);
                    continue;
                }
                accepted = accept => accepted?,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "IPC accept failed");
                    continue;
                }
            };
            let mut caller = Caller::ipc().on_socket(std::os::fd::AsRawFd::as_raw_fd(&stream));
            caller.peer_pid =
                stream.peer_cred().ok().and_then(|cred| cred.pid()).and_then(|pid| u32::try_from(pid).ok());
            service::serve_connection(app.clone(), caller, PermitStream::new(stream, permit), graceful.watcher(), None);
        }
        tracing::info!("shutting down: no new connections; draining in-flight requests");
        app.upstreams.drain(SHUTDOWN_DRAIN).await;
        ipc.remove_file();
        let _ = stopping.send(true);
        app.tcp.stop().await;
        app.acp.kill_all();
        app.sessions.close_all(proto::session::close_reason::SHUTDOWN, SHUTDOWN_SESSIONS).await;
        if tokio::time::timeout(SHUTDOWN_DRAIN, graceful.shutdown()).await.is_err() {
            tracing::warn!("connections still open after the drain deadline");
        }
        tracing::info!("stopped");
        Ok(())
    }
}
