//! The `repo` tool: repositories and their shared progress journal (`progress_list`).

use schemars::JsonSchema;
use serde::Deserialize;

mod registry;
mod status;
mod worktree;

use super::action::action;
use super::repo_github;
use super::{CallContext, ToolDef, ToolError, run_blocking};
use crate::agent_runtime::journal::{Entry, Filter};

pub(crate) const NAME: &str = "repo";

pub(crate) const DESCRIPTION: &str = "Repositories, worktrees, GitHub (via gh) and the progress journal.

- list: registered repositories.
- active: your PTY's repository, else the most recently used.
- status: branch, ahead/behind, dirty counts, last commit (no path: every registered one).
- worktree_list: linked worktrees.
- worktree_create: a linked worktree at <repo>__wt/<branch>.
- worktree_remove: refuses uncommitted work unless force (a person confirms).
- progress_list: journal entries, oldest first (the newest 1000); ts in ms.
- prs: open pull requests with CI.
- issues: the newest 50.
- close_issue: once a person confirms.
- reopen_issue: once a person confirms.";

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    description: DESCRIPTION,
    takes_action: true,
    actions: &[
        action!(NAME, "progress_list", ProgressList => async progress_list, loopback: false, blocks: true),
        action!(NAME, "list", registry::List => sync registry::list, loopback: false, blocks: false),
        action!(NAME, "active", registry::Active => sync registry::active, loopback: false, blocks: false),
        action!(NAME, "status", status::Status => async status::status, loopback: false, blocks: true),
        action!(NAME, "worktree_list", worktree::WorktreeList => async worktree::worktree_list, loopback: false, blocks: true),
        action!(NAME, "worktree_create", worktree::WorktreeCreate => async worktree::worktree_create, loopback: true, blocks: true),
        action!(NAME, "worktree_remove", worktree::WorktreeRemove => async worktree::worktree_remove, loopback: true, blocks: true),
        action!(NAME, "prs", repo_github::Prs => async repo_github::prs, loopback: false, blocks: true),
        action!(NAME, "issues", repo_github::Issues => async repo_github::issues, loopback: false, blocks: true),
        action!(NAME, "close_issue", repo_github::IssueNumber => async repo_github::close_issue, loopback: false, blocks: true),
        action!(NAME, "reopen_issue", repo_github::IssueNumber => async repo_github::reopen_issue, loopback: false, blocks: true),
    ],
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProgressList {
    /// Only this project (its repository root path).
    pub project: Option<String>,
    /// Only this agent's entries.
    pub agent: Option<String>,
    /// Only entries at or after this time, in ms since the Unix epoch.
    pub since: Option<u64>,
}

async fn progress_list(ctx: &CallContext, p: ProgressList) -> Result<Vec<Entry>, ToolError> {
    let filter = Filter { project: p.project, agent: p.agent, since: p.since };
    let app = ctx.app.clone();
    run_blocking("repo action=progress_list", move || {
        let journal = app.agents.journal(&app.config_dir);
        Ok(journal.as_ref().expect("opened").list(&filter))
    })
    .await
}
