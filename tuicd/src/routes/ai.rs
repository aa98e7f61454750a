//! The GitHub Ops AI routes, through the headless agent slot ([`crate::ai`]):
//! `POST /ai/review/pr`, `GET /repo/changelog`, `POST /ai/improvements/scan` and
//! `POST /repo/create-issue-from-proposal`. The repository must be registered (its path goes
//! through the file gate, as the GitHub routes'); every field is checked before anything runs.
//! Issue creation is a GitHub write: at once for a caller on this machine, with a person's
//! confirmation for a remote one (as `/repo/create-issue`); the scan never creates issues.

use serde::Deserialize;

use super::github::{allow_write, repo_dir};
use crate::ai::tasks::{self, Focus, Proposal};
use crate::ai::{Slot, context};
use crate::github::{self, NewIssue};
use crate::http::body::{ok_json, query, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::state::App;

/// The event a finished scan publishes on `/events`, its payload the scan's answer.
pub(crate) const PROPOSALS_READY: &str = "proposals-ready";
/// The longest proposal description made into an issue body (room left for the files list).
const DESCRIPTION_MAX_BYTES: usize = 60_000;

/// The slot the `headless_agent` setting names now (read at each request).
fn slot(app: &App) -> Result<Slot, ApiError> {
    let setting = app.config.get().headless_agent.clone();
    Slot::from_setting(&setting, app.config_dir.join("headless")).map_err(ApiError::from)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReviewBody {
    repo_path: String,
    pr_number: u64,
}

pub(crate) async fn review_pr(app: &App, req: Request) -> ApiResult {
    let body: ReviewBody = read_json(req).await?;
    if body.pr_number == 0 {
        return Err(ApiError::InvalidField("prNumber must be 1 or more".into()));
    }
    let dir = repo_dir(app, "repoPath", &body.repo_path)?;
    let slot = slot(app)?;
    let diff = context::pr_diff(&dir, body.pr_number).await?;
    if diff.text.trim().is_empty() {
        return Err(ApiError::Conflict(format!(
            "pull request #{} has an empty diff: nothing to review",
            body.pr_number
        )));
    }
    ok_json(&tasks::review_pr(&slot, body.pr_number, &diff).await?)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ChangelogQuery {
    path: String,
    since_tag: Option<String>,
}

pub(crate) async fn changelog(app: &App, req: Request) -> ApiResult {
    let q: ChangelogQuery = query(&req)?;
    let dir = repo_dir(app, "path", &q.path)?;
    let slot = slot(app)?;
    let since_tag = q.since_tag.as_deref().filter(|t| !t.is_empty());
    let merged = github::merged_prs(&dir, since_tag).await?;
    ok_json(&tasks::changelog(&slot, since_tag, &merged).await?)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ScanBody {
    repo_path: String,
    focus: Focus,
}

pub(crate) async fn scan(app: &App, req: Request) -> ApiResult {
    let body: ScanBody = read_json(req).await?;
    let dir = repo_dir(app, "repoPath", &body.repo_path)?;
    let slot = slot(app)?;
    let local = context::local(&dir).await.map_err(super::repos::repo_error)?;
    let result = tasks::scan(&slot, dir.display().to_string(), body.focus, &local).await?;
    app.events.publish(PROPOSALS_READY, &result);
    ok_json(&result)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FromProposalBody {
    repo_path: String,
    proposal: Proposal,
}

pub(crate) async fn create_issue_from_proposal(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let body: FromProposalBody = read_json(req).await?;
    tasks::check_title(&body.proposal.title).map_err(|why| ApiError::InvalidField(format!("proposal.{why}")))?;
    if body.proposal.description.trim().is_empty() {
        return Err(ApiError::InvalidField("proposal.description must not be empty".into()));
    }
    if body.proposal.description.len() > DESCRIPTION_MAX_BYTES {
        return Err(ApiError::InvalidField(format!(
            "proposal.description is longer than {DESCRIPTION_MAX_BYTES} bytes (GitHub's issue body limit is 65536 characters)"
        )));
    }
    let dir = repo_dir(app, "repoPath", &body.repo_path)?;
    let title = body.proposal.title.trim().to_owned();
    let issue = NewIssue { repo_path: body.repo_path, title, body: tasks::issue_body(&body.proposal) };
    let what = format!("create the issue '{}' (from an improvement proposal) in {}", issue.title, dir.display());
    allow_write(app, caller, what).await?;
    ok_json(&github::create_issue(&dir, &issue).await?)
}
