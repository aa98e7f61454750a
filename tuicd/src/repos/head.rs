//! The branch a work tree has checked out, read from its `HEAD` file (no `git` process): cheap
//! enough for every `repo action=list` entry, and it works without `git` on PATH.

use std::path::{Path, PathBuf};

/// The git directory of the work tree at `root`: `.git` itself, or where a `.git` file points
/// (a linked worktree or a submodule).
pub(crate) fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git);
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(root.join(target))
}

/// The checked-out branch (`main`), or None on a detached HEAD or an unreadable one. An unborn
/// branch (a fresh `git init`) is named too: HEAD already points at it.
pub(crate) fn branch(root: &Path) -> Option<String> {
    let dir = git_dir(root)?;
    let head = std::fs::read_to_string(dir.join("HEAD")).ok()?;
    match branch_of_head(&head) {
        // A reftable repository's HEAD file is a stub naming `.invalid`; its refs are read
        // through git.
        Some(name) if name == REFTABLE_STUB => symbolic_head(root),
        named => named,
    }
}

/// The branch name a reftable repository's stub `HEAD` file carries.
pub(crate) const REFTABLE_STUB: &str = ".invalid";

/// Whether the repository keeps its refs in a reftable (`git init --ref-format=reftable`), where
/// the ref files tuicd reads directly do not exist.
pub(crate) fn is_reftable(git_dir: &Path) -> bool {
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .map(|c| git_dir.join(c.trim_end()))
        .unwrap_or_else(|_| git_dir.to_path_buf());
    common.join("reftable").is_dir()
}

/// `git symbolic-ref --short HEAD`, with nothing of the repository's configuration run.
fn symbolic_head(root: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "--no-optional-locks", "-C"])
        .arg(root)
        .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let name = String::from_utf8(out.stdout).ok()?.trim_end().to_owned();
    (out.status.success() && !name.is_empty()).then_some(name)
}

/// The branch a `HEAD` file's text names: `ref: refs/heads/<name>`.
pub(crate) fn branch_of_head(head: &str) -> Option<String> {
    head.trim_end().strip_prefix("ref: refs/heads/").map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbolic_head_names_its_branch_and_a_detached_one_none() {
        assert_eq!(branch_of_head("ref: refs/heads/feature/x y\n").as_deref(), Some("feature/x y"));
        assert_eq!(branch_of_head("3f786850e387550fdab836ed7e6dc881de23001b\n"), None);
        assert_eq!(branch_of_head(""), None);
    }
}
