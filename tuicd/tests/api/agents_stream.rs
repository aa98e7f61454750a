//! Agent events on the session WebSocket, WebSocket input feeding the composer, a submit to a
//! busy agent, and a deferred prompt that never went in.

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::agents::fake_agent;
use crate::harness::*;
use crate::mcp_client::*;
use crate::stream::connect;

async fn start_fake(daemon: &Daemon) -> String {
    let body = json!({"shell": fake_agent(), "agent_type": "claude", "cwd": daemon.dir.path()});
    let (_, created) = daemon.post("/sessions", body).await;
    let id = created["session_id"].as_str().unwrap().to_owned();
    let waited = ok(daemon, "session", json!({"action": "wait", "session_id": id, "timeout_ms": 15000})).await;
    assert_eq!(waited["agent_state"], json!("idle"), "{waited}");
    id
}

#[tokio::test]
async fn agent_events_are_parsed_frames_and_websocket_input_feeds_the_composer() {
    let daemon = Daemon::start().await;
    let id = start_fake(&daemon).await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream")).await;
    // Typed through the WebSocket: the composer is partial for submit too.
    socket.send(Message::text("typed")).await.unwrap();
    wait_until("the WebSocket input reached the composer", DEADLINE, || async {
        let status = ok(&daemon, "session", json!({"action": "status", "session_id": id})).await;
        (status["state"]["composer_state"] == json!("partial")).then_some(())
    })
    .await;
    let (is_error, refused) =
        call(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "x"})).await;
    assert!(is_error, "{refused}");
    assert_eq!((refused["composer_state"].clone(), refused["turn_epoch"].clone()), (json!("partial"), json!(0)));
    socket.send(Message::text("\r")).await.unwrap();
    let mut kinds = Vec::new();
    while !kinds.iter().any(|k| k == "suggest") {
        let message = tokio::time::timeout(DEADLINE, socket.next()).await.expect("a frame in time").unwrap().unwrap();
        let Message::Text(text) = message else { continue };
        let frame: Value = serde_json::from_str(&text).unwrap();
        if frame["type"] == json!("parsed") {
            kinds.push(frame["event"]["type"].as_str().unwrap().to_owned());
        }
    }
    for kind in ["user-input", "agent-state", "intent", "suggest"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} in {kinds:?}");
    }
}

#[tokio::test]
async fn agent_submit_to_a_working_agent_is_refused_before_any_byte() {
    let daemon = Daemon::start().await;
    let id = start_fake(&daemon).await;
    let first = ok(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "long job"})).await;
    assert_eq!(first["acknowledged"], json!(true), "{first}");
    let before = ok(&daemon, "session", json!({"action": "output", "session_id": id, "format": "raw"})).await;
    let (is_error, busy) =
        call(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "second"})).await;
    assert!(is_error, "{busy}");
    assert!(busy["error"].as_str().unwrap().contains("not idle"), "{busy}");
    assert_eq!((busy["retry_safe"].clone(), busy["turn_epoch"].clone()), (json!(true), json!(1)));
    let metrics = ok(&daemon, "agent", json!({"action": "metrics"})).await;
    assert_eq!((metrics["submits"].clone(), metrics["submits_refused"].clone()), (json!(2), json!(1)));
    assert_eq!(metrics["submits_acknowledged"], json!(1));
    ok(&daemon, "session", json!({"action": "wait", "session_id": id, "timeout_ms": 15000})).await;
    let raw =
        ok(&daemon, "session", json!({"action": "output", "session_id": id, "format": "raw", "limit": 100000})).await;
    assert!(!raw["data"].as_str().unwrap().contains("second"), "the refused text was never written");
    assert!(raw["cursor"].as_u64() >= before["cursor"].as_u64());
}

#[tokio::test]
async fn agent_a_deferred_prompt_that_never_goes_in_is_reported() {
    let daemon = Daemon::start().await;
    let events = daemon.client.get(Daemon::url("/events?types=agent-prompt-undelivered")).send().await.unwrap();
    let parent = crate::peers::Peer::external(&daemon).await;
    parent.register(json!({"name": "lead"})).await;
    let spawned = parent
        .ok(json!({"action": "spawn", "agent_type": "codex", "binary_path": "/bin/sh", "args": ["-c", "exit 0"],
            "prompt": "never typed", "cwd": daemon.dir.path()}))
        .await;
    assert_eq!(spawned["prompt_delivery"], json!("deferred"));
    let reported = read_events(events, |e| !e.is_empty()).await;
    assert_eq!(reported[0].2["session_id"], spawned["session_id"]);
    assert!(reported[0].2["reason"].as_str().unwrap().contains("exited"), "{:?}", reported[0]);
    let metrics = ok(&daemon, "agent", json!({"action": "metrics"})).await;
    assert_eq!(metrics["deferred_prompts_undelivered"], json!(1));
    let owner = [("mcp-session-id", parent.session.as_str())];
    let (_, task) = call_as(&daemon, "task", json!({"action": "get", "task_id": spawned["task_id"]}), &owner).await;
    assert_eq!(task["status"], json!("completed"), "{task}");
    // The parent hears of it once, as state-only lifecycle mail.
    let mail = crate::peers::contents(&parent.inbox(Some(0)).await);
    assert_eq!(mail.iter().filter(|c| c.contains("\"state\":\"prompt_delivery_failed\"")).count(), 1, "{mail:?}");
}

#[tokio::test]
async fn agent_started_from_a_shell_is_detected_and_leaving_it_clears_the_agent() {
    let daemon = Daemon::start().await;
    let claude = daemon.dir.path().join("claude");
    std::os::unix::fs::symlink(fake_agent(), &claude).unwrap();
    let created =
        ok(&daemon, "session", json!({"action": "create", "shell": "/bin/sh", "cwd": daemon.dir.path()})).await;
    let id = created["session_id"].as_str().unwrap().to_owned();
    let status = ok(&daemon, "session", json!({"action": "status", "session_id": id})).await;
    assert!(status["state"].get("agent_type").is_none(), "a plain shell: {status}");
    ok(&daemon, "session", json!({"action": "input", "session_id": id, "input": claude, "special_key": "enter"})).await;
    // Detection follows the foreground process (probed once a second while the session is
    // active); the hook marker may have gone by before it, so the ready prompt confirms the idle.
    wait_until("the foreground agent is detected and confirmed idle", DEADLINE, || async {
        let w = ok(&daemon, "session", json!({"action": "wait", "session_id": id, "timeout_ms": 3000})).await;
        (w["agent_state"] == json!("idle") && w["idle_confirmed"] == json!(true)).then_some(())
    })
    .await;
    let receipt = ok(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "quit"})).await;
    assert_eq!(receipt["submitted"], json!(true), "{receipt}");
    wait_until("back at the shell, no agent", DEADLINE, || async {
        let status = ok(&daemon, "session", json!({"action": "status", "session_id": id})).await;
        status["state"].get("agent_type").is_none().then_some(())
    })
    .await;
}

#[tokio::test]
async fn agent_background_work_keeps_the_agent_working_until_the_descendant_ends() {
    let daemon = Daemon::start().await;
    let id = start_fake(&daemon).await;
    ok(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "background build"})).await;
    let status = wait_until("background_work while sleep runs", DEADLINE, || async {
        let status = ok(&daemon, "session", json!({"action": "status", "session_id": id})).await;
        (status["background_work"] == json!(true)).then_some(status)
    })
    .await;
    assert_eq!(status["agent_state"], json!("working"), "{status}");
    let list = ok(&daemon, "session", json!({"action": "list"})).await;
    assert_eq!(list[0]["background_work"], json!(true), "{list}");
    wait_until("the turn completes once the descendant is gone", DEADLINE, || async {
        let status = ok(&daemon, "session", json!({"action": "status", "session_id": id})).await;
        (status["agent_state"] == json!("completed") && status.get("background_work").is_none()).then_some(())
    })
    .await;
    let error = fails(&daemon, "task", json!({"action": "peek", "task_id": "x"})).await;
    assert!(error.contains("Unknown action 'peek'") && error.contains("get, cancel"), "{error}");
}
