//! What the `/repo/*` reads and `repo action=status` answer, each through the `git` CLI on a work
//! tree already validated by [`super::work_tree_root`].

use std::path::Path;

use serde::Serialize;

use super::porcelain::{self, BranchHeader, ChangedFile, DirtyCounts, FileStat};
use super::{RepoError, git};
use crate::limits::CHANGED_FILES_MAX;

/// The tip commit of HEAD.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LastCommit {
    pub oid: String,
    pub summary: String,
    pub author: String,
    /// Committer time, seconds since the epoch.
    pub committed_at: i64,
}

/// A repository's state: branch, ahead/behind, dirty counts, last commit (`/repo/info`,
/// `repo action=status`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RepoStatus {
    pub path: String,
    pub name: String,
    #[serde(flatten)]
    pub branch: BranchHeader,
    pub dirty: bool,
    #[serde(flatten)]
    pub counts: DirtyCounts,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_commit: Option<LastCommit>,
    /// An operation stopped half way: `rebase`, `merge`, `cherry-pick`, `revert` or `bisect`
    /// (a repository mid-rebase is not merely "detached, conflicted").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_progress: Option<&'static str>,
    /// The status passed the output bound: the counts cover its first part only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The bound it passed, in bytes of git's output (with `truncated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_at_bytes: Option<usize>,
}

const STATUS_ARGS: &[&str] = &["status", "--porcelain=v2", "-z", "--branch"];

/// Branch, ahead/behind, dirty counts and the last commit; `git status` and `git log` run at once.
pub(crate) async fn status(root: &Path) -> Result<RepoStatus, RepoError> {
    let (status, last) = tokio::join!(git::read(root, STATUS_ARGS), last_commit(root));
    let status = status?;
    let parsed = porcelain::parse_status(&status.stdout);
    let counts = parsed.counts();
    Ok(RepoStatus {
        path: root.display().to_string(),
        name: root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        dirty: counts != DirtyCounts::default(),
        last_commit: if parsed.branch.unborn { None } else { last.ok().flatten() },
        in_progress: super::head::git_dir(root).and_then(|dir| in_progress(&dir)),
        branch: parsed.branch,
        counts,
        truncated: status.truncated,
        truncated_at_bytes: status.truncated_at(),
    })
}

/// The operation git left half done in `git_dir`, by the state files git itself keeps for it.
fn in_progress(git_dir: &Path) -> Option<&'static str> {
    const MARKS: &[(&str, &str)] = &[
        ("rebase-merge", "rebase"),
        ("rebase-apply", "rebase"),
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
        ("BISECT_LOG", "bisect"),
    ];
    MARKS.iter().find(|(file, _)| git_dir.join(file).exists()).map(|(_, name)| *name)
}

async fn last_commit(root: &Path) -> Result<Option<LastCommit>, RepoError> {
    // An unborn branch has no commit: git exits non-zero, which is not an error here.
    let out = git::probe(root, &["log", "-1", "--format=%H%x00%s%x00%an%x00%ct"]).await?;
    if !out.ok() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut f = text.trim_end_matches('\n').split('\0');
    let (Some(oid), Some(summary), Some(author), Some(at)) = (f.next(), f.next(), f.next(), f.next()) else {
        return Ok(None);
    };
    Ok(Some(LastCommit {
        oid: oid.to_owned(),
        summary: summary.to_owned(),
        author: author.to_owned(),
        committed_at: at.parse().unwrap_or(0),
    }))
}

/// The changed paths (staged, unstaged, untracked, conflicted), at most [`CHANGED_FILES_MAX`].
#[derive(Debug, Serialize)]
pub(crate) struct ChangedFiles {
    pub files: Vec<ChangedFileView>,
    /// Files in the answer; `truncated` says whether there were more.
    pub count: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Set when git's output passed its bound (in bytes); without it, `truncated` means more
    /// than [`CHANGED_FILES_MAX`] files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_at_bytes: Option<usize>,
}

/// One changed path with its staged / unstaged flags.
#[derive(Debug, Serialize)]
pub(crate) struct ChangedFileView {
    #[serde(flatten)]
    pub file: ChangedFile,
    pub staged: bool,
    pub unstaged: bool,
}

pub(crate) async fn changed_files(root: &Path) -> Result<ChangedFiles, RepoError> {
    let out = git::read(root, &["status", "--porcelain=v2", "-z", "--untracked-files=all"]).await?;
    let mut parsed = porcelain::parse_status(&out.stdout);
    let truncated = out.truncated || parsed.files.len() > CHANGED_FILES_MAX;
    parsed.files.truncate(CHANGED_FILES_MAX);
    let files: Vec<ChangedFileView> = parsed
        .files
        .into_iter()
        .map(|file| ChangedFileView { staged: file.staged(), unstaged: file.unstaged(), file })
        .collect();
    Ok(ChangedFiles { count: files.len(), files, truncated, truncated_at_bytes: out.truncated_at() })
}

/// The diff of every uncommitted tracked change against HEAD (against the empty tree on an
/// unborn branch: the staged files), or of the staged changes only.
#[derive(Debug, Serialize)]
pub(crate) struct Diff {
    pub diff: String,
    /// The diff passed the output bound: `diff` holds its first whole lines.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The bound it passed, in bytes (with `truncated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_at_bytes: Option<usize>,
}

pub(crate) async fn diff(root: &Path, staged: bool, file: Option<&str>) -> Result<Diff, RepoError> {
    let out = git::read(root, &diff_args(root, staged, &["--no-color", "--no-ext-diff", "-M"], file)).await?;
    let mut bytes = out.stdout.as_slice();
    if out.truncated {
        // Cut at the last whole line: no half line, and no character split at the bound.
        bytes = bytes.iter().rposition(|b| *b == b'\n').map_or(bytes, |end| &bytes[..=end]);
    }
    Ok(Diff {
        diff: String::from_utf8_lossy(bytes).into_owned(),
        truncated: out.truncated,
        truncated_at_bytes: out.truncated_at(),
    })
}

/// Per-file additions and deletions of the same diff, and their totals.
#[derive(Debug, Serialize)]
pub(crate) struct DiffStats {
    pub files: Vec<FileStat>,
    pub files_changed: usize,
    pub additions: u64,
    pub deletions: u64,
    /// git's output passed its bound: the files and totals cover its first part only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The bound it passed, in bytes (with `truncated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_at_bytes: Option<usize>,
}

pub(crate) async fn diff_stats(root: &Path, staged: bool) -> Result<DiffStats, RepoError> {
    let out = git::read(root, &diff_args(root, staged, &["--numstat", "-z", "-M"], None)).await?;
    let files = porcelain::parse_numstat(&out.stdout);
    Ok(DiffStats {
        files_changed: files.len(),
        additions: files.iter().filter_map(|f| f.additions).sum(),
        deletions: files.iter().filter_map(|f| f.deletions).sum(),
        files,
        truncated: out.truncated,
        truncated_at_bytes: out.truncated_at(),
    })
}

fn diff_args<'a>(root: &Path, staged: bool, extra: &[&'a str], file: Option<&'a str>) -> Vec<&'a str> {
    // A repository's textconv and external diff programs are not run for a read.
    let mut args = vec!["diff", "--no-ext-diff", "--no-textconv"];
    args.extend_from_slice(extra);
    let unborn = super::head::git_dir(root).is_some_and(|dir| !has_commit(&dir));
    if staged || unborn {
        args.push("--cached");
    } else {
        args.push("HEAD");
    }
    if let Some(file) = file {
        args.push("--");
        args.push(file);
    }
    args
}

/// Whether HEAD resolves to a commit, read from the git directory (a loose or packed ref).
fn has_commit(git_dir: &Path) -> bool {
    if super::head::is_reftable(git_dir) {
        // Its refs are not files: take HEAD as born, as nearly every repository is.
        return true;
    }
    let Ok(head) = std::fs::read_to_string(git_dir.join("HEAD")) else { return true };
    let Some(reference) = head.trim_end().strip_prefix("ref: ") else { return true };
    // A linked worktree keeps its refs in the common directory.
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .map(|c| git_dir.join(c.trim_end()))
        .unwrap_or_else(|_| git_dir.to_path_buf());
    common.join(reference).is_file()
        || std::fs::read_to_string(common.join("packed-refs"))
            .is_ok_and(|packed| packed.lines().any(|l| l.ends_with(&format!(" {reference}"))))
}

/// Local and remote-tracking branches, the current one marked.
pub(crate) async fn branches(root: &Path) -> Result<Vec<porcelain::Branch>, RepoError> {
    let out = git::read(root, &["for-each-ref", porcelain::BRANCH_FORMAT, "refs/heads", "refs/remotes"]).await?;
    Ok(porcelain::parse_branches(&out.stdout))
}
