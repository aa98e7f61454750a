//! MCP `config action=save` of security settings is a person's decision (issue 30): an MCP
//! client turning on remote access on 0.0.0.0 with its own password hash, an allowed origin and
//! the `ai_terminal_*` tools is asked about, each change shown; with nobody to answer or declined,
//! config.json stays as it was. Other settings save as before, without asking.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{ConfirmAnswerer, DEADLINE, Daemon, free_port, quick_hash, wait_until};
use crate::mcp_client::{call, ok};
use crate::mcp_config_tool::daemon;

fn config_file(daemon: &Daemon) -> String {
    std::fs::read_to_string(daemon.dir.path().join("config.json")).unwrap()
}

/// The takeover the issue saw answered in 0.00 s.
fn takeover(port: u16, hash: &str) -> Value {
    json!({"action": "save", "config": {
        "ai_terminal_mcp_enabled": true,
        "services": {
            "server": {"enabled": true, "port": port, "bind_address": "0.0.0.0", "allow_insecure_remote": true,
                       "allowed_origins": ["https://evil.example"]},
            "auth": {"username": "intruder", "password_hash": hash},
        },
    }})
}

async fn refused(daemon: &Daemon, args: Value) -> (String, Value) {
    let (is_error, value) = call(daemon, "config", args).await;
    assert!(is_error, "the save should have been refused: {value}");
    (value["error"].as_str().unwrap().to_owned(), value)
}

#[tokio::test]
async fn remote_access_turned_on_over_mcp_is_asked_and_declined_changes_nothing() {
    let daemon = daemon().await;
    let before = config_file(&daemon);
    let hash = quick_hash("intruder");
    let args = takeover(free_port(), &hash);

    // Nobody to answer: refused at once, the reason given.
    let started = Instant::now();
    let (error, value) = refused(&daemon, args.clone()).await;
    assert!(error.contains("no UI client connected") && error.contains("nothing was changed"), "{error}");
    assert_eq!(value["confirmed"], json!(false));
    assert!(started.elapsed() < Duration::from_secs(5), "refused at once");
    assert_eq!(config_file(&daemon), before, "config.json unchanged");

    // Declined: nothing changes, and the person saw exactly what would.
    let person = ConfirmAnswerer::start(&daemon, false).await;
    let (error, value) = refused(&daemon, args.clone()).await;
    assert!(error.contains("declined by the user"), "{error}");
    assert_eq!(config_file(&daemon), before, "config.json unchanged");
    let changes: Vec<&str> =
        value["security_changes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    for expected in [
        "ai_terminal_mcp_enabled: false -> true",
        "services.server.enabled: false -> true",
        "services.server.bind_address: \"127.0.0.1\" -> \"0.0.0.0\"",
        "services.server.allowed_origins: [] -> [\"https://evil.example\"]",
        "services.auth.username: \"me\" -> \"intruder\"",
        "services.auth.password_hash: replaced by a password hash the MCP client supplied",
    ] {
        assert!(changes.contains(&expected), "{expected} in {changes:#?}");
    }
    let seen = wait_until("the confirmation seen", DEADLINE, || async {
        let seen = person.seen();
        (!seen.is_empty()).then_some(seen)
    })
    .await;
    assert_eq!(seen[0]["kind"], json!("config_security"));
    let message = seen[0]["message"].as_str().unwrap();
    for change in &changes {
        assert!(message.contains(change), "{change} shown: {message}");
    }
    assert!(!message.contains(&hash) && !value.to_string().contains(&hash), "the hash itself is never shown");
    let shown = ok(&daemon, "config", json!({"action": "get"})).await;
    assert_eq!(shown["services"]["server"]["enabled"], json!(false));
    assert_eq!(shown["ai_terminal_mcp_enabled"], json!(false));
    drop(person);

    // A setting that is no security decision saves without asking; the others stay as they are.
    let saved = ok(&daemon, "config", json!({"action": "save", "config": {"collapse_tools": true}})).await;
    assert_eq!(saved["collapse_tools"], json!(true));
    assert_eq!(saved["services"]["auth"]["username"], json!("me"));
    assert_eq!(saved["services"]["server"]["bind_address"], json!("127.0.0.1"));
}

#[tokio::test]
async fn a_confirmed_security_change_is_saved_as_shown() {
    let daemon = daemon().await;
    let person = ConfirmAnswerer::start(&daemon, true).await;
    let args = json!({"action": "save", "config": {
        "ai_terminal_mcp_enabled": true,
        "disabled_native_tools": ["debug"],
        "services": {"server": {"allowed_hosts": ["tuic.lan"]}},
    }});
    let saved = ok(&daemon, "config", args).await;
    assert_eq!(saved["ai_terminal_mcp_enabled"], json!(true));
    assert_eq!(saved["services"]["server"]["allowed_hosts"], json!(["tuic.lan"]));
    assert_eq!(saved["services"]["auth"]["username"], json!("me"), "an omitted setting keeps its value");
    let on_disk: Value = serde_json::from_str(&config_file(&daemon)).unwrap();
    assert_eq!(on_disk["disabled_native_tools"], json!(["debug"]));
    let seen = wait_until("the confirmation seen", DEADLINE, || async {
        let seen = person.seen();
        (!seen.is_empty()).then_some(seen)
    })
    .await;
    let message = seen[0]["message"].as_str().unwrap();
    assert!(message.contains("disabled_native_tools: [] -> [\"debug\"]"), "{message}");
    assert!(message.contains("services.server.allowed_hosts: [] -> [\"tuic.lan\"]"), "{message}");
}
