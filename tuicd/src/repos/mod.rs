//! The registered repositories: the list a person keeps in `<config_dir>/repositories.json`, the
//! most recently used one, and (in the submodules) what the daemon reads and does in them through
//! the `git` CLI.
//!
//! [`Repos`] is one `Arc` on the daemon state (`app.repos`). Its list is the set of roots the
//! file routes are contained in ([`Repos::roots`]), so every path in it is canonical.

pub(crate) mod conflict;
pub(crate) mod git;
pub(crate) mod head;
pub(crate) mod porcelain;
pub(crate) mod read;
pub(crate) mod script;
mod store;
pub(crate) mod warm;
pub(crate) mod worktree;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::lock::Recover;
pub(crate) use store::FILE_NAME;

/// One registered repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub(crate) struct RepoEntry {
    /// The work tree's canonical top-level directory.
    pub path: PathBuf,
    /// When it was last used (a git read, a worktree, a session in it), in ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_ms: Option<u64>,
}

impl RepoEntry {
    /// The directory name, as people call the repository.
    pub(crate) fn name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

/// Why a repository could not be registered or found.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RepoError {
    #[error("{0}")]
    InvalidPath(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    NotARepo(String),
    #[error("{0}")]
    Bare(String),
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Failed(String),
    /// `git` cannot be started: not installed, or not on the daemon's PATH.
    #[error("{0}")]
    GitMissing(String),
    /// A git command exited non-zero; the message names it and git's reason.
    #[error("{0}")]
    Git(String),
    #[error("{0}")]
    Timeout(String),
    /// The work tree holds changes the operation would discard, or a live session works in it.
    #[error("{0}")]
    Dirty(String),
}

/// The registered repositories and the most recently used one.
#[derive(Debug)]
pub(crate) struct Repos {
    file: PathBuf,
    /// A std mutex: held to read or update the list and to write the file (a few hundred bytes),
    /// never across `.await`. Holding it across the write keeps the file in the order of updates.
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    repos: Vec<RepoEntry>,
    /// Set when the file could not be read: the list stays empty and is never written over it.
    load_error: Option<String>,
}

impl Repos {
    /// Reads `<config_dir>/repositories.json`; a missing file is an empty list. A file that
    /// cannot be parsed is logged and kept: the list is empty and every change is refused until
    /// the file is mended, so a person's list is never lost to a rewrite.
    pub(crate) fn load(config_dir: &Path) -> Self {
        let file = config_dir.join(FILE_NAME);
        let state = match store::read(&file) {
            Ok(repos) => State { repos, load_error: None },
            Err(e) => {
                tracing::error!(file = %file.display(), error = %e, "the repository list cannot be read");
                State { repos: Vec::new(), load_error: Some(e) }
            }
        };
        Self { file, state: Mutex::new(state) }
    }

    /// Registers the work tree that holds `path` (its top level). Adding one already registered
    /// changes nothing and answers it.
    pub(crate) fn add(&self, path: &str) -> Result<RepoEntry, RepoError> {
        let root = work_tree_root(path)?;
        let mut state = self.state.locked();
        if let Some(existing) = state.repos.iter().find(|r| r.path == root) {
            return Ok(existing.clone());
        }
        let entry = RepoEntry { path: root, last_used_ms: None };
        let mut next = state.repos.clone();
        next.push(entry.clone());
        self.save(&mut state, next)?;
        Ok(entry)
    }

    /// Forgets a registered repository (by the path it was registered with, or any path that
    /// canonicalizes to it). Nothing on disk but the list changes.
    pub(crate) fn remove(&self, path: &str) -> Result<RepoEntry, RepoError> {
        let wanted = absolute(path)?;
        let canonical = std::fs::canonicalize(&wanted).unwrap_or_else(|_| wanted.clone());
        let mut state = self.state.locked();
        let Some(index) = state.repos.iter().position(|r| r.path == canonical || r.path == wanted) else {
            return Err(RepoError::NotFound(format!("{path} is not a registered repository")));
        };
        let mut next = state.repos.clone();
        let removed = next.remove(index);
        self.save(&mut state, next)?;
        Ok(removed)
    }

    /// Every registered repository, in the order they were added.
    pub(crate) fn list(&self) -> Vec<RepoEntry> {
        self.state.locked().repos.clone()
    }

    /// The canonical roots of the registered repositories (the file routes' containment roots).
    #[allow(dead_code)] // read by the file routes' traversal gate
    pub(crate) fn roots(&self) -> Vec<PathBuf> {
        self.state.locked().repos.iter().map(|r| r.path.clone()).collect()
    }

    /// Records that the registered repository containing `path` was just used. A path in no
    /// registered repository changes nothing. Written to the file only when the most recently
    /// used repository changes, so a burst of reads in one repository costs no disk write.
    pub(crate) fn touch(&self, path: &Path) {
        let mut state = self.state.locked();
        let Some(index) = deepest(&state.repos, path) else { return };
        let was_latest = most_recent(&state.repos).is_some_and(|r| r.path == state.repos[index].path);
        // Strictly after every earlier use, so two uses in the same millisecond still order.
        let latest = state.repos.iter().filter_map(|r| r.last_used_ms).max().unwrap_or(0);
        state.repos[index].last_used_ms = Some(now_ms().max(latest + 1));
        if !was_latest && state.load_error.is_none() {
            let next = state.repos.clone();
            if let Err(e) = store::write(&self.file, &next) {
                tracing::warn!(file = %self.file.display(), error = %e, "recording the most recently used repository");
            }
        }
    }

    /// The most recently used registered repository, if any was ever used.
    pub(crate) fn most_recently_used(&self) -> Option<RepoEntry> {
        most_recent(&self.state.locked().repos).cloned()
    }

    fn save(&self, state: &mut State, next: Vec<RepoEntry>) -> Result<(), RepoError> {
        if let Some(e) = &state.load_error {
            return Err(RepoError::Unavailable(format!(
                "the repository list {} cannot be read ({e}); mend or remove it first",
                self.file.display()
            )));
        }
        store::write(&self.file, &next)
            .map_err(|e| RepoError::Failed(format!("writing {}: {e}", self.file.display())))?;
        state.repos = next;
        Ok(())
    }
}

fn deepest(repos: &[RepoEntry], path: &Path) -> Option<usize> {
    repos
        .iter()
        .enumerate()
        .filter(|(_, r)| path.starts_with(&r.path))
        .max_by_key(|(_, r)| r.path.as_os_str().len())
        .map(|(i, _)| i)
}

fn most_recent(repos: &[RepoEntry]) -> Option<&RepoEntry> {
    repos.iter().filter(|r| r.last_used_ms.is_some()).max_by_key(|r| r.last_used_ms)
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// `path` as given, refused unless it is absolute and free of NUL.
fn absolute(path: &str) -> Result<PathBuf, RepoError> {
    if path.is_empty() {
        return Err(RepoError::InvalidPath("path is required: the repository's absolute directory".into()));
    }
    if path.contains('\0') {
        return Err(RepoError::InvalidPath("path contains a NUL byte".into()));
    }
    let path = PathBuf::from(path);
    if !path.is_absolute() {
        return Err(RepoError::InvalidPath(format!("path must be absolute, got {}", path.display())));
    }
    Ok(path)
}

/// The canonical top level of the git work tree holding `path`. A bare repository (no work tree)
/// and a directory in no repository are refused, each with its own reason. Read from the file
/// system (a `.git` directory or file marks a work tree's top level), so it works without `git`.
pub(crate) fn work_tree_root(path: &str) -> Result<PathBuf, RepoError> {
    let given = absolute(path)?;
    let canonical =
        std::fs::canonicalize(&given).map_err(|e| RepoError::NotFound(format!("{}: {e}", given.display())))?;
    if !canonical.is_dir() {
        return Err(RepoError::NotARepo(format!("{} is not a directory", canonical.display())));
    }
    if let Some(root) = canonical.ancestors().find(|dir| dir.join(".git").exists()) {
        // Inside a repository's own git directory (`.git/...`) there is no work tree to read.
        if canonical.components().any(|c| c.as_os_str() == ".git") {
            return Err(RepoError::Bare(format!(
                "{} is inside a git directory, not a work tree; give the work tree's directory",
                canonical.display()
            )));
        }
        return Ok(root.to_path_buf());
    }
    if let Some(bare) = canonical.ancestors().find(|dir| is_git_dir(dir)) {
        return Err(RepoError::Bare(format!(
            "{} is a bare git repository (no work tree); register a clone with a work tree instead",
            bare.display()
        )));
    }
    Err(RepoError::NotARepo(format!("{} is not inside a git work tree", canonical.display())))
}

/// A git directory: `HEAD`, `objects/` and `refs/` (what a bare repository is at its top).
fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

#[cfg(test)]
mod tests;
