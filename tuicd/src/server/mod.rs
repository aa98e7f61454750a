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
        let ipc = IpcListener::bind(&socket_path).await?;
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
        if let Err(e) = app.tcp.restart(&app).await {
            ipc.remove_file();
            anyhow::bail!("remote access is enabled but its listener cannot start: {e}");
        }
        app.upstreams.set_health_interval(options.upstream_health_interval);
        // Upstreams read their OAuth tokens as they connect, so the credential store (the OS
        // keyring's one bounded probe and load, else the file) is opened before they start.
        app.oauth.open_credentials().await;
        app.start_services(options.mcp_session_ttl);
        Ok(Self { app, ipc, stopping, hangup })
    }

    /// Serves until `shutdown` resolves, then stops accepting, ends long-lived streams, drains
    /// in-flight requests and removes the socket file.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        let Self { app, ipc, stopping, hangup } = self;
        reload::spawn(app.clone(), hangup, stopping.subscribe());
        let graceful = GracefulShutdown::new();
        let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        tokio::pin!(shutdown);
        loop {
            let permit = tokio::select! {
                _ = &mut shutdown => break,
                permit = slots.clone().acquire_owned() => permit?,
            };
            let stream = tokio::select! {
                _ = &mut shutdown => break,
                accepted = ipc.listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => { tracing::warn!(error = %e, "IPC accept failed"); continue; }
                },
            };
            let mut caller = Caller::ipc().on_socket(std::os::fd::AsRawFd::as_raw_fd(&stream));
            caller.peer_pid =
                stream.peer_cred().ok().and_then(|cred| cred.pid()).and_then(|pid| u32::try_from(pid).ok());
            service::serve_connection(app.clone(), caller, PermitStream::new(stream, permit), graceful.watcher(), None);
        }
        tracing::info!("shutting down: no new connections; draining in-flight requests");
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
