//! The traversal corpus against the gate itself, on a real directory tree: a root `repo`, a file
//! in it, a sibling `repo-evil` whose name starts with the root's, a secret outside, and symlinks
//! out of the root.

use std::path::{Path, PathBuf};

use super::*;

struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("repo");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
    std::fs::create_dir_all(base.join("repo-evil")).unwrap();
    std::fs::write(base.join("repo-evil/loot"), "loot").unwrap();
    std::fs::write(base.join("secret"), "secret").unwrap();
    std::os::unix::fs::symlink(base.join("secret"), root.join("link-out")).unwrap();
    std::os::unix::fs::symlink(&base, root.join("dir-out")).unwrap();
    std::os::unix::fs::symlink(root.join("src/main.rs"), root.join("link-in")).unwrap();
    Tree { _dir: dir, base, root }
}

/// Every path a caller might try to escape with, as the route sees it after one decoding.
fn corpus(t: &Tree) -> Vec<String> {
    let r = t.root.display().to_string();
    let b = t.base.display().to_string();
    let mut paths = vec![
        String::new(),
        "relative/path".into(),
        "repo/src/main.rs".into(),
        "./src/main.rs".into(),
        format!("{r}/../secret"),
        format!("{r}/src/../../secret"),
        format!("{r}/.."),
        format!("/../{r}/src/main.rs"),
        format!("{r}/src/..//..//secret"),
        format!("{r}/src/main.rs/.."),
        format!("{r}/src/main.rs\0"),
        format!("{r}\0/../secret"),
        format!("{r}/%2e%2e/secret"),
        format!("{r}/%2E%2E%2Fsecret"),
        format!("{r}/%252e%252e/secret"),
        format!("{r}/..%2fsecret"),
        format!("{r}/{}", "a".repeat(crate::limits::FS_PATH_MAX_BYTES)),
        format!("{r}/{}/x", "b".repeat(300)),
        format!("{r}/link-out"),
        format!("{r}/dir-out/secret"),
        format!("{b}/repo-evil/loot"),
        format!("{b}/repo-evil"),
        format!("{b}/secret"),
        "/etc/passwd".into(),
    ];
    paths.push(format!("{r}/../repo-evil/loot"));
    paths
}

#[test]
fn every_path_in_the_corpus_is_refused_for_reads_and_writes() {
    let t = tree();
    let gate = Gate::new([t.root.clone()]);
    for raw in corpus(&t) {
        assert!(gate.existing("path", &raw).is_err(), "existing accepted {raw:?}");
        assert!(gate.target("path", &raw).is_err(), "target accepted {raw:?}");
    }
}

#[test]
fn lexical_refusals_come_before_the_disk_and_name_the_rule() {
    let t = tree();
    let gate = Gate::new([t.root.clone()]);
    let r = t.root.display();
    let reason = |raw: &str| gate.existing("path", raw).unwrap_err().to_string();
    assert!(reason("src/main.rs").contains("relative"), "{}", reason("src/main.rs"));
    // The `..` names a file that exists, inside the root once resolved: refused all the same.
    assert!(reason(&format!("{r}/src/../src/main.rs")).contains("'..'"));
    assert!(reason(&format!("{r}/src\0")).contains("NUL"));
    assert!(reason(&format!("{r}/%2e%2e/x")).contains("percent-encoded"));
    assert!(reason(&format!("{r}/{}", "a".repeat(5000))).contains("byte limit"));
    assert!(reason("").contains("empty"));
    assert!(matches!(gate.existing("path", "/nope/at/all"), Err(GateError::Missing { .. })));
}

#[test]
fn a_sibling_whose_name_starts_with_the_root_name_is_outside() {
    let t = tree();
    let gate = Gate::new([t.root.clone()]);
    let loot = t.base.join("repo-evil/loot");
    assert!(matches!(gate.existing("path", &loot.display().to_string()), Err(GateError::Outside { .. })));
}

#[test]
fn symlinks_out_of_the_root_are_refused_and_say_so() {
    let t = tree();
    let gate = Gate::new([t.root.clone()]);
    let err = gate.existing("path", &t.root.join("link-out").display().to_string()).unwrap_err();
    assert!(err.to_string().contains("symlink"), "{err}");
    // A write through a symlink pointing out is refused too, and the target is left alone.
    assert!(gate.target("to", &t.root.join("link-out").display().to_string()).is_err());
    assert!(gate.target("to", &t.root.join("dir-out/new").display().to_string()).is_err());
    assert_eq!(std::fs::read_to_string(t.base.join("secret")).unwrap(), "secret");
}

#[test]
fn paths_inside_pass_and_answer_the_canonical_path() {
    let t = tree();
    let gate = Gate::new([t.root.clone()]);
    let main = t.root.join("src/main.rs");
    assert_eq!(gate.existing("path", &main.display().to_string()).unwrap(), main);
    assert_eq!(gate.existing("path", &t.root.join("link-in").display().to_string()).unwrap(), main);
    assert_eq!(gate.existing("path", &format!("{}/./src//main.rs", t.root.display())).unwrap(), main);
    assert_eq!(gate.existing("path", &t.root.display().to_string()).unwrap(), t.root);
    // A new file: its parent is canonicalized, the name kept.
    let new = t.root.join("src/new.rs");
    assert_eq!(gate.target("to", &new.display().to_string()).unwrap(), new);
    assert!(matches!(
        gate.target("to", &t.root.join("no/such/dir.rs").display().to_string()),
        Err(GateError::Missing { .. })
    ));
}

#[test]
fn a_root_reached_through_a_symlink_is_compared_canonically() {
    let t = tree();
    let alias = t.base.join("alias");
    std::os::unix::fs::symlink(&t.root, &alias).unwrap();
    let gate = Gate::new([alias.clone()]);
    let main = alias.join("src/main.rs");
    assert_eq!(gate.existing("path", &main.display().to_string()).unwrap(), t.root.join("src/main.rs"));
    assert!(
        Gate::new(Vec::<PathBuf>::new())
            .existing("path", &main.display().to_string())
            .unwrap_err()
            .to_string()
            .contains("no repository is registered")
    );
}

#[test]
fn reads_are_capped_and_writes_are_atomic() {
    let t = tree();
    let file = t.root.join("big");
    std::fs::write(&file, vec![b'x'; 100]).unwrap();
    assert_eq!(read_capped(&file, 100).unwrap().len(), 100);
    assert!(matches!(read_capped(&file, 99), Err(FileError::TooLarge { size: 100, cap: 99, .. })));
    assert!(matches!(read_capped(&t.root, 1000), Err(FileError::IsDirectory { .. })));
    let fifo = t.root.join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    assert!(matches!(read_capped(&fifo, 1000), Err(FileError::NotAFile { .. })), "a FIFO is refused unopened");
    write_atomic(&file, b"new").unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), b"new");
    assert!(matches!(write_atomic(&t.root.join("src"), b"x"), Err(FileError::IsDirectory { .. })));
    // No temp file is left behind, after a success or a failure.
    let leftovers: Vec<_> = std::fs::read_dir(&t.root)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(read_cap(true), crate::limits::FS_READ_CAP_REMOTE);
    assert_eq!(read_cap(false), crate::limits::FS_READ_CAP_LOOPBACK);
    let _: &Path = &t.base;
}
