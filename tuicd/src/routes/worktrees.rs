//! `/worktrees` REST: create, remove, list a repository's worktree paths, one workspace's
//! lifecycle verdict, and running a script in a work tree. Creating, removing and running a
//! script are loopback-only; a forced remove from anyone but a loopback REST caller needs a
//! person's confirmation.

use std::path::Path;
use std::time::Duration;

use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use super::repos::repo_error;
use crate::http::body::{json_response, ok_json, query, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::limits::WORKTREE_SCRIPT_TIMEOUT;
use crate::repos::script;
use crate::repos::worktree::{self, CreateRequest, RemoveRequest, SessionDir};
use crate::state::App;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    #[serde(alias = "repoPath", alias = "repo_path")]
    base_repo: String,
    #[serde(alias = "branchName", alias = "branch_name")]
    branch: String,
    #[serde(alias = "baseRef")]
    base_ref: Option<String>,
    #[serde(alias = "setupScript")]
    setup_script: Option<String>,
}

pub(crate) async fn create(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("creating a worktree")?;
    let body: CreateBody = read_json(req).await?;
    let request = CreateRequest {
        base_repo: body.base_repo,
        branch: body.branch,
        base_ref: body.base_ref,
        setup_script: body.setup_script,
    };
    let created = worktree::create_announced(&request, &app.events).await.map_err(repo_error)?;
    app.repos.touch(Path::new(&created.repo_path));
    Ok(json_response(StatusCode::CREATED, &created))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RemoveBody {
    #[serde(alias = "worktreePath", alias = "path")]
    worktree_path: String,
    #[serde(default)]
    force: bool,
    #[serde(default, alias = "deleteBranch")]
    delete_branch: bool,
}

pub(crate) async fn remove(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("removing a worktree")?;
    let body: RemoveBody = read_json(req).await?;
    // A loopback REST caller is the person at this machine (or their own script): its `force` is
    // its confirmation. `require_loopback` above leaves no other REST caller.
    let request = RemoveRequest {
        worktree_path: body.worktree_path,
        force: body.force,
        delete_branch: body.delete_branch,
        sessions: SessionDir::of_live(&app.sessions),
    };
    ok_json(&worktree::remove_announced(&request, &app.events).await.map_err(repo_error)?)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathQuery {
    path: String,
}

/// Linked-worktree paths keyed by workspace id, each with its kind.
pub(crate) async fn paths(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let q: PathQuery = query(&req)?;
    let root = super::repo::work_tree(app, caller, &q.path)?;
    let all = worktree::list(&worktree::main_work_tree(&root)).await.map_err(repo_error)?;
    let mut paths = serde_json::Map::new();
    for w in all {
        let mut entry = json!({"path": w.worktree.path, "kind": w.kind});
        if let Some(branch) = w.worktree.branch {
            entry["branch"] = branch.into();
        }
        if w.worktree.prunable {
            entry["prunable"] = true.into();
        }
        paths.insert(w.workspace_id, entry);
    }
    ok_json(&json!({"paths": paths}))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LifecycleQuery {
    #[serde(rename = "repoPath", alias = "repo_path")]
    repo_path: String,
    #[serde(rename = "workspaceId", alias = "workspace_id")]
    workspace_id: String,
}

pub(crate) async fn lifecycle(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let q: LifecycleQuery = query(&req)?;
    super::repo::work_tree(app, caller, &q.repo_path)?;
    ok_json(&worktree::lifecycle(&q.repo_path, &q.workspace_id).await.map_err(repo_error)?)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunScriptBody {
    /// The directory to run in: a git work tree (a worktree or a repository).
    #[serde(alias = "cwd", alias = "worktreePath", alias = "worktree_path")]
    path: String,
    script: String,
    /// A shorter deadline than [`WORKTREE_SCRIPT_TIMEOUT`] (never a longer one).
    timeout_ms: Option<u64>,
}

pub(crate) async fn run_script(caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("running a script")?;
    let body: RunScriptBody = read_json(req).await?;
    let dir = crate::repos::work_tree_root(&body.path).map_err(repo_error)?;
    let timeout = match body.timeout_ms {
        Some(0) => return Err(ApiError::InvalidField("timeout_ms: must be at least 1".into())),
        Some(ms) => Duration::from_millis(ms).min(WORKTREE_SCRIPT_TIMEOUT),
        None => WORKTREE_SCRIPT_TIMEOUT,
    };
    let result = script::run(&dir, &body.script, timeout).await.map_err(|e| match e {
        crate::repos::RepoError::InvalidPath(m) => ApiError::InvalidField(format!("script: {m}")),
        other => repo_error(other),
    })?;
    ok_json(&result)
}
