//! `/repo/*` REST: git reads of one work tree (`info`, `diff`, `diff-stats`, `changed-files`,
//! `branches`). Each names the work tree with `?path=`; a remote caller may read only registered
//! repositories.

use std::path::PathBuf;

use serde::Deserialize;

use super::repos::repo_error;
use crate::http::body::{ok_json, query};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::repos::read;
use crate::state::App;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathQuery {
    path: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DiffQuery {
    path: String,
    /// Only the staged changes (`git diff --cached`).
    #[serde(default)]
    staged: bool,
    /// One file's diff only (a path relative to the work tree).
    file: Option<String>,
}

/// The work tree `path` names: validated, readable by `caller`, and marked as used.
pub(crate) fn work_tree(app: &App, caller: &Caller, path: &str) -> Result<PathBuf, ApiError> {
    let root = crate::repos::work_tree_root(path).map_err(repo_error)?;
    if !caller.is_loopback() && !app.repos.roots().contains(&root) {
        return Err(ApiError::LoopbackOnly(format!(
            "reading {}, which is not a registered repository,",
            root.display()
        )));
    }
    app.repos.touch(&root);
    Ok(root)
}

pub(crate) async fn info(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let q: PathQuery = query(&req)?;
    let root = work_tree(app, caller, &q.path)?;
    ok_json(&read::status(&root).await.map_err(repo_error)?)
}

pub(crate) async fn diff(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let q: DiffQuery = query(&req)?;
    let root = work_tree(app, caller, &q.path)?;
    ok_json(&read::diff(&root, q.staged, q.file.as_deref()).await.map_err(repo_error)?)
}

pub(crate) async fn diff_stats(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let q: DiffQuery = query(&req)?;
    if q.file.is_some() {
        return Err(ApiError::InvalidField(
            "file: diff-stats covers the whole work tree; use /repo/diff for one file".into(),
        ));
    }
    let root = work_tree(app, caller, &q.path)?;
    ok_json(&read::diff_stats(&root, q.staged).await.map_err(repo_error)?)
}

pub(crate) async fn changed_files(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let q: PathQuery = query(&req)?;
    let root = work_tree(app, caller, &q.path)?;
    ok_json(&read::changed_files(&root).await.map_err(repo_error)?)
}

pub(crate) async fn branches(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let q: PathQuery = query(&req)?;
    let root = work_tree(app, caller, &q.path)?;
    ok_json(&serde_json::json!({"branches": read::branches(&root).await.map_err(repo_error)?}))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConflictAssistBody {
    #[serde(alias = "repoPath", alias = "repo_path")]
    path: String,
    #[serde(alias = "branchName")]
    branch: String,
    /// What to rebase onto (default: origin/HEAD's branch, else main or master).
    #[serde(alias = "baseRef", alias = "base_ref")]
    base: Option<String>,
}

/// A worktree plus a rebase onto the base: verified clean, unverified clean, or the conflicts.
/// Loopback only: it creates a worktree.
pub(crate) async fn conflict_assist(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("conflict assist")?;
    let body: ConflictAssistBody = crate::http::body::read_json(req).await?;
    let root = work_tree(app, caller, &body.path)?;
    let root = root.display().to_string();
    ok_json(&crate::repos::conflict::assist(&root, &body.branch, body.base.as_deref()).await.map_err(repo_error)?)
}
