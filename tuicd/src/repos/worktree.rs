//! Linked worktrees: list, create (base_repo validation, stale-worktree recovery, warming, the
//! setup script), remove (refusing uncommitted work unless forced, the branch's safe delete), and
//! the lifecycle verdict of one workspace. The REST routes and the `repo` tool share these.
//! A workspace id is git's own name for a linked worktree (its directory under
//! `.git/worktrees/`); the main work tree is `main`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::porcelain::{self, DirtyCounts, Worktree};
use super::warm::{WARM_CANDIDATES, WarmReport};
use super::{RepoError, git, head, read, script};
use crate::limits::{GIT_WRITE_TIMEOUT, WORKTREE_SCRIPT_TIMEOUT};

/// The main work tree of the repository holding `root` (itself unless `root` is a linked one).
pub(crate) fn main_work_tree(root: &Path) -> PathBuf {
    let Some(git_dir) = head::git_dir(root) else { return root.to_path_buf() };
    let Ok(common) = std::fs::read_to_string(git_dir.join("commondir")) else { return root.to_path_buf() };
    let common = git_dir.join(common.trim_end());
    let common = std::fs::canonicalize(&common).unwrap_or(common);
    common.parent().map_or_else(|| root.to_path_buf(), Path::to_path_buf)
}

/// One worktree as listed: git's entry plus its workspace id and kind.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct WorktreeView {
    pub workspace_id: String,
    /// `main` or `linked`.
    pub kind: &'static str,
    #[serde(flatten)]
    pub worktree: Worktree,
}

/// Every worktree of the repository at `root`, the main one first.
pub(crate) async fn list(root: &Path) -> Result<Vec<WorktreeView>, RepoError> {
    let out = git::read(root, &["worktree", "list", "--porcelain", "-z"]).await?;
    Ok(porcelain::parse_worktrees(&out.stdout)
        .into_iter()
        .enumerate()
        .map(|(i, worktree)| {
            let (workspace_id, kind) =
                if i == 0 { ("main".to_owned(), "main") } else { (workspace_id(Path::new(&worktree.path)), "linked") };
            WorktreeView { workspace_id, kind, worktree }
        })
        .collect())
}

/// git's id of a linked worktree: the last component of the git directory its `.git` file names;
/// for a vanished directory, its own name (git derives the id from it).
fn workspace_id(path: &Path) -> String {
    head::git_dir(path)
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
}

/// What to create.
#[derive(Debug, Clone)]
pub(crate) struct CreateRequest {
    pub base_repo: String,
    pub branch: String,
    /// Where a new branch starts (default: the base repository's HEAD).
    pub base_ref: Option<String>,
    /// A shell command run in the new worktree after warming.
    pub setup_script: Option<String>,
}

/// What was created.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Created {
    pub worktree_path: String,
    pub branch: String,
    pub repo_path: String,
    /// The branch was created by this call (from `base_ref`), not checked out as it existed.
    pub new_branch: bool,
    /// A stale registration of the same path (its directory gone) was pruned first.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recovered_stale: bool,
    pub instructions: Instructions,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_script: Option<script::ScriptResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_script_error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Instructions {
    pub warm_artifacts: WarmReport,
}

/// Where a branch's worktree goes: `<repo>__wt/<branch, slashes as dashes>` beside the repository.
pub(crate) fn worktree_path_for(repo: &Path, branch: &str) -> PathBuf {
    let name = repo.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let parent = repo.parent().unwrap_or(Path::new("/"));
    parent.join(format!("{name}__wt")).join(branch.replace('/', "-"))
}

/// Creates a linked worktree for `req.branch`. Checks everything it can before changing anything.
pub(crate) async fn create(req: &CreateRequest) -> Result<Created, RepoError> {
    let root = super::work_tree_root(&req.base_repo)?;
    let repo = main_work_tree(&root);
    let branch = req.branch.trim();
    let format = git::probe(&repo, &["check-ref-format", "--branch", branch]).await?;
    if branch.is_empty() || branch.starts_with('-') || !format.ok() {
        return Err(RepoError::InvalidPath(format!("branch: '{branch}' is not a valid branch name")));
    }
    let target = worktree_path_for(&repo, branch);
    let existing = list(&repo).await?;
    let mut recovered_stale = false;
    if let Some(same) = existing.iter().find(|w| Path::new(&w.worktree.path) == target) {
        if target.exists() {
            return Err(RepoError::Git(format!("a worktree already exists at {}", target.display())));
        }
        // Registered, but its directory vanished: prune the registration, then create afresh.
        let _ = same;
        let out = git::write(&repo, &["worktree", "prune"], GIT_WRITE_TIMEOUT).await?;
        if !out.ok() {
            return Err(git::failed(&["worktree", "prune"], &out));
        }
        recovered_stale = true;
    } else if target.exists() {
        return Err(RepoError::Git(format!(
            "{} already exists and is not a worktree of {}",
            target.display(),
            repo.display()
        )));
    }
    if let Some(holder) = existing.iter().find(|w| w.worktree.branch.as_deref() == Some(branch) && !w.worktree.prunable)
    {
        return Err(RepoError::Git(format!("branch {branch} is already checked out at {}", holder.worktree.path)));
    }
    let exists = git::probe(&repo, &["rev-parse", "--verify", "--quiet", &format!("refs/heads/{branch}")]).await?.ok();
    if let Some(base) = &req.base_ref
        && (base.is_empty() || base.starts_with('-') || base.chars().any(char::is_control))
    {
        // git would read it as an option (`--lock`, `--detach`), not as a commit.
        return Err(RepoError::InvalidPath(format!("base_ref: '{base}' is not a commit, branch or tag name")));
    }
    let target_str = target.display().to_string();
    let mut args = vec!["worktree", "add"];
    if exists {
        if req.base_ref.is_some() {
            return Err(RepoError::InvalidPath(format!(
                "base_ref: branch {branch} already exists; omit base_ref to check it out"
            )));
        }
        args.extend(["--end-of-options", target_str.as_str(), branch]);
    } else {
        args.extend(["-b", branch, "--end-of-options", target_str.as_str()]);
        if let Some(base) = &req.base_ref {
            args.push(base.as_str());
        }
    }
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| RepoError::Failed(format!("creating {}: {e}", parent.display())))?;
    }
    let out = git::write(&repo, &args, GIT_WRITE_TIMEOUT).await?;
    if !out.ok() {
        return Err(git::failed(&args, &out));
    }
    let ignored = ignored_candidates(&repo).await;
    let (from, to) = (repo.clone(), target.clone());
    let warm_artifacts = tokio::task::spawn_blocking(move || {
        let names: Vec<&str> = ignored.iter().map(String::as_str).collect();
        super::warm::warm_default(&from, &to, &names)
    })
    .await
    .unwrap_or_default();
    let (setup_script, setup_script_error) = match &req.setup_script {
        None => (None, None),
        Some(s) => match script::run(&target, s, WORKTREE_SCRIPT_TIMEOUT).await {
            Ok(result) => (Some(result), None),
            Err(e) => (None, Some(e.to_string())),
        },
    };
    Ok(Created {
        worktree_path: target_str,
        branch: branch.to_owned(),
        repo_path: repo.display().to_string(),
        new_branch: !exists,
        recovered_stale,
        instructions: Instructions { warm_artifacts },
        setup_script,
        setup_script_error,
    })
}

/// The warm candidates present at `repo`'s top level that git ignores there.
async fn ignored_candidates(repo: &Path) -> Vec<String> {
    let mut ignored = Vec::new();
    for name in WARM_CANDIDATES {
        if repo.join(name).is_dir()
            && git::probe(repo, &["check-ignore", "-q", &format!("{name}/")]).await.is_ok_and(|o| o.ok())
        {
            ignored.push((*name).to_owned());
        }
    }
    ignored
}

/// What to remove.
#[derive(Debug, Clone)]
pub(crate) struct RemoveRequest {
    pub worktree_path: String,
    /// Discard staged, unstaged and untracked work in it (the caller has confirmed it).
    pub force: bool,
    /// Delete its branch too (a safe delete: refused by git unless merged).
    pub delete_branch: bool,
    /// The live sessions and their working directories: one inside the worktree refuses the
    /// removal unless `force` (and is named in the answer's `warning` with it).
    pub sessions: Vec<SessionDir>,
}

/// A live session's working directories, as the caller (who holds the session registry) read them.
#[derive(Debug, Clone)]
pub(crate) struct SessionDir {
    pub alias: String,
    /// Where it started, and where its shell is now (when the system says).
    pub dirs: Vec<PathBuf>,
}

impl SessionDir {
    /// Each live session's start directory and its shell's current one (`/proc/<pid>/cwd`).
    pub(crate) fn of_live(sessions: &crate::session::SessionRegistry) -> Vec<SessionDir> {
        sessions
            .list()
            .iter()
            .map(|s| {
                let mut dirs = vec![s.cwd.clone()];
                if let Some(now) = s.pid.and_then(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).ok()) {
                    dirs.push(now);
                }
                SessionDir { alias: s.alias.clone(), dirs }
            })
            .collect()
    }
}

/// The aliases of the sessions with a working directory in `worktree` (compared canonically).
pub(crate) fn sessions_inside(sessions: &[SessionDir], worktree: &Path) -> Vec<String> {
    let worktree = std::fs::canonicalize(worktree).unwrap_or_else(|_| worktree.to_path_buf());
    sessions
        .iter()
        .filter(|s| {
            s.dirs.iter().any(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone()).starts_with(&worktree))
        })
        .map(|s| s.alias.clone())
        .collect()
}

/// "session a" or "sessions a, b".
pub(crate) fn name_sessions(aliases: &[String]) -> String {
    let noun = if aliases.len() == 1 { "session" } else { "sessions" };
    format!("{noun} {}", aliases.join(", "))
}

/// What was removed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Removed {
    pub ok: bool,
    pub repo_path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub branch_deleted: bool,
    /// The worktree is gone, but git kept the branch (e.g. it holds unmerged commits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_delete_warning: Option<String>,
    /// A forced removal went ahead under live sessions: names them (their working directory is
    /// gone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The aliases of those sessions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sessions_inside: Vec<String>,
}

/// The linked worktree at `path` and its repository, or why it is not one.
pub(crate) async fn find_linked(path: &str) -> Result<(PathBuf, WorktreeView), RepoError> {
    let root = super::work_tree_root(path)?;
    let repo = main_work_tree(&root);
    if repo == root {
        return Err(RepoError::InvalidPath(format!(
            "{} is a repository's main work tree, not a linked worktree; it is never removed here",
            root.display()
        )));
    }
    let found = list(&repo).await?.into_iter().find(|w| Path::new(&w.worktree.path) == root);
    let found = found
        .ok_or_else(|| RepoError::NotFound(format!("{} is not a worktree of {}", root.display(), repo.display())))?;
    Ok((repo, found))
}

/// Refuses uncommitted work unless `force`; the worktree's dirty counts when it has any.
pub(crate) async fn uncommitted(path: &Path) -> Result<Option<DirtyCounts>, RepoError> {
    let out = git::read(path, &["status", "--porcelain=v2", "-z"]).await?;
    let counts = porcelain::parse_status(&out.stdout).counts();
    Ok((counts != DirtyCounts::default()).then_some(counts))
}

pub(crate) async fn remove(req: &RemoveRequest) -> Result<Removed, RepoError> {
    let (repo, found) = find_linked(&req.worktree_path).await?;
    let path = found.worktree.path.clone();
    let inside = sessions_inside(&req.sessions, Path::new(&path));
    if !req.force && !inside.is_empty() {
        return Err(RepoError::Dirty(format!(
            "{path} is the working directory of live {}; close them first, or pass force: true to remove it anyway",
            name_sessions(&inside)
        )));
    }
    if !req.force
        && let Some(c) = uncommitted(Path::new(&path)).await?
    {
        return Err(RepoError::Dirty(format!(
            "{path} has uncommitted work ({} staged, {} unstaged, {} untracked, {} conflicted); commit it, or pass force: true to discard it",
            c.staged, c.unstaged, c.untracked, c.conflicted
        )));
    }
    let mut args = vec!["worktree", "remove"];
    if req.force {
        // Twice: also a locked worktree.
        args.extend(["--force", "--force"]);
    }
    args.push(path.as_str());
    let out = git::write(&repo, &args, GIT_WRITE_TIMEOUT).await?;
    if !out.ok() {
        if out.stderr.contains("containing submodules") {
            // git: "working trees containing submodules cannot be moved or removed"; `--force` can.
            return Err(RepoError::Git(format!(
                "{path} holds submodules, and git removes such a worktree only when forced; pass force: true to remove it anyway (with any uncommitted work in it and its submodules)"
            )));
        }
        return Err(git::failed(&args, &out));
    }
    let warning = (!inside.is_empty())
        .then(|| format!("{path} was removed while it was the working directory of live {}", name_sessions(&inside)));
    let branch = found.worktree.branch.clone();
    let (mut branch_deleted, mut branch_delete_warning) = (false, None);
    if req.delete_branch
        && let Some(b) = &branch
    {
        let out = git::write(&repo, &["branch", "-d", b], GIT_WRITE_TIMEOUT).await?;
        if out.ok() {
            branch_deleted = true;
        } else {
            let why = out.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("git refused").trim().to_owned();
            branch_delete_warning = Some(format!("the worktree was removed but branch {b} was kept: {why}"));
        }
    }
    Ok(Removed {
        ok: true,
        repo_path: repo.display().to_string(),
        branch,
        branch_deleted,
        branch_delete_warning,
        warning,
        sessions_inside: inside,
    })
}

/// A fresh verdict on one workspace: what it holds and whether removing it loses work.
#[derive(Debug, Serialize)]
pub(crate) struct Lifecycle {
    pub workspace_id: String,
    pub kind: &'static str,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    pub exists: bool,
    pub dirty: bool,
    #[serde(flatten)]
    pub counts: DirtyCounts,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_commit: Option<read::LastCommit>,
    /// Removing it (without force) loses nothing and git would allow it.
    pub removal_safe: bool,
    /// Why it is not safe to remove, in words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// The verdict for `workspace_id` of the repository at `repo_path`. An id the repository does not
/// list is an error: the verdict fails closed, never "safe" by default.
pub(crate) async fn lifecycle(repo_path: &str, id: &str) -> Result<Lifecycle, RepoError> {
    let root = super::work_tree_root(repo_path)?;
    let repo = main_work_tree(&root);
    let all = list(&repo).await?;
    let Some(view) = all.into_iter().find(|w| w.workspace_id == id) else {
        return Err(RepoError::NotFound(format!("workspace {id} is not a worktree of {}", repo.display())));
    };
    let path = PathBuf::from(&view.worktree.path);
    let exists = path.is_dir();
    let mut reasons = Vec::new();
    let (counts, last_commit) = if exists {
        let status = read::status(&path).await?;
        (status.counts, status.last_commit)
    } else {
        reasons.push("its directory is gone (a stale registration; creating it again prunes it)".into());
        (DirtyCounts::default(), None)
    };
    let dirty = counts != DirtyCounts::default();
    if dirty {
        reasons.push(format!(
            "uncommitted work: {} staged, {} unstaged, {} untracked, {} conflicted",
            counts.staged, counts.unstaged, counts.untracked, counts.conflicted
        ));
    }
    if view.kind == "main" {
        reasons.push("it is the repository's main work tree".into());
    }
    if view.worktree.locked {
        reasons.push("it is locked".into());
    }
    Ok(Lifecycle {
        workspace_id: view.workspace_id,
        kind: view.kind,
        path: view.worktree.path,
        branch: view.worktree.branch,
        head: view.worktree.head,
        exists,
        dirty,
        counts,
        last_commit,
        removal_safe: reasons.is_empty(),
        reasons,
    })
}

/// [`create`], announced on `/events`: `worktree-created`, or `worktree-create-failed` with the
/// reason.
pub(crate) async fn create_announced(
    req: &CreateRequest,
    events: &crate::events::EventBus,
) -> Result<Created, RepoError> {
    let result = create(req).await;
    match &result {
        Ok(c) => {
            let payload =
                serde_json::json!({"repo_path": c.repo_path, "branch": c.branch, "worktree_path": c.worktree_path});
            events.publish(proto::events::WORKTREE_CREATED, &payload);
        }
        Err(e) => {
            let payload =
                serde_json::json!({"repo_path": req.base_repo, "branch": req.branch, "reason": e.to_string()});
            events.publish(proto::events::WORKTREE_CREATE_FAILED, &payload);
        }
    }
    result
}

/// [`remove`], announced on `/events` as `worktree-removed`.
pub(crate) async fn remove_announced(
    req: &RemoveRequest,
    events: &crate::events::EventBus,
) -> Result<Removed, RepoError> {
    let removed = remove(req).await?;
    let payload = serde_json::json!({"repo_path": removed.repo_path, "branch": removed.branch, "worktree_path": req.worktree_path});
    events.publish(proto::events::WORKTREE_REMOVED, &payload);
    Ok(removed)
}
