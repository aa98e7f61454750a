//! GitHub through the `gh` CLI: read the repository, its pull requests, CI checks and issues;
//! create pull requests and issues, post reviews, close and reopen issues. Each call runs `gh` in
//! the repository's directory with a deadline ([`GH_CALL_TIMEOUT`]) and never prompts.
//!
//! Without `gh` on the daemon's PATH, or without its login, every operation answers
//! [`GhError::Missing`] / [`GhError::NotLoggedIn`], naming the command that fixes it. Whether a
//! write may run (the confirmation) is the caller's decision, made before it calls in here.

mod confirm;
mod parse;
mod run;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub(crate) use confirm::confirm_write;
pub(crate) use parse::{Check, CheckSummary, Created, Issue, PrStatus, RepoStatus};
use run::{Output, RunError};

use crate::limits::{GH_CALL_TIMEOUT, GH_OUTPUT_MAX_BYTES};

/// Why a GitHub operation did not answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GhError {
    #[error(
        "the GitHub CLI 'gh' is not installed (not found on the daemon's PATH); install it from https://cli.github.com, then run `gh auth login`"
    )]
    Missing,
    #[error("the GitHub CLI 'gh' is not logged in to GitHub; run `gh auth login` ({0})")]
    NotLoggedIn(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotConfirmed(String),
    #[error("gh {command} failed: {message}")]
    Failed { command: String, message: String },
}

/// Environment every `gh` call gets: no prompt, no pager, no colour, no update check.
pub(crate) const GH_ENV: &[(&str, &str)] = &[
    ("GH_PROMPT_DISABLED", "1"),
    ("GH_NO_UPDATE_NOTIFIER", "1"),
    ("GH_SPINNER_DISABLED", "1"),
    ("GH_PAGER", "cat"),
    ("NO_COLOR", "1"),
    ("CLICOLOR", "0"),
];

/// gh's exit code when the command needs a login it does not have.
const GH_EXIT_AUTH: i32 = 4;
/// `gh pr checks`' exit code while some checks are still pending (its JSON is complete).
const GH_EXIT_CHECKS_PENDING: i32 = 8;

async fn gh(cwd: &Path, args: &[&str], stdin: Option<Vec<u8>>) -> Result<Output, GhError> {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let command = args.iter().take(2).cloned().collect::<Vec<_>>().join(" ");
    let out = run::run("gh", &args, cwd, GH_ENV, stdin, GH_CALL_TIMEOUT).await.map_err(|e| match e {
        RunError::NotFound { .. } => GhError::Missing,
        other => GhError::Failed { command: command.clone(), message: other.to_string() },
    })?;
    let stderr = out.stderr.trim();
    if out.code == Some(GH_EXIT_AUTH) || stderr.contains("gh auth login") {
        return Err(GhError::NotLoggedIn(first_line(stderr)));
    }
    if out.stdout_truncated {
        // Cut JSON does not parse: name the bound, not the parse error it would cause.
        return Err(GhError::Failed { command, message: over_bound() });
    }
    Ok(out)
}

/// Runs `gh args` and answers its stdout when it exited 0 (or with one of `also_ok`).
async fn gh_ok(cwd: &Path, args: &[&str], stdin: Option<Vec<u8>>, also_ok: &[i32]) -> Result<String, GhError> {
    let out = gh(cwd, args, stdin).await?;
    if out.code == Some(0) || out.code.is_some_and(|c| also_ok.contains(&c)) {
        return Ok(out.stdout);
    }
    let command = args.iter().take(2).copied().collect::<Vec<_>>().join(" ");
    let message = match first_line(out.stderr.trim()) {
        m if m.is_empty() => format!("exit code {:?}", out.code),
        m => m,
    };
    Err(GhError::Failed { command, message })
}

/// Why a `gh` answer past its output bound is refused.
fn over_bound() -> String {
    format!(
        "its output passed the {} MiB bound ({GH_OUTPUT_MAX_BYTES} bytes) and was cut there, so it was not read; ask for less",
        GH_OUTPUT_MAX_BYTES / (1024 * 1024)
    )
}

fn first_line(text: &str) -> String {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned()
}

fn parsed<T>(command: &str, result: Result<T, String>) -> Result<T, GhError> {
    result.map_err(|message| GhError::Failed { command: command.into(), message })
}

/// A value passed to gh as an argument must not read as a flag.
fn plain<'a>(field: &str, value: &'a str) -> Result<&'a str, GhError> {
    let value = value.trim();
    if value.is_empty() || value.starts_with('-') || value.chars().any(char::is_control) {
        return Err(GhError::Invalid(format!(
            "{field}: '{value}' is not a valid name (empty, a leading '-', or a control character)"
        )));
    }
    Ok(value)
}

/// `GET /repo/github-status`: the GitHub repository behind `cwd`.
pub(crate) async fn status(cwd: &Path) -> Result<RepoStatus, GhError> {
    let fields = "nameWithOwner,url,defaultBranchRef,visibility,viewerPermission";
    let stdout = gh_ok(cwd, &["repo", "view", "--json", fields], None, &[]).await?;
    parsed("repo view", parse::repo_status(&stdout))
}

const PR_FIELDS: &str =
    "number,title,url,state,isDraft,headRefName,baseRefName,author,reviewDecision,mergeable,labels,statusCheckRollup";

/// `GET /repo/pr-statuses`, `repo action=prs`: open pull requests with their CI summary.
pub(crate) async fn pr_statuses(cwd: &Path) -> Result<Vec<PrStatus>, GhError> {
    let stdout =
        gh_ok(cwd, &["pr", "list", "--state", "open", "--limit", "100", "--json", PR_FIELDS], None, &[]).await?;
    parsed("pr list", parse::pr_list(&stdout))
}

/// The checks of one branch's pull request, with their summary.
#[derive(Debug, Serialize)]
pub(crate) struct Checks {
    pub checks: Vec<Check>,
    pub summary: CheckSummary,
}

/// `GET /repo/ci-checks`: the CI checks of `branch`'s pull request (the checked-out branch's
/// when none is given).
pub(crate) async fn ci_checks(cwd: &Path, branch: Option<&str>) -> Result<Checks, GhError> {
    let mut args = vec!["pr", "checks"];
    if let Some(branch) = branch {
        args.push(plain("branch", branch)?);
    }
    args.extend(["--json", "name,state,bucket,link,workflow,description"]);
    // gh exits 1 when a check failed and 8 while some are pending; its JSON is whole either way.
    let out = gh(cwd, &args, None).await?;
    match parse::checks(&out.stdout) {
        Ok((checks, summary)) => Ok(Checks { checks, summary }),
        Err(_) if out.code != Some(0) && out.code != Some(GH_EXIT_CHECKS_PENDING) => {
            Err(GhError::Failed { command: "pr checks".into(), message: first_line(out.stderr.trim()) })
        }
        Err(message) => Err(GhError::Failed { command: "pr checks".into(), message }),
    }
}

/// `GET /repo/merged-prs`: pull requests merged since `since_tag` was committed (all merged ones,
/// newest 200, without it): the changelog's source.
pub(crate) async fn merged_prs(cwd: &Path, since_tag: Option<&str>) -> Result<Vec<PrStatus>, GhError> {
    let fields = "number,title,url,state,isDraft,headRefName,baseRefName,author,labels,mergedAt";
    let mut args = vec!["pr", "list", "--state", "merged", "--limit", "200", "--json", fields];
    let search;
    if let Some(tag) = since_tag {
        let date = tag_date(cwd, plain("sinceTag", tag)?).await?;
        search = format!("merged:>{date}");
        args.extend(["--search", search.as_str()]);
    }
    let stdout = gh_ok(cwd, &args, None, &[]).await?;
    parsed("pr list", parse::pr_list(&stdout))
}

/// The commit date of `tag` (strict ISO 8601), read with git.
async fn tag_date(cwd: &Path, tag: &str) -> Result<String, GhError> {
    let args = ["log", "-1", "--format=%cI", &format!("refs/tags/{tag}"), "--"].map(str::to_owned);
    let out = run::run("git", &args, cwd, &[], None, GH_CALL_TIMEOUT)
        .await
        .map_err(|e| GhError::Failed { command: "git log".into(), message: e.to_string() })?;
    match out.stdout.trim() {
        date if out.code == Some(0) && !date.is_empty() => Ok(date.to_owned()),
        _ => Err(GhError::Invalid(format!("sinceTag: there is no tag '{tag}' in this repository"))),
    }
}

/// `POST /repo/create-pr`, in tuic-wire's field names.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NewPr {
    pub repo_path: String,
    pub title: String,
    #[serde(default)]
    pub body: String,
    pub base: Option<String>,
    pub head: Option<String>,
    #[serde(default)]
    pub draft: bool,
}

pub(crate) async fn create_pr(cwd: &Path, pr: &NewPr) -> Result<Created, GhError> {
    let title = required("title", &pr.title)?;
    let mut args = vec!["pr", "create", "--title", title, "--body", pr.body.as_str()];
    if let Some(base) = &pr.base {
        args.extend(["--base", plain("base", base)?]);
    }
    if let Some(head) = &pr.head {
        args.extend(["--head", plain("head", head)?]);
    }
    if pr.draft {
        args.push("--draft");
    }
    let stdout = gh_ok(cwd, &args, None, &[]).await?;
    parsed("pr create", parse::created(&stdout))
}

/// `POST /repo/create-issue`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NewIssue {
    pub repo_path: String,
    pub title: String,
    #[serde(default)]
    pub body: String,
}

pub(crate) async fn create_issue(cwd: &Path, issue: &NewIssue) -> Result<Created, GhError> {
    let title = required("title", &issue.title)?;
    let stdout = gh_ok(cwd, &["issue", "create", "--title", title, "--body", issue.body.as_str()], None, &[]).await?;
    parsed("issue create", parse::created(&stdout))
}

fn required<'a>(field: &str, value: &'a str) -> Result<&'a str, GhError> {
    if value.trim().is_empty() { Err(GhError::Invalid(format!("{field} must not be empty"))) } else { Ok(value) }
}

/// `POST /repo/post-pr-review`: a review with inline comments, posted through GitHub's REST API.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Review {
    pub repo_path: String,
    pub pr_number: u64,
    #[serde(default)]
    pub body: String,
    /// APPROVE, REQUEST_CHANGES or COMMENT (any case).
    pub event: String,
    #[serde(default)]
    pub comments: Vec<ReviewComment>,
}

/// One inline comment: GitHub's review comment fields.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviewComment {
    pub path: String,
    pub line: u64,
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u64>,
}

/// What a posted review answers.
#[derive(Debug, Serialize)]
pub(crate) struct PostedReview {
    pub id: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

pub(crate) async fn post_pr_review(cwd: &Path, review: &Review) -> Result<PostedReview, GhError> {
    let event = review.event.trim().to_ascii_uppercase();
    if !["APPROVE", "REQUEST_CHANGES", "COMMENT"].contains(&event.as_str()) {
        return Err(GhError::Invalid(format!(
            "event: '{}' is not valid; use APPROVE, REQUEST_CHANGES or COMMENT",
            review.event
        )));
    }
    if review.pr_number == 0 {
        return Err(GhError::Invalid("prNumber must be 1 or more".into()));
    }
    if event != "APPROVE" && review.body.trim().is_empty() && review.comments.is_empty() {
        return Err(GhError::Invalid(format!("body: a {event} review needs a body or comments")));
    }
    let payload = serde_json::json!({"body": review.body, "event": event, "comments": review.comments});
    let endpoint = format!("repos/{{owner}}/{{repo}}/pulls/{}/reviews", review.pr_number);
    let args = ["api", "--method", "POST", endpoint.as_str(), "--input", "-"];
    let stdout = gh_ok(cwd, &args, Some(payload.to_string().into_bytes()), &[]).await?;
    let v: serde_json::Value = parsed("api", serde_json::from_str(&stdout).map_err(|e| e.to_string()))?;
    let id = v.get("id").and_then(serde_json::Value::as_u64);
    let id = parsed("api", id.ok_or_else(|| "GitHub answered a review without an id".to_owned()))?;
    let field = |k: &str| v.get(k).and_then(serde_json::Value::as_str).map(str::to_owned);
    Ok(PostedReview { id, url: field("html_url"), state: field("state") })
}

/// `repo action=issues`: issues in `state` (open, closed or all).
pub(crate) async fn issues(cwd: &Path, state: &str, limit: u32) -> Result<Vec<Issue>, GhError> {
    if !["open", "closed", "all"].contains(&state) {
        return Err(GhError::Invalid(format!("state: '{state}' is not valid; use open, closed or all")));
    }
    let limit = limit.to_string();
    let fields = "number,title,url,state,author,labels,createdAt";
    let stdout =
        gh_ok(cwd, &["issue", "list", "--state", state, "--limit", &limit, "--json", fields], None, &[]).await?;
    parsed("issue list", parse::issue_list(&stdout))
}

/// `repo action=close_issue|reopen_issue`.
pub(crate) async fn set_issue_open(cwd: &Path, number: u64, open: bool) -> Result<(), GhError> {
    if number == 0 {
        return Err(GhError::Invalid("number must be 1 or more".into()));
    }
    let number = number.to_string();
    let verb = if open { "reopen" } else { "close" };
    gh_ok(cwd, &["issue", verb, &number], None, &[]).await.map(drop)
}
