//! GitHub REST routes through `gh` (`/repo/github-status`, `/repo/pr-statuses`, `/repo/ci-checks`,
//! `/repo/merged-prs`, `/repo/create-pr`, `/repo/create-issue`, `/repo/post-pr-review`). The
//! repository must be registered (its path goes through the file gate). The writes run at once
//! for a caller on this machine; a remote caller needs a person's confirmation on a UI client.

use std::path::PathBuf;

use serde::Deserialize;

use crate::github::{self, NewIssue, NewPr, Review};
use crate::http::body::{ok_json, query, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request, Transport};
use crate::state::App;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathQuery {
    path: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChecksQuery {
    path: String,
    branch: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MergedQuery {
    path: String,
    since_tag: Option<String>,
}

/// A registered repository's directory, by its path (or a path inside it).
pub(crate) fn repo_dir(app: &App, field: &str, raw: &str) -> Result<PathBuf, ApiError> {
    let dir = super::fs::gate(app).existing(field, raw)?;
    if !dir.is_dir() {
        return Err(ApiError::InvalidField(format!("{field}: {raw} is not a directory")));
    }
    Ok(dir)
}

pub(crate) async fn status(app: &App, req: Request) -> ApiResult {
    let q: PathQuery = query(&req)?;
    let dir = repo_dir(app, "path", &q.path)?;
    ok_json(&github::status(&dir).await?)
}

pub(crate) async fn pr_statuses(app: &App, req: Request) -> ApiResult {
    let q: PathQuery = query(&req)?;
    let dir = repo_dir(app, "path", &q.path)?;
    ok_json(&github::pr_statuses(&dir).await?)
}

pub(crate) async fn ci_checks(app: &App, req: Request) -> ApiResult {
    let q: ChecksQuery = query(&req)?;
    let dir = repo_dir(app, "path", &q.path)?;
    ok_json(&github::ci_checks(&dir, q.branch.as_deref()).await?)
}

pub(crate) async fn merged_prs(app: &App, req: Request) -> ApiResult {
    let q: MergedQuery = query(&req)?;
    let dir = repo_dir(app, "path", &q.path)?;
    ok_json(&github::merged_prs(&dir, q.since_tag.as_deref()).await?)
}

pub(crate) async fn create_pr(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let pr: NewPr = read_json(req).await?;
    let dir = repo_dir(app, "repoPath", &pr.repo_path)?;
    allow_write(app, caller, format!("create the pull request '{}' in {}", pr.title, dir.display())).await?;
    ok_json(&github::create_pr(&dir, &pr).await?)
}

pub(crate) async fn create_issue(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let issue: NewIssue = read_json(req).await?;
    let dir = repo_dir(app, "repoPath", &issue.repo_path)?;
    allow_write(app, caller, format!("create the issue '{}' in {}", issue.title, dir.display())).await?;
    ok_json(&github::create_issue(&dir, &issue).await?)
}

pub(crate) async fn post_pr_review(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let review: Review = read_json(req).await?;
    let dir = repo_dir(app, "repoPath", &review.repo_path)?;
    let what = format!(
        "post a {} review with {} comment(s) on pull request #{} in {}",
        review.event,
        review.comments.len(),
        review.pr_number,
        dir.display()
    );
    allow_write(app, caller, what).await?;
    ok_json(&github::post_pr_review(&dir, &review).await?)
}

/// A caller on this machine writes at once; a remote one needs a person's confirmation (the
/// GitHub writes here and the AI routes' issue creation).
pub(super) async fn allow_write(app: &App, caller: &Caller, what: String) -> Result<(), ApiError> {
    let Transport::Tcp { peer, .. } = caller.transport else { return Ok(()) };
    if caller.is_loopback() {
        return Ok(());
    }
    let requester = format!("REST caller over remote access from {}", peer.ip());
    Ok(github::confirm_write(&app.ui, requester, what).await?)
}
