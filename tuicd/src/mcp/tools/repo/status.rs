//! `repo action=status`: branch, ahead/behind, dirty counts and the last commit of one work tree,
//! or of every registered repository (read concurrently, at most `REPO_STATUS_CONCURRENCY` at once).

use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::limits::REPO_STATUS_CONCURRENCY;
use crate::mcp::tools::{CallContext, ToolError, to_value};
use crate::repos::{RepoError, read};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Status {
    /// A repository (absolute; any directory in it).
    pub path: Option<String>,
}

/// A repository error as a tool error.
pub(crate) fn repo_error(e: RepoError) -> ToolError {
    ToolError::new(e.to_string())
}

pub(super) async fn status(ctx: &CallContext, p: Status) -> Result<Value, ToolError> {
    if let Some(path) = p.path {
        let root = crate::repos::work_tree_root(&path).map_err(repo_error)?;
        if !ctx.caller.is_loopback() && !ctx.app.repos.roots().contains(&root) {
            return Err(ToolError::new(format!("{} is not a registered repository", root.display())));
        }
        ctx.app.repos.touch(&root);
        return to_value(&read::status(&root).await.map_err(repo_error)?);
    }
    let repos = ctx.app.repos.list();
    let answers: Vec<Value> = futures_util::stream::iter(repos)
        .map(|entry| async move {
            match read::status(&entry.path).await {
                Ok(status) => to_value(&status).unwrap_or_else(|e| json!({"path": entry.path, "error": e.message()})),
                // One unreadable repository (moved, git missing) does not hide the others.
                Err(e) => json!({"path": entry.path, "name": entry.name(), "error": e.to_string()}),
            }
        })
        .buffered(REPO_STATUS_CONCURRENCY)
        .collect()
        .await;
    Ok(json!({"repos": answers}))
}
