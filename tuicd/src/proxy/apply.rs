//! `mcp-upstreams.json` in the running daemon: read at boot, saved by `PUT /mcp/upstreams`,
//! re-read on SIGHUP, each time followed by the live registry's `apply_diff`. One lock
//! (`Shared::upstreams_applied`) orders every write with its apply, so the registry sees the
//! changes in the order they were written; it holds the file as last applied (SIGHUP's "before").

use crate::proxy::config::UpstreamsFile;
use crate::proxy::store::{self, StoreError};
use crate::state::App;

/// The file at boot, recorded as applied. A broken file is logged and treated as empty, so a typo
/// there never keeps the daemon from starting; a save or a SIGHUP after the fix applies it.
pub(crate) fn boot(app: &App) -> UpstreamsFile {
    let file = store::load(&app.config_dir).unwrap_or_else(|e| {
        tracing::error!(source = "upstream", error = %e, "mcp-upstreams.json not loaded; no upstreams until it is fixed");
        UpstreamsFile::default()
    });
    // Nothing else holds the lock before the services start.
    if let Ok(mut applied) = app.upstreams_applied.try_lock() {
        *applied = file.clone();
    }
    file
}

/// Saves the change from `base` to `desired` (see [`store::save_delta`]) and applies exactly
/// what the write changed. Runs to the end on its own task, so a caller that goes away never
/// leaves a write unapplied. Returns the file as written.
pub(crate) async fn save(app: &App, base: UpstreamsFile, desired: UpstreamsFile) -> Result<UpstreamsFile, StoreError> {
    let path = store::path(&app.config_dir);
    let app = app.clone();
    let task = tokio::spawn(async move {
        let mut applied = app.upstreams_applied.lock().await;
        let own_port = app.tcp.address().map(|address| address.port());
        let (before, after) = store::save_delta(&app.config_dir, base, desired, own_port).await?;
        if before != after {
            tracing::info!(source = "upstream", servers = after.servers.len(), "mcp-upstreams.json saved");
            app.upstreams.apply_diff(&before, &after);
        }
        *applied = after.clone();
        Ok(after)
    });
    task.await.map_err(|e| StoreError::Io { path, source: std::io::Error::other(e) })?
}

/// SIGHUP: re-reads the file and applies what differs from the file as last applied. A broken
/// file changes nothing and says why.
pub(crate) async fn reload(app: &App) {
    let mut applied = app.upstreams_applied.lock().await;
    match store::read(&app.config_dir).await {
        Ok(next) => {
            tracing::info!(source = "upstream", changed = *applied != next, "SIGHUP: mcp-upstreams.json re-read");
            app.upstreams.apply_diff(&applied, &next);
            *applied = next;
        }
        Err(e) => tracing::error!(
            source = "upstream",
            error = %e,
            "SIGHUP: mcp-upstreams.json not reloaded; the running upstreams are kept"
        ),
    }
}
