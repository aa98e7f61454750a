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
    let head = std::fs::read_to_string(git_dir(root)?.join("HEAD")).ok()?;
    branch_of_head(&head)
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
