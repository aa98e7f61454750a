//! The `repo` tool: repositories and their shared progress journal (`progress_list`).

use schemars::JsonSchema;
use serde::Deserialize;

mod registry;

use super::action::action;
use super::repo_github;
use super::{CallContext, ToolDef, ToolError, run_blocking};
use crate::agent_runtime::journal::{Entry, Filter};

pub(crate) const NAME: &str = "repo";

pub(crate) const DESCRIPTION: &str = "Repositories and their shared progress journal.

- list: the registered repositories (register one with POST /repos).
- active: the caller's repository: its PTY's, else the most recently used; {active:null} if none.
- progress_list: a project's progress journal, oldest first (the newest 1000 at most); ts is ms since the epoch.
- prs: a registered repository's open pull requests with their CI summary, through gh.
- issues: its issues, through gh.
- close_issue: close an issue, once a person confirms it on a connected UI client.
- reopen_issue: reopen an issue, with the same confirmation.";

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    description: DESCRIPTION,
    takes_action: true,
    actions: &[
        action!(NAME, "progress_list", ProgressList => async progress_list, loopback: false, blocks: true),
        action!(NAME, "list", registry::List => sync registry::list, loopback: false, blocks: false),
        action!(NAME, "active", registry::Active => sync registry::active, loopback: false, blocks: false),
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
