//! The traversal corpus against every absolute-path file route: encoded, double-encoded, `..` in
//! every position, NUL, overlong, a symlink out of the root and a sibling whose name starts with
//! the root's. Everything is refused with a 4xx naming the rule, nothing outside leaks into an
//! answer, and the tree on disk is the same afterwards.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::fs_util::{Fixture, LOOT, SECRET, query};
use crate::harness::Daemon;

/// Absolute paths that must never be reached, as the route sees them after one decoding.
fn corpus(f: &Fixture) -> Vec<String> {
    let (r, b) = (f.r(), f.b());
    vec![
        String::new(),
        "README.md".into(),
        "repo/README.md".into(),
        "./README.md".into(),
        "../secret".into(),
        format!("{r}/../secret"),
        format!("{r}/sub/../../secret"),
        format!("{r}/.."),
        format!("{r}/../repo-evil/loot"),
        format!("/..{r}/README.md"),
        format!("{r}/sub/..//..//secret"),
        format!("{r}/README.md/.."),
        format!("{r}/README.md\0"),
        format!("{r}\0/../secret"),
        format!("{r}/%2e%2e/secret"),
        format!("{r}/%2E%2E%2Fsecret"),
        format!("{r}/..%2fsecret"),
        format!("{r}/%252e%252e/secret"),
        format!("{r}/%00"),
        format!("{r}/{}", "a".repeat(5000)),
        format!("{r}/{}/x", "b".repeat(300)),
        format!("{r}/link-out"),
        format!("{r}/dir-out/secret"),
        format!("{r}/dir-out/repo-evil/loot"),
        format!("{b}/repo-evil/loot"),
        format!("{b}/repo-evil"),
        format!("{b}/secret"),
        format!("{b}/new-outside"),
        "/etc/passwd".into(),
    ]
}

/// Relative `file` values for `/fs/read-editor` (joined to the registered `repoPath`).
fn relative_corpus() -> Vec<String> {
    vec![
        "../secret".into(),
        "sub/../../secret".into(),
        "..".into(),
        "../repo-evil/loot".into(),
        "/etc/passwd".into(),
        "link-out".into(),
        "dir-out/secret".into(),
        "README.md\0".into(),
        "%2e%2e/secret".into(),
        "%252e%252e/secret".into(),
        "a".repeat(5000),
        String::new(),
    ]
}

/// One request that must be refused; answers what went wrong when it was not.
async fn refused(daemon: &Daemon, method: Method, path: &str, body: Option<Value>) -> Option<String> {
    let (status, answer) = daemon.request(method.clone(), path, body.clone()).await;
    let text = answer.to_string();
    let leaked = text.contains(SECRET) || text.contains(LOOT) || text.contains("root:");
    let named = answer["error"].as_str().is_some_and(|e| !e.is_empty()) && answer["code"].is_string();
    if status.is_client_error() && !leaked && named {
        return None;
    }
    let shown: String = path.chars().take(200).collect();
    Some(format!("{method} {shown} {body:?} -> {status} {}", text.chars().take(300).collect::<String>()))
}

#[tokio::test]
async fn the_traversal_corpus_is_refused_by_every_file_route_and_nothing_changes() {
    let daemon = Daemon::start().await;
    let f = Fixture::registered(&daemon).await;
    let (r, readme) = (f.r(), format!("{}/README.md", f.r()));
    let before = f.snapshot();
    let mut failures = Vec::new();
    let mut tried = 0;
    for p in corpus(&f) {
        let p = p.as_str();
        let requests: Vec<(Method, String, Option<Value>)> = vec![
            (Method::GET, format!("/fs/read-external{}", query(&[("path", p)])), None),
            (Method::GET, format!("/fs/read-editor-external{}", query(&[("path", p)])), None),
            (Method::GET, format!("/fs/read-editor{}", query(&[("repoPath", p), ("file", "README.md")])), None),
            (Method::POST, "/fs/write-external".into(), Some(json!({"path": p, "content": "pwned"}))),
            (Method::POST, "/fs/copy-abs".into(), Some(json!({"from": p, "to": format!("{r}/copied")}))),
            (Method::POST, "/fs/copy-abs".into(), Some(json!({"from": readme, "to": p}))),
            (Method::POST, "/fs/move-abs".into(), Some(json!({"from": p, "to": format!("{r}/moved")}))),
            (Method::POST, "/fs/move-abs".into(), Some(json!({"from": readme, "to": p}))),
            (Method::POST, "/fs/transfer".into(), Some(json!({"destDir": p, "paths": [readme], "mode": "copy"}))),
            (Method::POST, "/fs/transfer".into(), Some(json!({"destDir": p, "paths": [readme], "mode": "move"}))),
            (
                Method::POST,
                "/fs/transfer".into(),
                Some(json!({"destDir": format!("{r}/sub"), "paths": [p], "mode": "copy", "allowRecursive": true})),
            ),
            (
                Method::POST,
                "/fs/transfer".into(),
                Some(
                    json!({"destDir": format!("{r}/sub"), "paths": [readme, p], "mode": "move", "allowRecursive": true}),
                ),
            ),
        ];
        for (method, path, body) in requests {
            tried += 1;
            failures.extend(refused(&daemon, method, &path, body).await);
        }
    }
    for file in relative_corpus() {
        tried += 1;
        let path = format!("/fs/read-editor{}", query(&[("repoPath", &r), ("file", &file)]));
        failures.extend(refused(&daemon, Method::GET, &path, None).await);
    }
    // Encoded by hand: the route decodes once, so `%2e%2e` arrives as `..` and `%252e` as `%2e`.
    for raw in [
        format!("/fs/read-external?path={r}/%2e%2e/secret"),
        format!("/fs/read-external?path={r}/%2E%2E/%2E%2E/etc/passwd"),
        format!("/fs/read-external?path={r}%2F..%2Fsecret"),
        format!("/fs/read-external?path={r}/%252e%252e/secret"),
        format!("/fs/read-editor-external?path={r}/README.md%00"),
        format!("/fs/read-editor?repoPath={r}&file=%2e%2e%2fsecret"),
        format!("/fs/read-editor?repoPath={r}&file=..%252fsecret"),
    ] {
        tried += 1;
        failures.extend(refused(&daemon, Method::GET, &raw, None).await);
    }
    assert!(failures.is_empty(), "{} of {tried} requests were not refused:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(f.snapshot(), before, "a refused request changed the tree");
}

#[tokio::test]
async fn refusals_name_the_rule_that_was_broken() {
    let daemon = Daemon::start().await;
    let f = Fixture::registered(&daemon).await;
    let r = f.r();
    let read = |p: String| {
        let daemon = &daemon;
        async move { daemon.get(&format!("/fs/read-external{}", query(&[("path", &p)]))).await }
    };
    let (status, body) = read("README.md".into()).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_field")), "{body}");
    assert!(body["error"].as_str().unwrap().contains("relative"), "{body}");
    let (_, body) = read(format!("{r}/sub/../README.md")).await;
    assert!(body["error"].as_str().unwrap().contains("'..'"), "a '..' is refused even when it stays inside: {body}");
    let (_, body) = read(format!("{r}/README.md\0")).await;
    assert!(body["error"].as_str().unwrap().contains("NUL"), "{body}");
    let (status, body) = read(format!("{}/repo-evil/loot", f.b())).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")), "{body}");
    assert!(body["error"].as_str().unwrap().contains("outside every registered repository"), "{body}");
    let (status, body) = read(format!("{r}/link-out")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"].as_str().unwrap().contains("symlink"), "{body}");
    let (status, body) = read(format!("{r}/missing.txt")).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")), "{body}");
}

#[tokio::test]
async fn a_dot_dot_in_read_editor_that_stays_inside_the_repository_is_read_and_one_leading_out_is_refused() {
    let daemon = Daemon::start().await;
    let f = Fixture::registered(&daemon).await;
    let sub = format!("{}/sub", f.r());
    let read = |file: &str| {
        let (daemon, path) = (&daemon, format!("/fs/read-editor{}", query(&[("repoPath", &sub), ("file", file)])));
        async move { daemon.get(&path).await }
    };
    // As git reads `../README.md` from `repo/sub`.
    for inside in ["../README.md", "./../sub/../README.md", "../../repo/README.md"] {
        let (status, body) = read(inside).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, Some("hello\n")), "{inside}: {body}");
    }
    let (status, body) = read("../../secret").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"].as_str().unwrap().contains("outside the repository"), "{body}");
    assert!(!body.to_string().contains(SECRET));
    let (status, body) = read("../../repo-evil/loot").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a sibling is not inside: {body}");
    // Lexically inside, but a symlink out: contained as the gate contains every path.
    let (status, body) = read("../link-out").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"].as_str().unwrap().contains("symlink") && !body.to_string().contains(SECRET), "{body}");
}
