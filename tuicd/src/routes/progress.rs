//! `GET /progress`: the progress journal agents write (`progress action=report`, and the intents
//! tuicd observes), filtered like `repo action=progress_list`, oldest first.

use serde::Deserialize;

use crate::agent_runtime::journal::Filter;
use crate::http::body::{ok_json, query};
use crate::http::{ApiError, ApiResult, Request};
use crate::limits::PROGRESS_LIST_MAX;
use crate::state::App;

/// Entries `GET /progress` answers when the caller gives no `limit`.
const PROGRESS_DEFAULT_LIMIT: usize = 200;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    project: Option<String>,
    agent: Option<String>,
    /// Entries at or after this time, in ms since the Unix epoch.
    since: Option<u64>,
    /// The newest this many entries.
    limit: Option<usize>,
}

pub(crate) async fn list(app: &App, req: Request) -> ApiResult {
    let params: Params = query(&req)?;
    let limit = params.limit.unwrap_or(PROGRESS_DEFAULT_LIMIT);
    if !(1..=PROGRESS_LIST_MAX).contains(&limit) {
        return Err(ApiError::InvalidField(format!(
            "query string: limit: {limit} is out of range; expected 1 to {PROGRESS_LIST_MAX}"
        )));
    }
    let filter = Filter { project: params.project, agent: params.agent, since: params.since };
    let app = app.clone();
    // The journal is a file: read on the blocking pool.
    let mut entries = tokio::task::spawn_blocking(move || {
        let journal = app.agents.journal(&app.config_dir);
        journal.as_ref().map(|j| j.list(&filter)).unwrap_or_default()
    })
    .await
    .map_err(anyhow::Error::from)?;
    entries.drain(..entries.len().saturating_sub(limit));
    ok_json(&serde_json::json!({ "entries": entries }))
}
