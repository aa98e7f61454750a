//! SIGHUP (`systemctl reload`): re-read `config.json` and `mcp-upstreams.json` and apply them as
//! `PUT /config` and `PUT /mcp/upstreams` apply a change. Sessions, the IPC listener and every
//! client connection are untouched; a broken file is refused with the reason logged and what runs kept.

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;

use crate::state::App;

/// Takes SIGHUP over from its default action (which ends the process). Called before the socket
/// is bound, so a reload sent as soon as the socket answers never stops the daemon.
pub(super) fn listen() -> anyhow::Result<Signal> {
    Ok(signal(SignalKind::hangup())?)
}

/// Handles the SIGHUPs `hangup` receives until the daemon stops.
pub(super) fn spawn(app: App, mut hangup: Signal, mut stopping: watch::Receiver<bool>) {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stopping.wait_for(|s| *s) => return,
                received = hangup.recv() => if received.is_none() { return },
            }
            reload(&app).await;
        }
    });
}

async fn reload(app: &App) {
    match app.config.reload() {
        Ok((previous, next)) => {
            tracing::info!(changed = previous != next, "SIGHUP: config.json re-read; sessions kept");
            crate::config::apply::apply_changes(app, &previous, &next).await;
        }
        Err(e) => tracing::error!(error = %e, "SIGHUP: config.json not reloaded; the running config is kept"),
    }
    reload_upstreams(app).await;
}

/// Re-reads `mcp-upstreams.json` and applies what differs from what runs, in turn with saves
/// (`upstreams_saving`). A broken file changes nothing and says why.
async fn reload_upstreams(app: &App) {
    let _in_order = app.upstreams_saving.lock().await;
    match crate::proxy::store::read(&app.config_dir).await {
        Ok(next) => {
            tracing::info!(source = "upstream", servers = next.servers.len(), "SIGHUP: mcp-upstreams.json re-read");
            let before = app.upstreams.current_file();
            app.upstreams.reload(&next);
            app.oauth.forget_removed(&before, &next).await;
        }
        Err(e) => tracing::error!(
            source = "upstream",
            error = %e,
            "SIGHUP: mcp-upstreams.json not reloaded; the running upstreams are kept"
        ),
    }
}
