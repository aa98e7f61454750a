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

/// The file, with its revision as the `ETag` a save's `If-Match` names.
pub(crate) async fn get(app: &App) -> ApiResult {
    let file = store::read(&app.config_dir).await?;
    with_etag(ok_json(&redacted(&file))?, &file)
}

/// A save; with `If-Match: "<revision>"` it is refused with 409 unless the file is still at that
/// revision (without it, a stale base is merged: see [`store::save_delta`]).
pub(crate) async fn put(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("changing the upstream MCP servers")?;
    let if_match = if_match(req.headers())?;
    let body: SaveBody = read_json(req).await?;
    let after = save(app, body.base, body.config, if_match).await?;
    with_etag(ok_json(&serde_json::json!({"ok": true, "config": redacted(&after)}))?, &after)
}

/// The revisions `If-Match` accepts (`*` for any), quotes and a weak `W/` taken off.
fn if_match(headers: &http::HeaderMap) -> Result<Option<Vec<String>>, ApiError> {
    let Some(value) = headers.get(http::header::IF_MATCH) else { return Ok(None) };
    let value = value.to_str().map_err(|_| ApiError::InvalidField("If-Match: not a visible ASCII value".into()))?;
    let tags: Vec<String> = value
        .split(',')
        .map(|t| t.trim().trim_start_matches("W/").trim_matches('"').to_owned())
        .filter(|t| !t.is_empty())
        .collect();
    if tags.is_empty() {
        return Err(ApiError::InvalidField(format!(
            "If-Match: {value:?} names no revision; send the ETag of GET /mcp/upstreams, e.g. If-Match: \"0123456789abcdef\""
        )));
    }
    Ok(Some(tags))
}

fn with_etag(mut response: crate::http::Response, file: &UpstreamsFile) -> ApiResult {
    if let Ok(tag) = http::HeaderValue::from_str(&format!("\"{}\"", store::revision(file))) {
        response.headers_mut().insert(http::header::ETAG, tag);
    }
    Ok(response)
}

/// Saves the change from `base` to `desired` (see [`store::save_delta`]) and applies exactly
/// what the write changed, in turn with other saves and SIGHUP (`upstreams_saving`), so the
/// registry sees the writes in order. Runs to the end on its own task: a caller that goes away
/// never leaves a write unapplied. Returns the file as written.
async fn save(
    app: &App,
    base: UpstreamsFile,
    desired: UpstreamsFile,
    if_match: Option<Vec<String>>,
) -> Result<UpstreamsFile, StoreError> {
    let path = store::path(&app.config_dir);
    let app = app.clone();
    let task = tokio::spawn(async move {
        let _in_order = app.upstreams_saving.lock().await;
        let own_port = app.tcp.address().map(|address| address.port());
        let (before, after) = store::save_delta(&app.config_dir, base, desired, own_port, if_match).await?;
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
            StoreError::Merge(_) | StoreError::MergedInvalid(_) | StoreError::Stale { .. } => {
                ApiError::Conflict(e.to_string())
            }
            // The file on disk is broken: say which and why, so a person can mend it.
            StoreError::Syntax { .. } | StoreError::Unreadable { .. } => ApiError::Unavailable(e.to_string()),
            StoreError::Io { .. } => ApiError::Internal(anyhow::Error::new(e).context("mcp-upstreams.json")),
        }
    }
}
