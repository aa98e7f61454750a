//! Where a sandboxed command may write for a repository: its work tree, the git directory it
//! shares with its worktrees (objects, refs: `git commit` writes there) and those worktrees.
//! Read from git's own files (`.git`, `worktrees/*/gitdir`), no subprocess.
//!
//! Those files lie inside what an earlier sandboxed command could write, so none is taken on its
//! word: a linked worktree counts only when its `.git` file and the admin entry in the common git
//! directory point at each other (a command cannot forge the half that lies outside its reach),
//! the common directory is where git's layout puts it (`<common>/worktrees/<name>`), never what a
//! `commondir` file says, and a `.git` directory must not lead out of the work tree (a symlink).

use std::path::{Path, PathBuf};

/// `root` (a work tree, canonical), its git directory, the common one, the main work tree and
/// every linked worktree, each canonical and listed once.
pub(crate) fn writable_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![root.to_path_buf()];
    let Some(common) = common_dir(root) else { return dirs };
    if common.file_name().is_some_and(|n| n == ".git")
        && let Some(main) = common.parent()
        && main.join(".git").canonicalize().ok().as_ref() == Some(&common)
    {
        dirs.push(main.to_path_buf());
    }
    if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
        for entry in entries.flatten() {
            // `gitdir` names the worktree's `.git` file, which must point back here.
            let Ok(text) = std::fs::read_to_string(entry.path().join("gitdir")) else { continue };
            let Some(tree) = Path::new(text.trim()).parent().and_then(|p| p.canonicalize().ok()) else { continue };
            if admin_dir(&tree).is_some_and(|admin| Some(admin) == entry.path().canonicalize().ok()) {
                dirs.push(tree);
            }
        }
    }
    dirs.push(common);
    let mut seen = Vec::with_capacity(dirs.len());
    for dir in dirs {
        if !seen.contains(&dir) {
            seen.push(dir);
        }
    }
    seen
}

/// The git directory shared by `root` and its worktrees, canonical.
fn common_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return dot_git.canonicalize().ok();
    }
    // A linked worktree: `.git` is a file `gitdir: <common>/worktrees/<name>`, whose own `gitdir`
    // file names this `.git` back.
    let admin = admin_dir(root)?;
    let back = std::fs::read_to_string(admin.join("gitdir")).ok()?;
    if Path::new(back.trim()).canonicalize().ok()? != dot_git.canonicalize().ok()? {
        return None;
    }
    let worktrees = admin.parent()?;
    (worktrees.file_name()? == "worktrees").then(|| worktrees.parent().map(Path::to_path_buf))?
}

/// The admin directory a linked worktree's `.git` file names, canonical.
fn admin_dir(tree: &Path) -> Option<PathBuf> {
    let dot_git = tree.join(".git");
    if !std::fs::symlink_metadata(&dot_git).ok()?.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let named = text.trim().strip_prefix("gitdir:")?.trim();
    tree.join(named).canonicalize().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    #[test]
    fn a_repository_and_its_worktree_each_reach_the_other_and_the_git_dir() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main");
        std::fs::create_dir(&main).unwrap();
        git(&main, &["init", "-q"]);
        git(&main, &["commit", "-q", "--allow-empty", "-m", "first"]);
        git(&main, &["worktree", "add", "-q", "../linked", "-b", "side"]);
        let (main, linked) = (main.canonicalize().unwrap(), dir.path().join("linked").canonicalize().unwrap());
        let from_main = writable_dirs(&main);
        assert!(from_main.contains(&linked) && from_main.contains(&main.join(".git")), "{from_main:?}");
        let from_linked = writable_dirs(&linked);
        assert!(from_linked.contains(&main) && from_linked.contains(&main.join(".git")), "{from_linked:?}");
        assert!(!from_linked.contains(&dir.path().canonicalize().unwrap()), "{from_linked:?}");
    }

    /// A command that could write the repository forges git's files to widen the next run's
    /// sandbox: a worktree entry naming another directory, a `.git` symlink, a `.git` file naming
    /// a foreign git directory. None is believed.
    #[test]
    fn forged_git_files_widen_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (main, elsewhere) = (dir.path().join("main"), dir.path().join("elsewhere"));
        std::fs::create_dir_all(elsewhere.join("deep")).unwrap();
        std::fs::create_dir(&main).unwrap();
        git(&main, &["init", "-q"]);
        let main = main.canonicalize().unwrap();
        let elsewhere = elsewhere.canonicalize().unwrap();
        let forged = main.join(".git/worktrees/evil");
        std::fs::create_dir_all(&forged).unwrap();
        std::fs::write(forged.join("gitdir"), format!("{}/deep/.git\n", elsewhere.display())).unwrap();
        let dirs = writable_dirs(&main);
        assert!(dirs.iter().all(|d| d.starts_with(&main)), "{dirs:?}");

        // `.git` a symlink out, or a file naming a foreign git directory.
        let linked = dir.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        let linked = linked.canonicalize().unwrap();
        std::os::unix::fs::symlink(&elsewhere, linked.join(".git")).unwrap();
        assert_eq!(writable_dirs(&linked), std::slice::from_ref(&linked));
        std::fs::remove_file(linked.join(".git")).unwrap();
        std::fs::write(linked.join(".git"), format!("gitdir: {}\n", elsewhere.join("deep").display())).unwrap();
        assert_eq!(writable_dirs(&linked), std::slice::from_ref(&linked));
    }
}
