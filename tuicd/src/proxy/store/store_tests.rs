use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::*;

fn file(value: serde_json::Value) -> UpstreamsFile {
    serde_json::from_value(value).expect("a valid file")
}

fn one(id: &str, name: &str) -> UpstreamsFile {
    file(json!({"servers": [{"id": id, "name": name, "transport": {"type": "stdio", "command": "srv"}}]}))
}

#[test]
fn a_missing_file_is_empty_and_a_broken_one_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert_eq!(load(dir.path()).expect("missing is empty"), UpstreamsFile::default());

    std::fs::write(path(dir.path()), "{\n  \"servers\": [,]\n}\n").expect("write");
    let error = load(dir.path()).expect_err("broken JSON").to_string();
    assert!(error.contains(UPSTREAMS_FILE) && error.contains("line 2"), "{error}");

    std::fs::write(
        path(dir.path()),
        r#"{"servers": [{"id": "a", "name": "n", "transport": {"type": "stdio", "command": 5}}]}"#,
    )
    .expect("write");
    let error = load(dir.path()).expect_err("wrong type").to_string();
    assert!(error.contains("servers[0].transport") || error.contains("servers[0]"), "{error}");

    std::fs::write(
        path(dir.path()),
        r#"{"servers": [{"id": "a", "name": "Bad", "transport": {"type": "stdio", "command": "x"}}]}"#,
    )
    .expect("write");
    let error = load(dir.path()).expect_err("a rule broken").to_string();
    assert!(error.contains(UPSTREAMS_FILE) && error.contains("InvalidName"), "{error}");
}

#[tokio::test]
async fn a_save_writes_a_private_file_and_returns_the_exact_pair() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (before, after) =
        save_delta(dir.path(), UpstreamsFile::default(), one("a", "fs"), None, None).await.expect("saved");
    assert_eq!((before, after.clone()), (UpstreamsFile::default(), one("a", "fs")));
    assert_eq!(load(dir.path()).expect("reads back"), after);
    let mode = std::fs::metadata(path(dir.path())).expect("file").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let leftovers = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .count();
    assert_eq!(leftovers, 0);
}

#[tokio::test]
async fn a_refused_save_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    save_delta(dir.path(), UpstreamsFile::default(), one("a", "fs"), None, None).await.expect("saved");
    let text = std::fs::read(path(dir.path())).expect("file");
    let invalid = save_delta(dir.path(), one("a", "fs"), one("a", "Not Valid"), None, None).await;
    assert!(matches!(invalid, Err(StoreError::Invalid(ConfigError::InvalidName { .. }))), "{invalid:?}");
    let conflict = save_delta(dir.path(), UpstreamsFile::default(), one("a", "other"), None, None).await;
    assert!(matches!(conflict, Err(StoreError::Merge(MergeError::AddedConcurrently { .. }))), "{conflict:?}");
    // A different id under a name taken meanwhile: each side is valid, the merge is not.
    let merged = save_delta(dir.path(), UpstreamsFile::default(), one("b", "fs"), None, None).await;
    assert!(matches!(merged, Err(StoreError::MergedInvalid(ConfigError::DuplicateName { .. }))), "{merged:?}");
    assert_eq!(std::fs::read(path(dir.path())).expect("file"), text);
}

#[tokio::test]
async fn update_changes_the_latest_file_under_the_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    save_delta(dir.path(), UpstreamsFile::default(), one("a", "fs"), None, None).await.expect("saved");
    let (before, after) = update(dir.path(), |file| {
        file.servers[0].enabled = false;
        Ok(())
    })
    .await
    .expect("updated");
    assert!(before.servers[0].enabled && !after.servers[0].enabled);
    assert_eq!(load(dir.path()).expect("reads back"), after);
    let refused = update(dir.path(), |_| Err("no such upstream".to_owned())).await;
    assert!(matches!(refused, Err(StoreError::Refused(ref m)) if m == "no such upstream"), "{refused:?}");
}

#[tokio::test]
async fn a_save_waits_for_another_holder_of_the_lock_and_keeps_its_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lock =
        OpenOptions::new().create(true).truncate(false).write(true).open(dir.path().join(LOCK_FILE)).expect("lock");
    lock.lock().expect("locked");
    let save = tokio::spawn({
        let dir = dir.path().to_owned();
        async move { save_delta(&dir, UpstreamsFile::default(), one("b", "git"), None, None).await }
    });
    wait_for_a_waiter(&dir.path().join(LOCK_FILE)).await;
    // Another writer, holding the lock, writes its own server; the save must read it first.
    write_atomically(&path(dir.path()), &one("a", "fs")).expect("written under the lock");
    assert!(!save.is_finished(), "the save ran while another process held the lock");
    drop(lock);
    let (_, after) = save.await.expect("joins").expect("saved");
    let ids: Vec<&str> = after.servers.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
}

/// Waits until the kernel lists a process blocked on `lock` (`/proc/locks` marks waiters `->`).
async fn wait_for_a_waiter(lock: &Path) {
    use std::os::unix::fs::MetadataExt;
    let inode = format!(":{}", std::fs::metadata(lock).expect("lock file").ino());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let locks = std::fs::read_to_string("/proc/locks").expect("/proc/locks");
        if locks.lines().any(|l| l.contains("->") && l.split_whitespace().any(|f| f.ends_with(&inode))) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "no save waited on the lock:\n{locks}");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}
