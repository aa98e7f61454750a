//! The opt-in TCP listener ("remote access"): Basic Auth (see `auth.rs`), optional TLS (required
//! off loopback unless `allow_insecure_remote`), connection caps (`admission.rs`), the configured
//! port or the next two when it is taken. It can be restarted on its own when its
//! settings change; the IPC listener never is.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{Mutex, watch};
use tokio::task::JoinHandle;

use super::admission::Admission;
use super::permit::PermitStream;
use super::service::serve_connection;
use crate::config::AppConfig;
use crate::http::Caller;
use crate::limits::{SHUTDOWN_DRAIN, TCP_PORT_ATTEMPTS};
use crate::lock::Recover;
use crate::state::App;

/// Bounds a TLS handshake so a silent client cannot hold a connection slot.
const TLS_HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// After a failed accept (usually: out of file descriptors), so the loop does not spin.
const ACCEPT_ERROR_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

#[derive(Debug, Default)]
pub(crate) struct TcpControl {
    running: Mutex<Option<Running>>,
    address: std::sync::Mutex<Option<SocketAddr>>,
}

#[derive(Debug)]
struct Running {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl TcpControl {
    /// Where the TCP listener is bound, when it runs.
    pub(crate) fn address(&self) -> Option<SocketAddr> {
        *self.address.locked()
    }

    /// Brings the listener in line with the live config: stops it, then starts it again when
    /// remote access is enabled. A failure to start is logged; the IPC listener is unaffected.
    pub(crate) async fn apply(&self, app: &App) {
        if let Err(e) = self.restart(app).await {
            tracing::error!(listener = "tcp", error = %e, "remote access listener not started");
        }
    }

    /// Like [`apply`](Self::apply) but returns the error (startup refuses to run half-configured).
    pub(crate) async fn restart(&self, app: &App) -> Result<(), String> {
        let mut running = self.running.lock().await;
        if let Some(old) = running.take() {
            let _ = old.stop.send(true);
            let _ = old.task.await;
            *self.address.locked() = None;
            tracing::info!(listener = "tcp", "TCP listener stopped");
        }
        let config = app.config.get();
        if !config.services.server.enabled {
            return Ok(());
        }
        let acceptor = crate::config::tls::server_config(&config.services.tls)?
            .map(|tls| tokio_rustls::TlsAcceptor::from(Arc::new(tls)));
        check_plain_http(&config, acceptor.is_some())?;
        let listener = bind(&config, app.port_override).await?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        *self.address.locked() = Some(address);
        let scheme = if acceptor.is_some() { "https" } else { "http" };
        tracing::info!(listener = "tcp", %address, scheme, "TCP listener started (Basic Auth)");
        let (stop, stop_rx) = watch::channel(false);
        let task = tokio::spawn(accept_loop(app.clone(), listener, acceptor, stop_rx));
        *running = Some(Running { stop, task });
        Ok(())
    }

    pub(crate) async fn stop(&self) {
        if let Some(old) = self.running.lock().await.take() {
            let _ = old.stop.send(true);
            let _ = old.task.await;
        }
    }
}

async fn bind(config: &AppConfig, port_override: Option<u16>) -> Result<TcpListener, String> {
    let server = &config.services.server;
    let ip: IpAddr = server.bind_address.parse().map_err(|_| format!("bad bind address {}", server.bind_address))?;
    let first = port_override.unwrap_or(server.port);
    let mut last_error = String::new();
    for offset in 0..TCP_PORT_ATTEMPTS {
        let Some(port) = first.checked_add(offset) else { break };
        match TcpListener::bind((ip, port)).await {
            Ok(listener) => return Ok(listener),
            Err(e) => {
                tracing::warn!(listener = "tcp", port, error = %e, "TCP port unavailable, trying the next");
                last_error = format!("{ip}:{port}: {e}");
            }
        }
    }
    Err(format!("no free port among {first}..{}: {last_error}", first.saturating_add(TCP_PORT_ATTEMPTS - 1)))
}

async fn accept_loop(
    app: App,
    listener: TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    mut stop: watch::Receiver<bool>,
) {
    let graceful = GracefulShutdown::new();
    // Accepting never waits for a free slot (a full listener would leave the real user in the
    // kernel's backlog): admission makes room by closing an unauthenticated connection instead.
    let admission = Arc::new(Admission::default());
    loop {
        let accepted = tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // Out of file descriptors, typically: pause rather than spin on the error.
                tracing::warn!(error = %e, "TCP accept failed");
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                continue;
            }
        };
        let Some(ticket) = admission.admit(peer.ip()) else {
            tracing::debug!(%peer, "refused a TCP connection: every connection slot is authenticated");
            continue;
        };
        let _ = stream.set_nodelay(true);
        let caller = Caller::tcp(peer, acceptor.is_some());
        let slot = ticket.slot.clone();
        match &acceptor {
            None => {
                let caller = caller.on_socket(std::os::fd::AsRawFd::as_raw_fd(&stream));
                serve_connection(
                    app.clone(),
                    caller,
                    PermitStream::new(stream, ticket),
                    graceful.watcher(),
                    Some(slot),
                );
            }
            Some(acceptor) => {
                // The handshake runs on the connection's own task: a client that never finishes
                // it must not hold up the accept loop. The admission deadline covers it too.
                let (app, acceptor, watcher) = (app.clone(), acceptor.clone(), graceful.watcher());
                tokio::spawn(async move {
                    let handshake = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream));
                    let tls = tokio::select! {
                        done = handshake => done,
                        () = slot.must_close() => return,
                    };
                    match tls {
                        Ok(Ok(tls)) => {
                            serve_connection(app, caller, PermitStream::new(tls, ticket), watcher, Some(slot))
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        }
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_DRAIN, graceful.shutdown()).await.is_err() {
        tracing::warn!(listener = "tcp", "connections still open after the drain deadline");
    }
}

/// Plain HTTP on an address other hosts can reach sends the Basic Auth password readable to the
/// network: refused unless the configuration says so in as many words.
fn check_plain_http(config: &AppConfig, tls: bool) -> Result<(), String> {
    let server = &config.services.server;
    let loopback = server.bind_address.parse::<IpAddr>().is_ok_and(|ip| ip.to_canonical().is_loopback());
    if tls || loopback || server.allow_insecure_remote {
        return Ok(());
    }
    Err(format!(
        "remote access on {} without TLS would send the password in clear text: configure services.tls \
         (cert_path, key_path), bind a loopback address, or set services.server.allow_insecure_remote: true",
        server.bind_address
    ))
}
