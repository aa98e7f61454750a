//! Conflict assist: would `branch` rebase cleanly onto its base? A prediction by `git merge-tree`,
//! then the real rebase in a detached linked worktree (the branch itself never moves). Clean and
//! rebased is `verified_clean`; predicted clean but not rebased is `unverified_clean`; otherwise
//! the conflicting files, with the worktree left mid-rebase and a prompt for an agent to resolve it.

use std::path::Path;

use serde::Serialize;

use super::worktree::{main_work_tree, worktree_path_for};
use super::{RepoError, git};
use crate::limits::GIT_WRITE_TIMEOUT;

#[derive(Debug, Serialize)]
pub(crate) struct Assist {
    /// `verified_clean`, `unverified_clean` or `conflicts`.
    pub status: &'static str,
    pub branch: String,
    pub base: String,
    /// Where the base came from: `request`, `remote_default` (origin/HEAD) or `local_default`.
    pub base_source: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflicting_files: Vec<String>,
    /// The worktree holding the stopped rebase (conflicts only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    pub prompt: String,
}

pub(crate) async fn assist(path: &str, branch: &str, base: Option<&str>) -> Result<Assist, RepoError> {
    let repo = main_work_tree(&super::work_tree_root(path)?);
    let branch = branch.trim();
    if branch.is_empty() || branch.starts_with('-') {
        return Err(RepoError::InvalidPath(format!("branch: '{branch}' is not a valid branch name")));
    }
    verify(&repo, branch, "branch").await?;
    let (base, base_source) = match base {
        Some(b) => (b.trim().to_owned(), "request"),
        None => default_base(&repo).await?,
    };
    verify(&repo, &base, "base").await?;
    let mut warning = None;
    if base_source == "local_default"
        && git::probe(&repo, &["rev-parse", "--verify", "--quiet", &format!("origin/{base}")]).await?.ok()
    {
        warning = Some(format!(
            "the base is the local {base}; fetch and update it first for an answer against origin/{base}"
        ));
    }
    let predicted = git::probe(&repo, &["merge-tree", "--write-tree", "--name-only", "-z", &base, branch]).await?;
    let predicted_clean = predicted.ok();

    let target = worktree_path_for(&repo, &format!("conflict-assist-{branch}"));
    if target.exists() {
        // Our own scratch worktree from an earlier run.
        let t = target.display().to_string();
        let _ = git::write(&repo, &["worktree", "remove", "--force", "--force", &t], GIT_WRITE_TIMEOUT).await;
    }
    let _ = git::write(&repo, &["worktree", "prune"], GIT_WRITE_TIMEOUT).await;
    if let Some(parent) = target.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let t = target.display().to_string();
    let added = git::write(&repo, &["worktree", "add", "--detach", &t, branch], GIT_WRITE_TIMEOUT).await?;
    if !added.ok() {
        return Ok(unverified(branch, base, base_source, predicted_clean, &predicted.stdout, warning, &added.stderr));
    }
    let rebase = git::write(&target, &["-c", "core.editor=true", "rebase", &base], GIT_WRITE_TIMEOUT).await?;
    if rebase.ok() {
        let _ = git::write(&repo, &["worktree", "remove", "--force", &t], GIT_WRITE_TIMEOUT).await;
        let prompt = format!(
            "{branch} rebases cleanly onto {base} (verified by a real rebase in a scratch worktree). Rebase it: `git rebase {base}` on {branch}."
        );
        return Ok(Assist {
            status: "verified_clean",
            branch: branch.into(),
            base,
            base_source,
            conflicting_files: vec![],
            worktree_path: None,
            warning,
            prompt,
        });
    }
    let unmerged = git::probe(&target, &["diff", "--name-only", "--diff-filter=U", "-z"]).await?;
    let files: Vec<String> = unmerged
        .stdout
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    if files.is_empty() {
        // The rebase failed for another reason: abort it, and answer what the prediction said.
        let _ = git::write(&target, &["rebase", "--abort"], GIT_WRITE_TIMEOUT).await;
        let _ = git::write(&repo, &["worktree", "remove", "--force", &t], GIT_WRITE_TIMEOUT).await;
        return Ok(unverified(branch, base, base_source, predicted_clean, &predicted.stdout, warning, &rebase.stderr));
    }
    let prompt = format!(
        "Rebasing {branch} onto {base} stopped on conflicts in: {}. The rebase is in progress in the worktree `{t}` \
         (detached; {branch} itself is unchanged). Work there with absolute paths: resolve each file, `git add` it, \
         `git rebase --continue` until done, run the tests, then point {branch} at the result \
         (`git branch -f {branch} HEAD` from the main work tree once the worktree is removed).",
        files.join(", ")
    );
    Ok(Assist {
        status: "conflicts",
        branch: branch.into(),
        base,
        base_source,
        conflicting_files: files,
        worktree_path: Some(t),
        warning,
        prompt,
    })
}

fn unverified(
    branch: &str,
    base: String,
    base_source: &'static str,
    predicted_clean: bool,
    predicted: &[u8],
    warning: Option<String>,
    why: &str,
) -> Assist {
    let why = why.lines().find(|l| !l.trim().is_empty()).unwrap_or("no reason given").trim().to_owned();
    let warning = Some(match warning {
        Some(w) => format!("{w}; the rebase could not be run to verify: {why}"),
        None => format!("the rebase could not be run to verify: {why}"),
    });
    if predicted_clean {
        let prompt =
            format!("git predicts {branch} rebases cleanly onto {base}, but this was not verified by a real rebase.");
        return Assist {
            status: "unverified_clean",
            branch: branch.into(),
            base,
            base_source,
            conflicting_files: vec![],
            worktree_path: None,
            warning,
            prompt,
        };
    }
    // merge-tree -z --name-only: the tree id, then the conflicted paths, then an empty record.
    let files: Vec<String> = predicted
        .split(|b| *b == 0)
        .skip(1)
        .take_while(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let prompt = format!("git predicts conflicts rebasing {branch} onto {base} in: {}.", files.join(", "));
    Assist {
        status: "conflicts",
        branch: branch.into(),
        base,
        base_source,
        conflicting_files: files,
        worktree_path: None,
        warning,
        prompt,
    }
}

async fn verify(repo: &Path, rev: &str, what: &str) -> Result<(), RepoError> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(RepoError::InvalidPath(format!("{what}: '{rev}' is not a revision")));
    }
    let ok = git::probe(repo, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")]).await?.ok();
    if ok { Ok(()) } else { Err(RepoError::NotFound(format!("{what}: '{rev}' names no commit in {}", repo.display()))) }
}

/// origin/HEAD's branch, else a local `main` or `master`.
async fn default_base(repo: &Path) -> Result<(String, &'static str), RepoError> {
    let remote = git::probe(repo, &["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"]).await?;
    if remote.ok() {
        return Ok((String::from_utf8_lossy(&remote.stdout).trim().to_owned(), "remote_default"));
    }
    for name in ["main", "master"] {
        if git::probe(repo, &["rev-parse", "--verify", "--quiet", &format!("refs/heads/{name}")]).await?.ok() {
            return Ok((name.to_owned(), "local_default"));
        }
    }
    Err(RepoError::InvalidPath("base: no origin/HEAD, main or master to rebase onto; give base".into()))
}
