//! `repo action=list|active`: the registered repositories, and the one the caller works in.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::tools::{CallContext, ToolError};
use crate::repos::RepoEntry;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct List {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Active {}

/// One repository as `list` and `active` show it. Optional values are omitted, never null.
#[derive(Debug, Serialize)]
pub(crate) struct RepoSummary {
    pub path: String,
    pub name: String,
    /// The checked-out branch; omitted on a detached HEAD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub is_git_repo: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_ms: Option<u64>,
}

impl RepoSummary {
    pub(crate) fn of(entry: &RepoEntry) -> Self {
        let is_git_repo = entry.path.join(".git").exists();
        Self {
            path: entry.path.display().to_string(),
            name: entry.name(),
            branch: if is_git_repo { crate::repos::head::branch(&entry.path) } else { None },
            is_git_repo,
            last_used_ms: entry.last_used_ms,
        }
    }
}

pub(super) fn list(ctx: &CallContext, _: List) -> Result<Vec<RepoSummary>, ToolError> {
    Ok(ctx.app.repos.list().iter().map(RepoSummary::of).collect())
}

/// The caller's repository: the one its PTY started in, else the most recently used registered
/// one; `{"active": null}` when there is neither. `source` says which.
pub(super) fn active(ctx: &CallContext, _: Active) -> Result<serde_json::Value, ToolError> {
    let session_repo = ctx
        .tuic_session
        .as_deref()
        .and_then(|id| ctx.app.sessions.resolve(id).ok())
        .and_then(|session| session.repo.clone());
    let (entry, source) = match session_repo {
        Some(path) => {
            let known = ctx.app.repos.list().into_iter().find(|r| r.path == path);
            (known.unwrap_or(RepoEntry { path, last_used_ms: None }), "caller_session")
        }
        None => match ctx.app.repos.most_recently_used() {
            Some(entry) => (entry, "most_recently_used"),
            None => return Ok(serde_json::json!({"active": null})),
        },
    };
    let mut answer = crate::mcp::tools::to_value(&RepoSummary::of(&entry))?;
    answer["source"] = source.into();
    Ok(answer)
}
