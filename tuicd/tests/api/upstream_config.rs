//! `GET /mcp/upstreams` and `PUT /mcp/upstreams {base, config}` against the real daemon: the file
//! on disk after each save, refusals that name what was wrong and change nothing, conflicts, stale
//! saves that keep concurrent edits, racing saves, and secrets that never leave the daemon.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Daemon, free_port, quick_hash};

pub(crate) const FILE: &str = "mcp-upstreams.json";
pub(crate) const MARKER: &str = "<redacted>";

/// A stdio upstream that is never started: saving it exercises the file, not a process.
pub(crate) fn disabled(id: &str, name: &str) -> Value {
    json!({"id": id, "name": name, "enabled": false, "transport": {"type": "stdio", "command": "true"}})
}

pub(crate) fn servers(list: Value) -> Value {
    json!({ "servers": list })
}

pub(crate) async fn save(daemon: &Daemon, base: Value, config: Value) -> (StatusCode, Value) {
    daemon.put("/mcp/upstreams", json!({"base": base, "config": config})).await
}

pub(crate) fn disk_text(daemon: &Daemon) -> Option<String> {
    std::fs::read_to_string(daemon.dir.path().join(FILE)).ok()
}

pub(crate) fn on_disk(daemon: &Daemon) -> Value {
    serde_json::from_str(&disk_text(daemon).expect("the file exists")).expect("the file is JSON")
}

fn ids(file: &Value) -> Vec<&str> {
    file["servers"].as_array().expect("servers").iter().map(|s| s["id"].as_str().expect("id")).collect()
}

#[tokio::test]
async fn a_fresh_config_dir_has_no_upstreams_and_no_file() {
    let daemon = Daemon::start().await;
    let (status, shown) = daemon.get("/mcp/upstreams").await;
    assert_eq!(status, StatusCode::OK, "{shown}");
    assert_eq!(shown, servers(json!([])));
    assert_eq!(disk_text(&daemon), None);
}

#[tokio::test]
async fn saves_add_change_and_remove_servers_in_a_private_file() {
    use std::os::unix::fs::PermissionsExt;
    let daemon = Daemon::start().await;
    let added = servers(json!([disabled("a", "fs"), disabled("b", "git")]));
    let (status, answer) = save(&daemon, servers(json!([])), added.clone()).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["ok"], true);
    assert_eq!(ids(&answer["config"]), ["a", "b"]);
    assert_eq!(ids(&on_disk(&daemon)), ["a", "b"]);
    let mode = std::fs::metadata(daemon.dir.path().join(FILE)).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let (_, base) = daemon.get("/mcp/upstreams").await;
    let renamed = servers(json!([disabled("a", "files"), disabled("b", "git")]));
    let (status, answer) = save(&daemon, base.clone(), renamed).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(on_disk(&daemon)["servers"][0]["name"], "files");

    let (_, base) = daemon.get("/mcp/upstreams").await;
    let (status, answer) = save(&daemon, base, servers(json!([disabled("b", "git")]))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(ids(&on_disk(&daemon)), ["b"]);
    assert_eq!(daemon.get("/mcp/upstreams").await.1, answer["config"]);
}

#[tokio::test]
async fn bad_saves_are_refused_by_name_and_change_nothing() {
    let daemon = Daemon::start().await;
    let (status, _) = save(&daemon, servers(json!([])), servers(json!([disabled("a", "fs")]))).await;
    assert_eq!(status, StatusCode::OK);
    let before = disk_text(&daemon).expect("saved");
    let (_, base) = daemon.get("/mcp/upstreams").await;
    let with = |server: Value| servers(json!([server]));
    let mut wrong_type = disabled("a", "fs");
    wrong_type["enabled"] = json!("yes");
    let mut typo = disabled("a", "fs");
    typo["enabeld"] = json!(false);
    let cases: Vec<(&str, Value, &str)> = vec![
        ("no base", json!({"config": with(disabled("a", "fs"))}), "base"),
        ("an unknown top-level field", json!({"base": base, "config": base, "bsae": {}}), "bsae"),
        ("a wrong type", json!({"base": base, "config": with(wrong_type)}), "config.servers[0].enabled"),
        ("an unknown server field", json!({"base": base, "config": with(typo)}), "enabeld"),
        ("an invalid name", json!({"base": base, "config": with(disabled("a", "Not Valid"))}), "InvalidName"),
        (
            "a duplicate name",
            json!({"base": base, "config": servers(json!([disabled("a", "fs"), disabled("b", "fs")]))}),
            "DuplicateName",
        ),
        (
            "an empty command",
            json!({"base": base, "config": with(json!({"id": "a", "name": "fs", "transport": {"type": "stdio", "command": " "}}))}),
            "EmptyCommand",
        ),
        (
            "a bad URL scheme",
            json!({"base": base, "config": with(json!({"id": "a", "name": "fs", "transport": {"type": "http", "url": "ftp://x"}}))}),
            "InvalidUrlScheme",
        ),
        (
            "a marker where no secret is stored",
            json!({"base": base, "config": servers(json!([disabled("a", "fs"),
                {"id": "n", "name": "new", "transport": {"type": "http", "url": "https://example.com/mcp"},
                 "auth": {"type": "bearer", "token": MARKER}}]))}),
            "auth.token",
        ),
    ];
    for (what, body, named) in cases {
        let (status, error) = daemon.put("/mcp/upstreams", body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {error}");
        assert_eq!(error["code"], "invalid_field", "{what}: {error}");
        assert!(error["error"].as_str().unwrap().contains(named), "{what}: {error}");
        assert_eq!(disk_text(&daemon).as_deref(), Some(before.as_str()), "{what} changed the file");
    }
    let response = daemon
        .client
        .put(Daemon::url("/mcp/upstreams"))
        .header("content-type", "application/json")
        .body("{\"base\": {\"servers\": [}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["code"], "invalid_json", "{error}");
    assert_eq!(disk_text(&daemon).as_deref(), Some(before.as_str()));
}

#[tokio::test]
async fn an_upstream_pointing_at_the_daemons_own_port_is_refused() {
    let port = free_port();
    let config = json!({"services": {"server": {"enabled": true, "port": port},
        "auth": {"username": "me", "password_hash": quick_hash("p")}}});
    let daemon = Daemon::builder().config(config).start().await;
    let (_, health) = daemon.get("/config").await;
    let port = health["services"]["server"]["port"].as_u64().unwrap();
    let own = servers(
        json!([{"id": "me", "name": "me", "transport": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}}]),
    );
    let (status, error) = save(&daemon, servers(json!([])), own).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert!(error["error"].as_str().unwrap().contains("SelfReferentialUrl"), "{error}");
    assert_eq!(disk_text(&daemon), None);
}

#[tokio::test]
async fn a_broken_file_on_disk_is_named_never_shown_as_empty() {
    let daemon = Daemon::start().await;
    std::fs::write(daemon.dir.path().join(FILE), "{\"servers\": [\n  {\"id\": }\n]}\n").unwrap();
    let (status, error) = daemon.get("/mcp/upstreams").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{error}");
    let message = error["error"].as_str().unwrap();
    assert!(message.contains(FILE) && message.contains("line 2"), "{error}");
    let (status, _) = save(&daemon, servers(json!([])), servers(json!([disabled("a", "fs")]))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn the_same_id_added_by_two_saves_is_a_conflict_naming_it() {
    let daemon = Daemon::start().await;
    let (status, _) = save(&daemon, servers(json!([])), servers(json!([disabled("b", "git")]))).await;
    assert_eq!(status, StatusCode::OK);
    let before = disk_text(&daemon);
    let (status, error) = save(&daemon, servers(json!([])), servers(json!([disabled("b", "other")]))).await;
    assert_eq!(status, StatusCode::CONFLICT, "{error}");
    assert_eq!(error["code"], "conflict");
    assert!(error["error"].as_str().unwrap().contains("\"b\""), "{error}");
    assert_eq!(disk_text(&daemon), before);
}

#[tokio::test]
async fn a_stale_save_keeps_what_another_save_wrote_meanwhile() {
    let daemon = Daemon::start().await;
    save(&daemon, servers(json!([])), servers(json!([disabled("a", "fs")]))).await;
    let (_, stale) = daemon.get("/mcp/upstreams").await;
    // Another client, from the same snapshot, gives `a` credentials and adds `c`.
    let mut with_auth = disabled("a", "fs");
    with_auth["auth"] = json!({"type": "oauth2", "client_id": "registered", "scopes": ["read"]});
    let (status, _) = save(&daemon, stale.clone(), servers(json!([with_auth, disabled("c", "web")]))).await;
    assert_eq!(status, StatusCode::OK);
    // The first client saves its own edit of `a` from the stale snapshot.
    let mut renamed = disabled("a", "files");
    renamed["timeout_secs"] = json!(5);
    let (status, answer) = save(&daemon, stale, servers(json!([renamed]))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let file = on_disk(&daemon);
    assert_eq!(ids(&file), ["a", "c"]);
    let a = &file["servers"][0];
    assert_eq!((a["name"].as_str(), a["timeout_secs"].as_u64()), (Some("files"), Some(5)));
    assert_eq!(a["auth"]["client_id"], "registered", "{file}");
}

#[tokio::test]
async fn racing_saves_lose_no_update() {
    let daemon = std::sync::Arc::new(Daemon::start().await);
    let saves: Vec<_> = (0..8)
        .map(|i| {
            let daemon = daemon.clone();
            tokio::spawn(async move {
                let server = disabled(&format!("id{i}"), &format!("up{i}"));
                save(&daemon, servers(json!([])), servers(json!([server]))).await.0
            })
        })
        .collect();
    for save in saves {
        assert_eq!(save.await.unwrap(), StatusCode::OK);
    }
    let mut saved = ids(&on_disk(&daemon)).into_iter().map(str::to_owned).collect::<Vec<_>>();
    saved.sort();
    assert_eq!(saved, (0..8).map(|i| format!("id{i}")).collect::<Vec<_>>());
}

#[tokio::test]
async fn secrets_are_redacted_and_a_save_of_what_was_shown_keeps_them() {
    let daemon = Daemon::start().await;
    let secretive = servers(json!([
        {"id": "a", "name": "remote", "enabled": false, "transport": {"type": "http", "url": "https://example.com/mcp"},
         "auth": {"type": "bearer", "token": "tok-secret-1"}},
        {"id": "b", "name": "oauth", "enabled": false, "transport": {"type": "http", "url": "https://example.com/o"},
         "auth": {"type": "oauth2", "client_id": "cid", "client_secret": "client-secret-2", "scopes": []}},
        {"id": "c", "name": "local", "enabled": false,
         "transport": {"type": "stdio", "command": "true", "env": {"API_KEY": "env-secret-3"}}},
    ]));
    let (status, answer) = save(&daemon, servers(json!([])), secretive).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (_, shown) = daemon.get("/mcp/upstreams").await;
    for text in [answer.to_string(), shown.to_string()] {
        for secret in ["tok-secret-1", "client-secret-2", "env-secret-3"] {
            assert!(!text.contains(secret), "{secret} shown: {text}");
        }
    }
    assert_eq!(shown["servers"][0]["auth"]["token"], MARKER);
    let stored = disk_text(&daemon).unwrap();

    let (status, answer) = save(&daemon, shown.clone(), shown.clone()).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(disk_text(&daemon).unwrap(), stored, "saving what GET showed changed the file");

    let mut edited = shown.clone();
    edited["servers"][2]["name"] = json!("local2");
    edited["servers"][2]["transport"]["args"] = json!(["--verbose"]);
    edited["servers"][1]["auth"]["scopes"] = json!(["read"]);
    let (status, answer) = save(&daemon, shown, edited).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let file = on_disk(&daemon);
    assert_eq!(file["servers"][0]["auth"]["token"], "tok-secret-1");
    assert_eq!(file["servers"][1]["auth"]["client_secret"], "client-secret-2");
    assert_eq!(file["servers"][1]["auth"]["scopes"], json!(["read"]));
    assert_eq!(file["servers"][2]["transport"]["env"]["API_KEY"], "env-secret-3");
    assert_eq!(file["servers"][2]["name"], "local2");
}

/// A save with `If-Match`: its status, body and the `ETag` it answered.
async fn save_if_match(daemon: &Daemon, if_match: &str, base: Value, config: Value) -> (StatusCode, Value, String) {
    let response = daemon
        .client
        .put(Daemon::url("/mcp/upstreams"))
        .header("if-match", if_match)
        .json(&json!({"base": base, "config": config}))
        .send()
        .await
        .unwrap();
    let (status, etag) = (response.status(), response.headers().get("etag").map(|v| v.to_str().unwrap().to_owned()));
    (status, response.json().await.unwrap_or(Value::Null), etag.unwrap_or_default())
}

#[tokio::test]
async fn two_saves_from_the_same_revision_with_if_match_one_wins_and_the_other_is_409() {
    let daemon = Daemon::start().await;
    let response = daemon.client.get(Daemon::url("/mcp/upstreams")).send().await.unwrap();
    let etag = response.headers().get("etag").expect("GET states the revision").to_str().unwrap().to_owned();
    let base: Value = response.json().await.unwrap();
    let (first, saved, next) = save_if_match(&daemon, &etag, base.clone(), servers(json!([disabled("a", "fs")]))).await;
    assert_eq!(first, StatusCode::OK, "{saved}");
    assert_ne!(next, etag, "the save answers the new revision");
    let before = disk_text(&daemon);
    let (second, refused, _) = save_if_match(&daemon, &etag, base, servers(json!([disabled("b", "git")]))).await;
    assert_eq!(second, StatusCode::CONFLICT, "{refused}");
    let message = refused["error"].as_str().unwrap();
    assert!(message.contains("If-Match") && message.contains(etag.trim_matches('"')), "{message}");
    assert_eq!(disk_text(&daemon), before, "the stale save changed nothing");
    let (_, now) = daemon.get("/mcp/upstreams").await;
    let (third, _, _) =
        save_if_match(&daemon, &next, now, servers(json!([disabled("a", "fs"), disabled("b", "git")]))).await;
    assert_eq!(third, StatusCode::OK, "a save from the current revision goes through");
    let (bad, error, _) = save_if_match(&daemon, "\"\"", servers(json!([])), servers(json!([]))).await;
    assert_eq!(bad, StatusCode::BAD_REQUEST, "{error}");
    assert!(error["error"].as_str().unwrap().contains("If-Match"), "{error}");
}

#[tokio::test]
async fn a_disabled_native_tool_that_is_no_native_tool_and_a_glob_filter_are_refused_naming_the_entry() {
    let daemon = Daemon::start().await;
    let (status, error) = daemon.put("/config", json!({"disabled_native_tools": ["session", "up__tool"]})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    let message = error["error"].as_str().unwrap();
    assert!(message.contains("'up__tool' is not a native tool") && message.contains("tool_filter"), "{message}");
    let (_, config) = daemon.get("/config").await;
    assert_eq!(config["disabled_native_tools"], json!(["config", "debug"]), "nothing changed");
    let mut filtered = disabled("a", "fs");
    filtered["tool_filter"] = json!({"mode": "deny", "patterns": ["echo", "e*o"]});
    let (status, error) = save(&daemon, servers(json!([])), servers(json!([filtered]))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    let message = error["error"].as_str().unwrap();
    assert!(message.contains("UnsupportedPattern") && message.contains("\"e*o\""), "{message}");
    assert_eq!(disk_text(&daemon), None, "nothing written");
}
