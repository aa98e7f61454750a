//! `/repos` REST: the registered repositories (list, add, remove). Adding and removing are
//! loopback-only: the list is also the set of roots the file routes may reach.

use http::StatusCode;
use serde::{Deserialize, Serialize};

use crate::http::body::{json_response, ok_json, query, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::repos::{RepoEntry, RepoError};
use crate::state::App;

/// One repository as the routes and the `repo` tool show it.
#[derive(Debug, Serialize)]
pub(crate) struct RepoView {
    pub path: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_ms: Option<u64>,
}

impl From<&RepoEntry> for RepoView {
    fn from(entry: &RepoEntry) -> Self {
        Self { path: entry.path.display().to_string(), name: entry.name(), last_used_ms: entry.last_used_ms }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathBody {
    path: String,
}

/// The error a repository failure answers over REST.
pub(crate) fn repo_error(e: RepoError) -> ApiError {
    match e {
        RepoError::InvalidPath(m) => ApiError::InvalidField(m),
        RepoError::NotFound(m) => ApiError::NotFound(m),
        RepoError::NotARepo(m) | RepoError::Bare(m) => ApiError::BadRequest(m),
        RepoError::Unavailable(m) => ApiError::Unavailable(m),
        RepoError::Failed(m) => ApiError::Internal(anyhow::anyhow!(m)),
    }
}

pub(crate) async fn list(app: &App) -> ApiResult {
    let repos: Vec<RepoView> = app.repos.list().iter().map(RepoView::from).collect();
    ok_json(&repos)
}

pub(crate) async fn add(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("registering a repository")?;
    let body: PathBody = read_json(req).await?;
    let entry = app.repos.add(&body.path).map_err(repo_error)?;
    Ok(json_response(StatusCode::CREATED, &RepoView::from(&entry)))
}

pub(crate) async fn remove(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("removing a repository")?;
    let params: PathBody = query(&req)?;
    let entry = app.repos.remove(&params.path).map_err(repo_error)?;
    ok_json(&serde_json::json!({"ok": true, "path": entry.path.display().to_string()}))
}
