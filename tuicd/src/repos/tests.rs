use std::path::Path;
use std::process::Command;

use super::*;

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git runs");
    assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
}

fn repo(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    std::fs::canonicalize(dir).unwrap()
}

#[test]
fn a_work_tree_is_registered_by_its_canonical_top_level_and_survives_a_reload() {
    let tmp = tempfile::tempdir().unwrap();
    let root = repo(tmp.path(), "alpha");
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    let repos = Repos::load(tmp.path());
    let entry = repos.add(root.join("src/deep").to_str().unwrap()).unwrap();
    assert_eq!(entry.path, root);
    assert_eq!(entry.name(), "alpha");
    // Twice is once.
    repos.add(root.to_str().unwrap()).unwrap();
    assert_eq!(repos.roots(), vec![root.clone()]);
    assert_eq!(Repos::load(tmp.path()).list(), repos.list());
}

#[test]
fn a_bare_repository_and_a_plain_directory_are_refused_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let bare = tmp.path().join("bare.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare"]);
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let repos = Repos::load(tmp.path());
    let err = repos.add(bare.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, RepoError::Bare(_)), "{err:?}");
    assert!(err.to_string().contains("bare git repository"), "{err}");
    let err = repos.add(plain.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, RepoError::NotARepo(_)), "{err:?}");
    assert!(matches!(repos.add("relative/dir").unwrap_err(), RepoError::InvalidPath(_)));
    assert!(repos.list().is_empty());
    assert!(!tmp.path().join(FILE_NAME).exists());
}

#[test]
fn remove_forgets_one_and_an_unknown_path_is_not_found() {
    let tmp = tempfile::tempdir().unwrap();
    let a = repo(tmp.path(), "a");
    let b = repo(tmp.path(), "b");
    let repos = Repos::load(tmp.path());
    repos.add(a.to_str().unwrap()).unwrap();
    repos.add(b.to_str().unwrap()).unwrap();
    repos.remove(a.to_str().unwrap()).unwrap();
    assert_eq!(repos.roots(), vec![b.clone()]);
    assert!(matches!(repos.remove(a.to_str().unwrap()).unwrap_err(), RepoError::NotFound(_)));
    assert_eq!(Repos::load(tmp.path()).roots(), vec![b]);
}

#[test]
fn touch_makes_the_deepest_owning_repository_the_most_recently_used() {
    let tmp = tempfile::tempdir().unwrap();
    let a = repo(tmp.path(), "a");
    let b = repo(tmp.path(), "b");
    let repos = Repos::load(tmp.path());
    repos.add(a.to_str().unwrap()).unwrap();
    repos.add(b.to_str().unwrap()).unwrap();
    assert!(repos.most_recently_used().is_none());
    repos.touch(&b.join("src"));
    assert_eq!(repos.most_recently_used().unwrap().path, b);
    repos.touch(&a);
    assert_eq!(repos.most_recently_used().unwrap().path, a);
    repos.touch(Path::new("/nowhere"));
    assert_eq!(Repos::load(tmp.path()).most_recently_used().unwrap().path, a);
}

#[test]
fn an_unreadable_list_is_kept_and_changes_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let a = repo(tmp.path(), "a");
    std::fs::write(tmp.path().join(FILE_NAME), b"{not json").unwrap();
    let repos = Repos::load(tmp.path());
    assert!(repos.list().is_empty());
    let err = repos.add(a.to_str().unwrap()).unwrap_err();
    assert!(err.to_string().contains("cannot be read"), "{err}");
    assert_eq!(std::fs::read(tmp.path().join(FILE_NAME)).unwrap(), b"{not json");
}
