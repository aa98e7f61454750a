//! The registered repositories: `/repos`, `repo action=list|active`, and each session's repo.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::harness::Daemon;
use crate::mcp_client::{call_as, ok};
use crate::repo_util::{git, q, repo, s};

#[tokio::test]
async fn a_repository_is_registered_listed_persisted_and_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let alpha = repo(tmp.path(), "alpha");
    std::fs::create_dir_all(alpha.join("src")).unwrap();
    let daemon = Daemon::start().await;

    let (status, added) = daemon.post("/repos", json!({"path": s(&alpha.join("src"))})).await;
    assert_eq!(status, StatusCode::CREATED, "{added}");
    assert_eq!(added["path"], s(&alpha));
    assert_eq!(added["name"], "alpha");
    let (_, listed) = daemon.get("/repos").await;
    assert_eq!(listed, json!([{"path": s(&alpha), "name": "alpha"}]));
    let listed = ok(&daemon, "repo", json!({"action": "list"})).await;
    assert_eq!(listed, json!([{"path": s(&alpha), "name": "alpha", "branch": "main", "is_git_repo": true}]));

    let file = std::fs::read_to_string(daemon.dir.path().join("repositories.json")).unwrap();
    assert!(file.contains(&s(&alpha)), "{file}");

    let (status, removed) = daemon.request(Method::DELETE, &format!("/repos?path={}", q(&alpha)), None).await;
    assert_eq!(status, StatusCode::OK, "{removed}");
    let (_, listed) = daemon.get("/repos").await;
    assert_eq!(listed, json!([]));
    let (status, missing) = daemon.request(Method::DELETE, &format!("/repos?path={}", q(&alpha)), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
}

#[tokio::test]
async fn a_bare_repository_a_plain_directory_and_a_relative_path_are_refused_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let bare = tmp.path().join("bare.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare"]);
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let daemon = Daemon::start().await;

    let (status, err) = daemon.post("/repos", json!({"path": s(&bare)})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["error"].as_str().unwrap().contains("bare git repository"), "{err}");
    let (status, err) = daemon.post("/repos", json!({"path": s(&plain)})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["error"].as_str().unwrap().contains("not inside a git work tree"), "{err}");
    let (status, err) = daemon.post("/repos", json!({"path": "some/where"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["error"].as_str().unwrap().contains("absolute"), "{err}");
    let (_, listed) = daemon.get("/repos").await;
    assert_eq!(listed, json!([]));
    assert!(!daemon.dir.path().join("repositories.json").exists());
}

#[tokio::test]
async fn active_is_the_callers_pty_repo_and_sessions_carry_their_repo() {
    let tmp = tempfile::tempdir().unwrap();
    let alpha = repo(tmp.path(), "alpha");
    let beta = repo(tmp.path(), "beta");
    let daemon = Daemon::start().await;
    assert_eq!(ok(&daemon, "repo", json!({"action": "active"})).await, json!({"active": null}));

    for r in [&alpha, &beta] {
        let (status, body) = daemon.post("/repos", json!({"path": s(r)})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    // Registered but never used: no repository is active yet.
    assert_eq!(ok(&daemon, "repo", json!({"action": "active"})).await, json!({"active": null}));

    // A session started inside alpha carries it, and its caller's active repo is alpha.
    let (status, created) = daemon.post("/sessions", json!({"shell": "/bin/sh", "cwd": s(&alpha)})).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let tuic = created["tuic_session"].as_str().unwrap();
    let (is_error, active) = call_as(&daemon, "repo", json!({"action": "active"}), &[("x-tuic-session", tuic)]).await;
    assert!(!is_error, "{active}");
    assert_eq!(active["path"], s(&alpha), "{active}");
    assert_eq!(active["source"], "caller_session");
    assert_eq!(active["branch"], "main");

    let listed = ok(&daemon, "session", json!({"action": "list"})).await;
    assert_eq!(listed[0]["repo"], s(&alpha), "{listed}");
    let (_, sessions) = daemon.get("/sessions").await;
    assert_eq!(sessions[0]["repo"], s(&alpha), "{sessions}");
}
