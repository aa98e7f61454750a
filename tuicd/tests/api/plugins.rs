//! Plugin routes end to end: the developer guide, a plugin's data files (a traversal corpus sent
//! as raw bytes, so no client normalises it first) and output watchers matched against a real
//! PTY's output, arriving on `/events`.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::*;
use crate::session_util::{create_id, write};

#[tokio::test]
async fn plugins_docs_serve_the_developer_guide() {
    let daemon = Daemon::start().await;
    let (status, body) = daemon.get("/plugins/docs").await;
    assert_eq!(status, StatusCode::OK);
    let guide = body["content"].as_str().unwrap();
    for needle in ["# Writing a tuic plugin", "POST /api/plugins/output-watchers", "plugin-output-match", "data/"] {
        assert!(guide.contains(needle), "the guide lacks {needle:?}");
    }
    let (status, body) = daemon.post("/plugins/docs", json!({})).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
}

/// `GET` of a raw request path: (status line, body).
async fn raw_get(daemon: &Daemon, path: &str) -> (String, String) {
    let request = format!("GET {path} HTTP/1.1\r\nHost: tuic\r\nConnection: close\r\n\r\n");
    let answer = daemon.raw(request.as_bytes()).await;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (head.lines().next().unwrap_or_default().to_owned(), body.to_owned())
}

#[tokio::test]
async fn plugins_data_is_served_from_the_plugin_data_dir_and_nothing_outside_it() {
    let daemon = Daemon::start().await;
    let plugin = daemon.dir.path().join("plugins/notes");
    let data = plugin.join("data");
    std::fs::create_dir_all(data.join("sub")).unwrap();
    std::fs::write(data.join("state.json"), br#"{"count": 3}"#).unwrap();
    std::fs::write(data.join("notes.txt"), "plain words").unwrap();
    std::fs::write(data.join("sub/deep.txt"), "deep words").unwrap();
    std::fs::write(data.join("blob.bin"), [0xff, 0x00, 0xfe]).unwrap();
    std::fs::write(plugin.join("secret.txt"), "SECRET-OUTSIDE-DATA").unwrap();
    std::os::unix::fs::symlink(plugin.join("secret.txt"), data.join("escape")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", data.join("far")).unwrap();
    std::os::unix::fs::symlink("state.json", data.join("alias.json")).unwrap();

    let read = |path: &'static str| {
        let daemon = &daemon;
        async move {
            let response = daemon.client.get(Daemon::url(path)).send().await.unwrap();
            let kind = response.headers()["content-type"].to_str().unwrap().to_owned();
            assert_eq!(response.headers()["x-content-type-options"], "nosniff", "{path}");
            (response.status(), kind, response.bytes().await.unwrap())
        }
    };
    let (status, kind, body) = read("/api/plugins/notes/data/state.json").await;
    assert_eq!((status, kind.as_str()), (StatusCode::OK, "application/json"));
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), json!({"count": 3}));
    let (status, kind, body) = read("/api/plugins/notes/data/notes.txt").await;
    assert_eq!((status, kind.as_str(), &body[..]), (StatusCode::OK, "text/plain; charset=utf-8", &b"plain words"[..]));
    let (status, _, body) = read("/api/plugins/notes/data/sub/deep.txt").await;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"deep words"[..]));
    let (_, kind, _) = read("/api/plugins/notes/data/blob.bin").await;
    assert_eq!(kind, "application/octet-stream");
    let (status, _, body) = read("/api/plugins/notes/data/alias.json").await;
    assert_eq!(status, StatusCode::OK, "a link inside the data dir is followed");
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), json!({"count": 3}));

    let refused = daemon.client.get(Daemon::url("/api/plugins/notes/data/missing.json")).send().await.unwrap();
    assert_eq!(refused.headers()["x-content-type-options"], "nosniff", "a refusal too");
    let (status, body) = daemon.get("/api/plugins/absent/data/state.json").await;
    assert_eq!((status, body["code"].clone()), (StatusCode::NOT_FOUND, json!("not_found")), "{body}");
    assert!(body["error"].as_str().unwrap().contains("no plugin 'absent' is installed"), "{body}");
    let (status, body) = daemon.get("/api/plugins/notes/data/missing.json").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body["error"].as_str().unwrap().contains("no data file 'missing.json'"), "{body}");

    let corpus = [
        "/api/plugins/notes/data/../secret.txt",
        "/api/plugins/notes/data/sub/../../secret.txt",
        "/api/plugins/notes/data/..%2fsecret.txt",
        "/api/plugins/notes/data/%2e%2e/secret.txt",
        "/api/plugins/notes/data/%2E%2E%2Fsecret.txt",
        "/api/plugins/notes/data/sub%2f..%2f..%2fsecret.txt",
        "/api/plugins/notes/data/%252e%252e/secret.txt",
        "/api/plugins/notes/data/..%5csecret.txt",
        "/api/plugins/notes/data//etc/passwd",
        "/api/plugins/notes/data/%2fetc%2fpasswd",
        "/api/plugins/notes/data/state.json%00.txt",
        "/api/plugins/notes/data/%01state.json",
        "/api/plugins/notes/data/./state.json",
        "/api/plugins/notes/data/sub//deep.txt",
        "/api/plugins/notes/data/sub/",
        "/api/plugins/notes/data/",
        "/api/plugins/notes/data/%zz",
        "/api/plugins/notes/data/escape",
        "/api/plugins/notes/data/far",
        "/api/plugins/..%2fnotes/data/secret.txt",
        "/api/plugins/.notes/data/state.json",
    ];
    for path in corpus {
        let (status, body) = raw_get(&daemon, path).await;
        assert!(status.contains(" 400 "), "{path}: {status} {body}");
        let error: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{path}: not JSON: {body}"));
        assert_eq!(error["code"], json!("bad_request"), "{path}: {body}");
        assert!(!body.contains("SECRET"), "{path} leaked: {body}");
    }
    // The refusals name what was wrong.
    let (_, body) = raw_get(&daemon, "/api/plugins/notes/data/sub/../../secret.txt").await;
    assert!(body.contains("contains '..'"), "{body}");
    let (_, body) = raw_get(&daemon, "/api/plugins/notes/data/escape").await;
    assert!(body.contains("leads out of the plugin's data directory"), "{body}");
    let (_, body) = raw_get(&daemon, "/api/plugins/notes/data/%252e%252e/secret.txt").await;
    assert!(body.contains("percent-encoded twice"), "{body}");
}

/// Reads `/events` (matches only) until `stop` holds.
async fn matches(daemon: &Daemon, stop: impl Fn(&[(u64, String, Value)]) -> bool) -> Vec<Value> {
    let url = Daemon::url("/events?types=plugin-output-match&last_event_id=0");
    let response = daemon.client.get(url).send().await.unwrap();
    read_events(response, stop).await.into_iter().map(|(_, _, data)| data).collect()
}

#[tokio::test]
async fn plugins_output_watchers_match_pty_lines_onto_events() {
    let daemon = Daemon::start().await;
    let set = json!({"client_id": "gui-1", "seq": 1, "patterns": [
        {"id": "build", "pattern": r"BUILD-(\d+)-FAILED"},
        {"id": "broken", "pattern": "(unclosed"},
        {"id": "long", "pattern": "x".repeat(1025)},
    ]});
    let (status, answer) = daemon.post("/api/plugins/output-watchers", set).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["applied"], json!(["build"]), "{answer}");
    let rejected = answer["rejected"].as_array().unwrap();
    assert_eq!(rejected.iter().map(|r| r["id"].clone()).collect::<Vec<_>>(), [json!("broken"), json!("long")]);
    assert!(rejected[0]["error"].as_str().unwrap().starts_with("pattern 'broken': is not a valid regex"), "{answer}");
    assert!(rejected[1]["error"].as_str().unwrap().contains("longer than 1024 bytes"), "{answer}");
    let marker = json!({"client_id": "gui-2", "seq": 1, "patterns": [{"id": "marker", "pattern": "^MARK-(\\w+)$"}]});
    assert_eq!(daemon.post("/api/plugins/output-watchers", marker).await.0, StatusCode::OK);

    let id = create_id(&daemon, json!({})).await;
    // The typed command echoes `BUILD-%s-FAILED`, which the pattern does not match.
    write(&daemon, &id, "printf '\\033[31mBUILD-%s-FAILED\\033[0m\\nMARK-%s\\n' 42 one\n").await;
    let seen = matches(&daemon, |events| events.len() >= 2).await;
    assert_eq!(
        seen[0],
        json!({"client_id": "gui-1", "id": "build", "session_id": id, "line": "BUILD-42-FAILED", "groups": ["42"]})
    );
    assert_eq!((seen[1]["id"].clone(), seen[1]["groups"].clone()), (json!("marker"), json!(["one"])));

    // Bad sets are refused whole and change nothing.
    let refusals = [
        (
            json!({"client_id": "gui-1", "seq": 1, "patterns": []}),
            StatusCode::CONFLICT,
            "not newer than the applied seq 1",
        ),
        (
            json!({"client_id": "gui-1", "seq": 2, "patterns": [{"id": "a", "pattern": "a"}, {"id": "a", "pattern": "b"}]}),
            StatusCode::BAD_REQUEST,
            "id 'a' is given twice",
        ),
        (
            json!({"client_id": "gui-1", "seq": 2, "patterns": (0..65).map(|i| json!({"id": i.to_string(), "pattern": "z"})).collect::<Vec<_>>()}),
            StatusCode::BAD_REQUEST,
            "at most 64 per frontend",
        ),
        (json!({"client_id": "", "seq": 2, "patterns": []}), StatusCode::BAD_REQUEST, "client_id"),
        (json!({"client_id": "gui-1", "seq": 2, "patterns": [], "extra": 1}), StatusCode::BAD_REQUEST, "extra"),
        (json!({"client_id": "gui-1", "patterns": []}), StatusCode::BAD_REQUEST, "seq"),
    ];
    for (body, want, needle) in refusals {
        let (status, answer) = daemon.post("/api/plugins/output-watchers", body.clone()).await;
        assert_eq!(status, want, "{body}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(needle), "{body}: {answer}");
    }
    // gui-1's set still matches; then an empty set releases it and only gui-2's marker follows.
    write(&daemon, &id, "printf 'BUILD-%s-FAILED\\n' 7\n").await;
    let seen = matches(&daemon, |events| events.len() >= 3).await;
    assert_eq!((seen[2]["id"].clone(), seen[2]["groups"].clone()), (json!("build"), json!(["7"])));
    let release = json!({"client_id": "gui-1", "seq": 3, "patterns": []});
    let (status, answer) = daemon.post("/api/plugins/output-watchers", release).await;
    assert_eq!((status, answer), (StatusCode::OK, json!({"applied": [], "rejected": []})));
    write(&daemon, &id, "printf 'BUILD-%s-FAILED\\nMARK-%s\\n' 8 two\n").await;
    let seen = matches(&daemon, |events| events.len() >= 4).await;
    assert_eq!((seen[3]["id"].clone(), seen[3]["groups"].clone()), (json!("marker"), json!(["two"])), "{seen:?}");
}
