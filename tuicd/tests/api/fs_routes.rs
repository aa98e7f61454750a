//! The absolute-path file routes doing their work inside a registered repository: reads, the
//! read caps, atomic writes, copies, moves and transfers.

use reqwest::StatusCode;
use serde_json::json;

use crate::fs_util::{Fixture, query};
use crate::harness::Daemon;

#[tokio::test]
async fn reads_answer_the_text_of_files_inside_a_registered_repository() {
    let daemon = Daemon::start().await;
    let f = Fixture::registered(&daemon).await;
    let (r, readme) = (f.r(), format!("{}/README.md", f.r()));
    for path in [
        format!("/fs/read-external{}", query(&[("path", &readme)])),
        format!("/fs/read-editor-external{}", query(&[("path", &readme)])),
        format!("/fs/read-editor{}", query(&[("repoPath", &r), ("file", "README.md")])),
        format!("/fs/read-editor{}", query(&[("repoPath", &r), ("file", "./README.md")])),
    ] {
        let (status, body) = daemon.get(&path).await;
        assert_eq!((status, body), (StatusCode::OK, json!("hello\n")), "{path}");
    }
    // A symlink that stays inside the repository is followed.
    std::os::unix::fs::symlink(f.root.join("README.md"), f.root.join("link-in")).unwrap();
    let (status, body) = daemon.get(&format!("/fs/read-external{}", query(&[("path", &format!("{r}/link-in"))]))).await;
    assert_eq!((status, body), (StatusCode::OK, json!("hello\n")));
    let (status, body) = daemon.get(&format!("/fs/read-external{}", query(&[("path", &format!("{r}/sub"))]))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a directory is not a file: {body}");
}

#[tokio::test]
async fn the_standard_cap_holds_for_read_external_and_the_large_one_for_the_editor_here() {
    let daemon = Daemon::start().await;
    let f = Fixture::registered(&daemon).await;
    let big = f.root.join("big.txt");
    std::fs::write(&big, vec![b'x'; tuicd::limits::FS_READ_CAP_REMOTE as usize + 1]).unwrap();
    let big = big.display().to_string();
    let (status, body) = daemon.get(&format!("/fs/read-external{}", query(&[("path", &big)]))).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large")));
    assert!(body["error"].as_str().unwrap().contains("read cap"), "{body}");
    // On this machine (the socket) the editor read has the 250 MB cap.
    let (status, body) = daemon.get(&format!("/fs/read-editor-external{}", query(&[("path", &big)]))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body.as_str().map(str::len), Some(tuicd::limits::FS_READ_CAP_REMOTE as usize + 1));
}

#[tokio::test]
async fn writes_replace_files_atomically_and_keep_nothing_else() {
    let daemon = Daemon::start().await;
    let f = Fixture::registered(&daemon).await;
    let r = f.r();
    let (status, body) =
        daemon.post("/fs/write-external", json!({"path": format!("{r}/sub/new.txt"), "content": "one"})).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"ok": true})));
    assert_eq!(std::fs::read_to_string(f.root.join("sub/new.txt")).unwrap(), "one");
    let (status, _) =
        daemon.post("/fs/write-external", json!({"path": format!("{r}/README.md"), "content": "two"})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(std::fs::read_to_string(f.root.join("README.md")).unwrap(), "two");
    let names: Vec<String> = std::fs::read_dir(&f.root)
        .unwrap()
        .chain(std::fs::read_dir(f.root.join("sub")).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "a temp file was left: {names:?}");
    let (status, body) = daemon.post("/fs/write-external", json!({"path": format!("{r}/sub"), "content": "x"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a directory is not overwritten: {body}");
    let (status, body) =
        daemon.post("/fs/write-external", json!({"path": format!("{r}/no/such/dir.txt"), "content": "x"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

#[tokio::test]
async fn copies_and_moves_stay_inside_and_never_overwrite() {
    let daemon = Daemon::start().await;
    let f = Fixture::registered(&daemon).await;
    let r = f.r();
    let readme = format!("{r}/README.md");
    let (status, body) = daemon.post("/fs/copy-abs", json!({"from": readme, "to": format!("{r}/copy.md")})).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"ok": true, "bytes": 6})));
    let (status, body) = daemon.post("/fs/copy-abs", json!({"from": readme, "to": format!("{r}/copy.md")})).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")), "{body}");
    let (status, body) =
        daemon.post("/fs/move-abs", json!({"from": format!("{r}/copy.md"), "to": format!("{r}/sub/moved.md")})).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"ok": true})));
    assert!(!f.root.join("copy.md").exists());
    assert_eq!(std::fs::read_to_string(f.root.join("sub/moved.md")).unwrap(), "hello\n");
    let (status, body) =
        daemon.post("/fs/copy-abs", json!({"from": format!("{r}/sub"), "to": format!("{r}/sub2")})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a directory copy goes through /fs/transfer: {body}");
}

#[tokio::test]
async fn transfer_copies_and_moves_into_a_directory() {
    let daemon = Daemon::start().await;
    let f = Fixture::registered(&daemon).await;
    let r = f.r();
    std::fs::create_dir_all(f.root.join("tree/deep")).unwrap();
    std::fs::write(f.root.join("tree/deep/a.txt"), "a").unwrap();
    std::fs::create_dir_all(f.root.join("dest")).unwrap();
    let body = json!({"destDir": format!("{r}/dest"), "paths": [format!("{r}/tree")], "mode": "copy"});
    let (status, answer) = daemon.post("/fs/transfer", body.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a directory needs allowRecursive: {answer}");
    assert!(answer["error"].as_str().unwrap().contains("allowRecursive"), "{answer}");
    let mut recursive = body;
    recursive["allowRecursive"] = json!(true);
    let (status, answer) = daemon.post("/fs/transfer", recursive).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["transferred"], json!([format!("{r}/dest/tree")]));
    assert_eq!(std::fs::read_to_string(f.root.join("dest/tree/deep/a.txt")).unwrap(), "a");
    assert!(f.root.join("tree/deep/a.txt").exists(), "a copy leaves the source");
    let body = json!({"destDir": format!("{r}/sub"), "paths": [format!("{r}/README.md"), format!("{r}/tree")],
        "mode": "move", "allowRecursive": true});
    let (status, answer) = daemon.post("/fs/transfer", body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(f.root.join("sub/README.md").exists() && f.root.join("sub/tree/deep/a.txt").exists());
    assert!(!f.root.join("README.md").exists() && !f.root.join("tree").exists());
    let (status, answer) = daemon
        .post("/fs/transfer", json!({"destDir": r, "paths": [format!("{r}/sub/README.md")], "mode": "teleport"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(answer["error"].as_str().unwrap().contains("copy or move"), "{answer}");
}

#[tokio::test]
async fn a_caller_over_tcp_gets_the_standard_cap_on_editor_reads() {
    use base64::Engine;
    let port = crate::harness::free_port();
    let auth = json!({"username": "me", "password_hash": crate::harness::quick_hash("pw")});
    let daemon = Daemon::builder()
        .config(json!({"services": {"server": {"enabled": true, "port": port}, "auth": auth}}))
        .start()
        .await;
    let f = Fixture::registered(&daemon).await;
    let big = f.root.join("big.txt");
    std::fs::write(&big, vec![b'x'; tuicd::limits::FS_READ_CAP_REMOTE as usize + 1]).unwrap();
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("me:pw"));
    let client = reqwest::Client::new();
    let remote = |path: String| {
        let request = client.get(format!("http://127.0.0.1:{port}{path}")).header("Authorization", basic.clone());
        async move { request.send().await.unwrap().status() }
    };
    let big = big.display().to_string();
    let readme = format!("{}/README.md", f.r());
    assert_eq!(
        remote(format!("/fs/read-editor-external{}", query(&[("path", &big)]))).await,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    assert_eq!(
        remote(format!("/fs/read-editor{}", query(&[("repoPath", &f.r()), ("file", "big.txt")]))).await,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    assert_eq!(remote(format!("/fs/read-editor-external{}", query(&[("path", &readme)]))).await, StatusCode::OK);
    // The same file on the socket, on this machine, reads whole.
    let (status, _) = daemon.get(&format!("/fs/read-editor-external{}", query(&[("path", &big)]))).await;
    assert_eq!(status, StatusCode::OK);
}
