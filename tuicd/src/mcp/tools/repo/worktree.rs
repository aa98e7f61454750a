//! `repo action=worktree_list|worktree_create|worktree_remove`, on the same core as `/worktrees`.
//! A forced remove asks a person through the confirm flow first.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::status::repo_error;
use crate::mcp::tools::{CallContext, ToolError, to_value};
use crate::repos::worktree::{self, CreateRequest, RemoveRequest, SessionDir};
use crate::ui::ConfirmRequest;

/// The client name Claude Code gives at initialize; only it gets `cc_agent_hint`.
const CLAUDE_CODE_CLIENT: &str = "claude-code";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorktreeList {
    /// A repository (absolute; any directory in it).
    pub path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorktreeCreate {
    /// A repository (absolute; any directory in it).
    pub path: String,
    /// Checked out; created from base_ref if new.
    pub branch: String,
    /// Default: HEAD.
    pub base_ref: Option<String>,
    /// Run with sh in the new worktree.
    pub setup_script: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorktreeRemove {
    /// The linked worktree's directory.
    pub worktree_path: String,
    /// Discard uncommitted work; a person confirms.
    #[serde(default)]
    pub force: bool,
    /// Safe delete; a refusal is branch_delete_warning.
    #[serde(default)]
    pub delete_branch: bool,
}

pub(super) async fn worktree_list(ctx: &CallContext, p: WorktreeList) -> Result<Value, ToolError> {
    let root = crate::repos::work_tree_root(&p.path).map_err(repo_error)?;
    let repo = worktree::main_work_tree(&root);
    // As every other repository read: a remote caller reads only registered repositories.
    if !ctx.caller.is_loopback() && !ctx.app.repos.roots().iter().any(|r| *r == root || *r == repo) {
        return Err(ToolError::new(format!(
            "reading {}, which is not a registered repository, is refused for a remote caller",
            repo.display()
        )));
    }
    let all = worktree::list(&repo).await.map_err(repo_error)?;
    ctx.app.repos.touch(&repo);
    Ok(json!({"repo_path": repo.display().to_string(), "worktrees": to_value(&all)?}))
}

pub(super) async fn worktree_create(ctx: &CallContext, p: WorktreeCreate) -> Result<Value, ToolError> {
    let request =
        CreateRequest { base_repo: p.path, branch: p.branch, base_ref: p.base_ref, setup_script: p.setup_script };
    let created = worktree::create_announced(&request, &ctx.app.events).await.map_err(repo_error)?;
    ctx.app.repos.touch(std::path::Path::new(&created.repo_path));
    let mut answer = to_value(&created)?;
    if client_name(ctx).as_deref() == Some(CLAUDE_CODE_CLIENT) {
        let path = &created.worktree_path;
        answer["cc_agent_hint"] = json!({
            "worktree_path": path,
            "suggested_prompt": format!(
                "Work in the worktree at `{path}`. Use absolute paths for ALL file operations (Read, Edit, Glob, \
                 Grep) under `{path}`, and run every shell command as `cd {path} && ...`: your own working \
                 directory does not change."
            ),
        });
    }
    Ok(answer)
}

pub(super) async fn worktree_remove(ctx: &CallContext, p: WorktreeRemove) -> Result<Value, ToolError> {
    let sessions = SessionDir::of_live(&ctx.app.sessions);
    if p.force {
        // Check what would be discarded before asking anyone.
        let (_, found) = worktree::find_linked(&p.worktree_path).await.map_err(repo_error)?;
        let inside = worktree::sessions_inside(&sessions, std::path::Path::new(&found.worktree.path));
        let in_use = if inside.is_empty() {
            String::new()
        } else {
            format!(" It is the working directory of live {}.", worktree::name_sessions(&inside))
        };
        let request = ConfirmRequest {
            title: "Discard a worktree's uncommitted work?".into(),
            message: format!(
                "Remove the worktree {} (branch {}) and discard its staged, unstaged and untracked changes.{in_use}",
                found.worktree.path,
                found.worktree.branch.as_deref().unwrap_or("detached")
            ),
            requester: requester(ctx),
            kind: "worktree_force_remove",
        };
        let outcome = ctx.app.ui.confirm(request).await;
        if !outcome.confirmed() {
            let reason = outcome.reason().unwrap_or("not confirmed");
            return Err(ToolError::new(format!("force remove of {} was not confirmed: {reason}", found.worktree.path))
                .with("confirmed", false));
        }
    }
    let request =
        RemoveRequest { worktree_path: p.worktree_path, force: p.force, delete_branch: p.delete_branch, sessions };
    to_value(&worktree::remove_announced(&request, &ctx.app.events).await.map_err(repo_error)?)
}

fn client_name(ctx: &CallContext) -> Option<String> {
    ctx.mcp_session.as_deref().and_then(|id| ctx.app.mcp.protocol_sessions.client_name(id))
}

/// Who asks, in words a person reads: the agent's session alias, else the MCP client's name.
fn requester(ctx: &CallContext) -> String {
    let client = client_name(ctx).unwrap_or_else(|| "unknown client".into());
    match ctx.tuic_session.as_deref().and_then(|t| ctx.app.sessions.resolve(t).ok()) {
        Some(session) => format!("agent {} ({client})", session.alias),
        None => format!("MCP client {client}"),
    }
}
