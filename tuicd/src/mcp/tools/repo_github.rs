//! The `repo` tool's GitHub actions (`prs`, `issues`, `close_issue`, `reopen_issue`) through `gh`.
//! Closing and reopening an issue writes to GitHub: an MCP caller needs a person's confirmation
//! on a connected UI client first (kind `github_write`), and is refused when nobody can answer.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CallContext, ToolError};
use crate::fsgate::Gate;
use crate::github::{self, GhError, Issue, PrStatus};

/// Issues one `issues` call answers by default, and at most.
const ISSUES_DEFAULT: u32 = 30;
const ISSUES_MAX: u32 = 100;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Prs {
    /// The registered repository's path.
    pub path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Issues {
    /// The registered repository's path.
    pub path: String,
    /// open (default), closed or all.
    pub state: Option<String>,
    /// Most issues answered: default 30, at most 100.
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct IssueNumber {
    /// The registered repository's path.
    pub path: String,
    /// The issue's number.
    pub number: u64,
}

#[derive(Debug, Serialize)]
pub(crate) struct IssueChanged {
    ok: bool,
    number: u64,
    state: &'static str,
}

fn repo_dir(ctx: &CallContext, action: &str, raw: &str) -> Result<PathBuf, ToolError> {
    let refused = |e: String| ToolError::new(format!("repo action={action}: {e}"));
    let dir = Gate::new(ctx.app.repos.roots()).existing("path", raw).map_err(|e| refused(e.to_string()))?;
    if !dir.is_dir() {
        return Err(refused(format!("path: {raw} is not a directory")));
    }
    Ok(dir)
}

fn gh_error(action: &str, e: GhError) -> ToolError {
    let error = ToolError::new(format!("repo action={action}: {e}"));
    match e {
        GhError::Missing | GhError::NotLoggedIn(_) => error.with("fix", "gh auth login"),
        _ => error,
    }
}

pub(crate) async fn prs(ctx: &CallContext, p: Prs) -> Result<Vec<PrStatus>, ToolError> {
    let dir = repo_dir(ctx, "prs", &p.path)?;
    github::pr_statuses(&dir).await.map_err(|e| gh_error("prs", e))
}

pub(crate) async fn issues(ctx: &CallContext, p: Issues) -> Result<Vec<Issue>, ToolError> {
    let dir = repo_dir(ctx, "issues", &p.path)?;
    let limit = p.limit.unwrap_or(ISSUES_DEFAULT);
    if !(1..=ISSUES_MAX).contains(&limit) {
        return Err(ToolError::new(format!("repo action=issues: limit must be 1 to {ISSUES_MAX}")));
    }
    let state = p.state.as_deref().unwrap_or("open");
    github::issues(&dir, state, limit).await.map_err(|e| gh_error("issues", e))
}

pub(crate) async fn close_issue(ctx: &CallContext, p: IssueNumber) -> Result<IssueChanged, ToolError> {
    set_open(ctx, "close_issue", p, false).await
}

pub(crate) async fn reopen_issue(ctx: &CallContext, p: IssueNumber) -> Result<IssueChanged, ToolError> {
    set_open(ctx, "reopen_issue", p, true).await
}

async fn set_open(ctx: &CallContext, action: &str, p: IssueNumber, open: bool) -> Result<IssueChanged, ToolError> {
    let dir = repo_dir(ctx, action, &p.path)?;
    if p.number == 0 {
        return Err(ToolError::new(format!("repo action={action}: number must be 1 or more")));
    }
    let verb = if open { "reopen" } else { "close" };
    let what = format!("{verb} issue #{} in {}", p.number, dir.display());
    github::confirm_write(&ctx.app.ui, requester(ctx), what).await.map_err(|e| gh_error(action, e))?;
    github::set_issue_open(&dir, p.number, open).await.map_err(|e| gh_error(action, e))?;
    Ok(IssueChanged { ok: true, number: p.number, state: if open { "open" } else { "closed" } })
}

/// Who asks, in words a person reads: the agent's alias when the caller is a tuicd PTY.
fn requester(ctx: &CallContext) -> String {
    let session = ctx.tuic_session.as_deref().and_then(|id| ctx.app.sessions.resolve(id).ok());
    match (session, &ctx.mcp_session) {
        (Some(session), _) => match &session.agent_type {
            Some(kind) => format!("agent {} ({kind})", session.alias),
            None => format!("agent {}", session.alias),
        },
        (None, Some(id)) => format!("MCP client (protocol session {})", id.chars().take(8).collect::<String>()),
        (None, None) => "MCP client".to_owned(),
    }
}
