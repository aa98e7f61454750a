//! SIGHUP (`systemctl reload`): re-read `config.json` and `mcp-upstreams.json` and apply them as
//! `PUT /config` and `PUT /mcp/upstreams` apply a change. Sessions, the IPC listener and every
//! client connection are untouched; a broken file is refused with the reason logged and what runs kept.

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

use crate::state::App;

/// Listens for SIGHUP until the daemon stops.
pub(super) fn spawn(app: App, mut stopping: watch::Receiver<bool>) -> anyhow::Result<()> {
    let mut hangup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stopping.wait_for(|s| *s) => return,
                received = hangup.recv() => if received.is_none() { return },
            }
            reload(&app).await;
        }
    });
    Ok(())
}

async fn reload(app: &App) {
    match app.config.reload() {
        Ok((previous, next)) => {
            tracing::info!(changed = previous != next, "SIGHUP: config.json re-read; sessions kept");
            crate::config::apply::apply_changes(app, &previous, &next).await;
        }
        Err(e) => tracing::error!(error = %e, "SIGHUP: config.json not reloaded; the running config is kept"),
    }
    crate::proxy::apply::reload(app).await;
}
