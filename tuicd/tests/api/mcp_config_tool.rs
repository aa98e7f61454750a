//! MCP `config`: get redacted, save as a deep merge (the listener restarts on remote-access
//! changes, as with `PUT /config`), the two prompt libraries as files, and bad input refused
//! with nothing changed.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Daemon, free_port, quick_hash};
use crate::mcp_client::{fails, ok};

/// A daemon with `config` and `debug` enabled and a password set.
pub(crate) async fn daemon() -> Daemon {
    let config = json!({"disabled_native_tools": [], "services": {"auth": {"username": "me", "password_hash": quick_hash("p")}}});
    Daemon::builder().config(config).start().await
}

fn config_file(daemon: &Daemon) -> String {
    std::fs::read_to_string(daemon.dir.path().join("config.json")).unwrap()
}

#[tokio::test]
async fn get_redacts_the_password_hash_and_save_merges_and_restarts_the_listener() {
    let daemon = daemon().await;
    let shown = ok(&daemon, "config", json!({"action": "get"})).await;
    assert_eq!(shown["services"]["auth"]["password_hash_exists"], json!(true));
    assert!(!shown.to_string().contains("$2"), "no hash leaves the daemon: {shown}");

    let port = free_port();
    let patch = json!({"collapse_tools": true, "services": {"server": {"enabled": true, "port": port}}});
    // Remote access is a security setting: a person confirms it.
    let _person = crate::harness::ConfirmAnswerer::start(&daemon, true).await;
    let saved = ok(&daemon, "config", json!({"action": "save", "config": patch})).await;
    assert_eq!(saved["collapse_tools"], json!(true));
    assert_eq!(saved["services"]["auth"]["username"], json!("me"), "an omitted field keeps its value");
    assert_eq!(saved["services"]["auth"]["password_hash_exists"], json!(true));
    let (_, rest) = daemon.get("/config").await;
    assert_eq!(rest, saved, "GET /config sees what MCP saved");
    let on_disk: Value = serde_json::from_str(&config_file(&daemon)).unwrap();
    assert_eq!(on_disk["services"]["server"]["port"], json!(port));
    let r = reqwest::Client::new().get(format!("http://127.0.0.1:{port}/health")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "the TCP listener started, behind auth");
}

#[tokio::test]
async fn a_bad_save_names_what_was_wrong_and_changes_nothing() {
    let daemon = daemon().await;
    let before = config_file(&daemon);
    let cases = [
        (json!({"action": "save", "config": {"services": {"server": {"port": "high"}}}}), "services.server.port"),
        (json!({"action": "save", "config": {"colapse_tools": true}}), "colapse_tools"),
        (json!({"action": "save", "config": "collapse_tools=true"}), "config: invalid type"),
        (json!({"action": "save"}), "missing field `config`"),
        (json!({"action": "save", "config": {}, "extra": 1}), "extra"),
        (json!({"action": "reload"}), "Unknown action 'reload'"),
        (json!({"action": 3}), "action must be a string"),
    ];
    for (args, named) in cases {
        let error = fails(&daemon, "config", args.clone()).await;
        assert!(error.contains(named), "{args}: {error}");
    }
    assert_eq!(config_file(&daemon), before, "the file is untouched");
    let shown = ok(&daemon, "config", json!({"action": "get"})).await;
    assert_eq!(shown["collapse_tools"], json!(false));
}

#[tokio::test]
async fn prompt_libraries_are_files_in_the_config_dir_and_stay_apart() {
    let daemon = daemon().await;
    for (kind, dir) in [("ai_prompt", "ai-prompts"), ("prompt", "prompts")] {
        let listed = ok(&daemon, "config", json!({"action": format!("list_{kind}s")})).await;
        assert_eq!(listed, json!({"prompts": []}));
        let saved = ok(
            &daemon,
            "config",
            json!({"action": format!("save_{kind}"), "name": "review", "content": format!("Review as {dir}.")}),
        )
        .await;
        assert_eq!(saved["ok"], json!(true));
        let file = daemon.dir.path().join(dir).join("review.md");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), format!("Review as {dir}."));
        let loaded = ok(&daemon, "config", json!({"action": format!("load_{kind}"), "name": "review"})).await;
        assert_eq!(loaded, json!({"name": "review", "content": format!("Review as {dir}.")}));
        let listed = ok(&daemon, "config", json!({"action": format!("list_{kind}s")})).await;
        assert_eq!(listed["prompts"], json!([{"name": "review", "bytes": format!("Review as {dir}.").len()}]));
    }
}

#[tokio::test]
async fn prompt_names_that_leave_the_library_and_oversize_content_are_refused() {
    let daemon = daemon().await;
    let outside = daemon.dir.path().join("escaped.md");
    for name in ["../escaped", "../../tmp/x", "a/b", "..", ".hidden", "/etc/passwd", "a\u{0}b", "x..y"] {
        let error = fails(&daemon, "config", json!({"action": "save_prompt", "name": name, "content": "x"})).await;
        assert!(error.contains("is not a prompt name"), "{name:?}: {error}");
        let error = fails(&daemon, "config", json!({"action": "load_ai_prompt", "name": name})).await;
        assert!(error.contains("is not a prompt name"), "{name:?}: {error}");
    }
    assert!(!outside.exists());
    let big = "x".repeat(64 * 1024 + 1);
    let error = fails(&daemon, "config", json!({"action": "save_prompt", "name": "big", "content": big})).await;
    assert!(error.contains("at most 65536"), "{error}");
    let error = fails(&daemon, "config", json!({"action": "save_prompt", "name": "n", "content": 5})).await;
    assert!(error.contains("content"), "{error}");
    for action in ["get", "list_prompts", "list_ai_prompts"] {
        let error = fails(&daemon, "config", json!({"action": action, "bogus": 1})).await;
        assert!(error.contains("bogus"), "{action}: {error}");
    }
    let error = fails(&daemon, "config", json!({"action": "save_ai_prompt", "name": "n"})).await;
    assert!(error.contains("missing field `content`"), "{error}");
    let error = fails(&daemon, "config", json!({"action": "load_prompt", "name": "missing"})).await;
    assert!(error.contains("no prompt named 'missing'"), "{error}");
    assert!(!daemon.dir.path().join("prompts").exists(), "nothing was written");
}
