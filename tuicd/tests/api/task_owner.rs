//! Task handles follow their spawner's identity: spawned before `register`, the handle is still
//! the caller's after it binds an identity, and after it repairs onto a terminal's identity.

use serde_json::{Value, json};

use crate::agents::fake_agent;
use crate::harness::*;
use crate::mcp_client::*;

async fn call_in(daemon: &Daemon, session: &str, tool: &str, args: Value) -> (bool, Value) {
    call_as(daemon, tool, args, &[("mcp-session-id", session)]).await
}

async fn task_get(daemon: &Daemon, session: &str, task_id: &str) -> (bool, Value) {
    call_in(daemon, session, "task", json!({"action": "get", "task_id": task_id})).await
}

#[tokio::test]
async fn a_caller_that_spawned_before_registering_keeps_its_task_through_register_and_repair() {
    let daemon = Daemon::start().await;
    let session = initialize(&daemon, &[]).await.session().expect("an MCP session");
    let args = json!({"action": "spawn", "binary_path": fake_agent(), "agent_type": "claude",
        "prompt": "first task", "cwd": daemon.dir.path()});
    let (is_error, spawned) = call_in(&daemon, &session, "agent", args).await;
    assert!(!is_error, "{spawned}");
    let task_id = spawned["task_id"].as_str().unwrap();
    let (is_error, task) = task_get(&daemon, &session, task_id).await;
    assert!(!is_error, "before register: {task}");

    // register binds a generated identity to the protocol session: the handle follows.
    let (is_error, registered) =
        call_in(&daemon, &session, "agent", json!({"action": "register", "name": "orch"})).await;
    assert!(!is_error, "{registered}");
    let (is_error, task) = task_get(&daemon, &session, task_id).await;
    assert!(!is_error, "after register: {task}");
    assert_eq!(task["status"], json!("working"));

    // A repair onto a terminal-backed identity supersedes the generated one: still the caller's.
    let terminal = spawned["tuic_session"].as_str().unwrap();
    let repair = json!({"action": "register", "tuic_session": terminal});
    let (is_error, repaired) = call_in(&daemon, &session, "agent", repair).await;
    assert!(!is_error, "{repaired}");
    assert_eq!(repaired["superseded_identity"], registered["tuic_session"], "{repaired}");
    let (is_error, task) = task_get(&daemon, &session, task_id).await;
    assert!(!is_error, "after repair: {task}");
    let (is_error, cancelled) =
        call_in(&daemon, &session, "task", json!({"action": "cancel", "task_id": task_id})).await;
    assert!(!is_error && cancelled["cancelled"] == json!(true), "{cancelled}");

    // Nobody else gains it: another protocol session is still refused.
    let stranger = initialize(&daemon, &[]).await.session().unwrap();
    let (is_error, foreign) = task_get(&daemon, &stranger, task_id).await;
    assert!(is_error && foreign["error"].as_str().unwrap().contains("not owned"), "{foreign}");
}
