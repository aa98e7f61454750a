//! The `session` MCP tool end to end: real PTYs driven through POST /mcp.

use serde_json::{Value, json};

use crate::harness::*;
use crate::mcp_client::*;

async fn create_sh(daemon: &Daemon, extra: Value) -> Value {
    let mut args = json!({"action": "create", "shell": "/bin/sh", "cwd": daemon.dir.path()});
    merge(&mut args, extra);
    ok(daemon, "session", args).await
}

/// Polls `output` until its text contains `needle`; returns the last response.
async fn output_containing(daemon: &Daemon, args: Value, needle: &str) -> Value {
    wait_until(&format!("output containing {needle:?}"), DEADLINE, || async {
        let out = ok(daemon, "session", args.clone()).await;
        out["data"].as_str().unwrap().contains(needle).then_some(out)
    })
    .await
}

#[tokio::test]
async fn a_session_is_created_typed_into_read_and_listed_under_all_three_names() {
    let daemon = Daemon::start().await;
    let created = create_sh(&daemon, json!({"display_name": "worker"})).await;
    let id = created["session_id"].as_str().unwrap().to_owned();
    let alias = created["alias"].as_str().unwrap().to_owned();
    let tuic = created["tuic_session"].as_str().unwrap().to_owned();
    let typed = ok(
        &daemon,
        "session",
        json!({"action": "input", "session_id": alias, "input": "echo hello-$((6*7))",
        "special_key": "enter", "pty_description": "say hello"}),
    )
    .await;
    assert_eq!(typed, json!({"ok": true}));
    let out = output_containing(&daemon, json!({"action": "output", "session_id": tuic}), "hello-42").await;
    assert!(out["cursor"].is_u64() && out["exited"] == json!(false));
    assert!(out.get("exit_code").is_none(), "optional values are omitted, not null: {out}");
    let raw =
        ok(&daemon, "session", json!({"action": "output", "session_id": id, "format": "raw", "limit": 100000})).await;
    assert!(raw["data"].as_str().unwrap().contains("hello-42"));
    assert!(raw["total_written"].as_u64().unwrap() >= raw["data_length"].as_u64().unwrap());
    let list = ok(&daemon, "session", json!({"action": "list"})).await;
    let entry = list.as_array().unwrap().iter().find(|s| s["session_id"] == json!(id)).expect("listed").clone();
    assert_eq!(entry["alias"], json!(alias));
    assert_eq!(entry["display_name"], json!("worker"));
    assert_eq!(entry["is_caller"], json!(false));
    assert_eq!(entry["pty_description"], json!("say hello"));
    let status = ok(&daemon, "session", json!({"action": "status", "session_id": alias})).await;
    assert_eq!(status["session_id"], json!(id));
    assert_eq!(
        ok(&daemon, "session", json!({"action": "resize", "session_id": id, "rows": 30, "cols": 100})).await,
        json!({"ok": true})
    );
    let status = ok(&daemon, "session", json!({"action": "status", "session_id": id})).await;
    assert_eq!((status["rows"].clone(), status["cols"].clone()), (json!(30), json!(100)));
    assert_eq!(ok(&daemon, "session", json!({"action": "pause", "session_id": id})).await, json!({"ok": true}));
    assert_eq!(ok(&daemon, "session", json!({"action": "resume", "session_id": id})).await, json!({"ok": true}));
    let stats = ok(&daemon, "session", json!({"action": "process_stats"})).await;
    assert!(stats["processes"].as_array().unwrap().iter().any(|p| p["session_id"] == json!(id)), "{stats}");
}

#[tokio::test]
async fn output_deltas_follow_the_cursor_without_repeating_lines() {
    let daemon = Daemon::start().await;
    let id = create_sh(&daemon, json!({"rows": 4})).await["session_id"].as_str().unwrap().to_owned();
    let first = ok(&daemon, "session", json!({"action": "output", "session_id": id})).await;
    let start = first["cursor"].as_u64().unwrap();
    ok(
        &daemon,
        "session",
        json!({"action": "input", "session_id": id, "input": "seq 101 130", "special_key": "enter"}),
    )
    .await;
    let delta =
        output_containing(&daemon, json!({"action": "output", "session_id": id, "since_cursor": start}), "110").await;
    let next = delta["cursor"].as_u64().unwrap();
    assert!(next > start);
    assert!(delta.get("total_written").is_none(), "a delta carries no total_written: {delta}");
    let again = ok(&daemon, "session", json!({"action": "output", "session_id": id, "since_cursor": next})).await;
    assert!(!again["data"].as_str().unwrap().contains("101"), "a delta repeated old lines: {again}");
    assert!(again["cursor"].as_u64().unwrap() >= next);
    let small =
        ok(&daemon, "session", json!({"action": "output", "session_id": id, "since_cursor": start, "limit": 4})).await;
    assert!(small["data_length"].as_u64().unwrap() <= 4 || small["cursor"].as_u64().unwrap() == start + 1);
}

#[tokio::test]
async fn wait_resolves_from_the_tombstone_and_clamps_its_timeout() {
    let daemon = Daemon::start().await;
    let id = create_sh(&daemon, json!({})).await["session_id"].as_str().unwrap().to_owned();
    let idle =
        ok(&daemon, "session", json!({"action": "wait", "session_id": id, "until": "idle", "timeout_ms": 20000})).await;
    assert_eq!((idle["met"].clone(), idle["timed_out"].clone()), (json!(true), json!(false)), "{idle}");
    let short =
        ok(&daemon, "session", json!({"action": "wait", "session_id": id, "until": "exited", "timeout_ms": 50})).await;
    assert_eq!(
        short,
        json!({"met": false, "timed_out": true, "until": "exited", "timeout_ms": 50, "shell_state": "idle"})
    );
    ok(&daemon, "session", json!({"action": "input", "session_id": id, "input": "exit 3", "special_key": "enter"}))
        .await;
    let exited =
        ok(&daemon, "session", json!({"action": "wait", "session_id": id, "until": "exited", "timeout_ms": 20000}))
            .await;
    assert_eq!(exited["met"], json!(true), "{exited}");
    assert_eq!(exited["exit_code"], json!(3));
    // Step 1 reads the tombstone: an exited session still satisfies the wait, and a request
    // above the cap reports the 295000 ms it would have run.
    let capped =
        ok(&daemon, "session", json!({"action": "wait", "session_id": id, "until": "exited", "timeout_ms": 999999}))
            .await;
    assert_eq!((capped["met"].clone(), capped["timeout_ms"].clone()), (json!(true), json!(295000)));
    let default = ok(&daemon, "session", json!({"action": "wait", "session_id": id, "until": "exited"})).await;
    assert_eq!(default["timeout_ms"], json!(60000));
    let out = ok(&daemon, "session", json!({"action": "output", "session_id": id})).await;
    assert_eq!((out["exited"].clone(), out["exit_code"].clone()), (json!(true), json!(3)));
}

#[tokio::test]
async fn close_refuses_the_callers_own_session_and_kill_ends_one() {
    let daemon = Daemon::start().await;
    let created = create_sh(&daemon, json!({})).await;
    let id = created["session_id"].as_str().unwrap().to_owned();
    let own = created["tuic_session"].as_str().unwrap().to_owned();
    let (is_error, list) = call_as(&daemon, "session", json!({"action": "list"}), &[("x-tuic-session", &own)]).await;
    assert!(!is_error);
    assert_eq!(list[0]["is_caller"], json!(true), "{list}");
    let (is_error, refused) =
        call_as(&daemon, "session", json!({"action": "close", "session_id": id}), &[("x-tuic-session", &own)]).await;
    assert!(is_error);
    assert!(refused["error"].as_str().unwrap().contains("Cannot close own session"));
    assert_eq!(ok(&daemon, "session", json!({"action": "kill", "session_id": id})).await, json!({"ok": true}));
    let gone =
        ok(&daemon, "session", json!({"action": "wait", "session_id": id, "until": "exited", "timeout_ms": 20000}))
            .await;
    assert_eq!(gone["met"], json!(true));
    assert_eq!(
        ok(&daemon, "session", json!({"action": "close", "session_id": id})).await,
        json!({"ok": true}),
        "close is idempotent"
    );
    let other = create_sh(&daemon, json!({})).await["session_id"].as_str().unwrap().to_owned();
    assert_eq!(ok(&daemon, "session", json!({"action": "close", "session_id": other})).await, json!({"ok": true}));
}

#[tokio::test]
async fn bad_input_gets_clear_tool_errors_and_changes_nothing() {
    let daemon = Daemon::start().await;
    let unknown = fails(&daemon, "session", json!({"action": "status", "session_id": "tu-99"})).await;
    assert!(unknown.contains("Unknown session \"tu-99\""), "{unknown}");
    let wait = fails(&daemon, "session", json!({"action": "wait", "session_id": "nope", "timeout_ms": 10})).await;
    assert!(wait.contains("Unknown session"), "{wait}");
    let action = fails(&daemon, "session", json!({"action": "explode"})).await;
    assert!(action.contains("Valid actions: list, create, input"), "{action}");
    let missing = fails(&daemon, "session", json!({})).await;
    assert!(missing.contains("action is required"), "{missing}");
    let typed =
        fails(&daemon, "session", json!({"action": "resize", "session_id": "x", "rows": "ten", "cols": 5})).await;
    assert!(typed.contains("rows") && typed.contains("u16"), "{typed}");
    let extra = fails(&daemon, "session", json!({"action": "list", "session_id": "x"})).await;
    assert!(extra.contains("unknown field `session_id`"), "{extra}");
    let key = fails(&daemon, "session", json!({"action": "input", "session_id": "x", "special_key": "f13"})).await;
    assert!(key.contains("Unknown session") || key.contains("valid keys"), "{key}");
    let size = fails(&daemon, "session", json!({"action": "create", "shell": "/bin/sh", "rows": 0})).await;
    assert!(size.contains("rows"), "{size}");
    assert_eq!(ok(&daemon, "session", json!({"action": "list"})).await, json!([]), "nothing was created");
}
