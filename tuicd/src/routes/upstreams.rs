//! `GET /mcp/upstreams` (secrets redacted) and `PUT /mcp/upstreams {base, config}`: the three-way
//! save of `mcp-upstreams.json` (see [`crate::proxy::store`]), after which the live registry
//! reconnects exactly the upstreams the write changed.

use serde::Deserialize;

use crate::http::body::{ok_json, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::proxy::config::UpstreamsFile;
use crate::proxy::store::merge::MergeError;
use crate::proxy::store::{self, StoreError, redacted};
use crate::state::App;

/// A save: the snapshot the caller loaded (`GET /mcp/upstreams`'s answer will do, markers and
/// all) and the configuration it wants.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveBody {
    base: UpstreamsFile,
    config: UpstreamsFile,
}

pub(crate) async fn get(app: &App) -> ApiResult {
    let file = store::read(&app.config_dir).await?;
    ok_json(&redacted(&file))
}

pub(crate) async fn put(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("changing the upstream MCP servers")?;
    let body: SaveBody = read_json(req).await?;
    let after = save(app, body.base, body.config).await?;
    ok_json(&serde_json::json!({"ok": true, "config": redacted(&after)}))
}

/// Saves the change from `base` to `desired` (see [`store::save_delta`]) and applies exactly
/// what the write changed, in turn with other saves and SIGHUP (`upstreams_saving`), so the
/// registry sees the writes in order. Runs to the end on its own task: a caller that goes away
/// never leaves a write unapplied. Returns the file as written.
async fn save(app: &App, base: UpstreamsFile, desired: UpstreamsFile) -> Result<UpstreamsFile, StoreError> {
    let path = store::path(&app.config_dir);
    let app = app.clone();
    let task = tokio::spawn(async move {
        let _in_order = app.upstreams_saving.lock().await;
        let own_port = app.tcp.address().map(|address| address.port());
        let (before, after) = store::save_delta(&app.config_dir, base, desired, own_port).await?;
        if before != after {
            tracing::info!(source = "upstream", servers = after.servers.len(), "mcp-upstreams.json saved");
            app.upstreams.apply_diff(&before, &after);
            app.oauth.forget_removed(&before, &after).await;
        }
        Ok(after)
    });
    task.await.map_err(|e| StoreError::Io { path, source: std::io::Error::other(e) })?
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Invalid(_) | StoreError::Refused(_) => ApiError::InvalidField(e.to_string()),
            StoreError::Merge(MergeError::MissingSecret(_) | MergeError::DuplicateBaseId { .. }) => {
                ApiError::InvalidField(e.to_string())
            }
            StoreError::Merge(_) | StoreError::MergedInvalid(_) => ApiError::Conflict(e.to_string()),
            // The file on disk is broken: say which and why, so a person can mend it.
            StoreError::Syntax { .. } | StoreError::Unreadable { .. } => ApiError::Unavailable(e.to_string()),
            StoreError::Io { .. } => ApiError::Internal(anyhow::Error::new(e).context("mcp-upstreams.json")),
        }
    }
}
