//! Messaging delivery to managed agents, end to end with the fake agent CLI in real PTYs: typed
//! turns for idle ordinary agents (one per idle transition, FIFO), payload-free notices and
//! lifecycle summaries for orchestrators, channel push into a working Claude Code turn, and the
//! parent/child relationship of spawned agents.

use serde_json::{Value, json};

use crate::agents::fake_agent;
use crate::harness::*;
use crate::mcp_client::*;
use crate::peers::{Peer, contents};

/// Starts the fake agent (Claude-like) over REST; returns (session_id, tuic_session).
async fn agent_session(daemon: &Daemon) -> (String, String) {
    let body = json!({"shell": fake_agent(), "agent_type": "claude", "cwd": daemon.dir.path()});
    let (status, created) = daemon.post("/sessions", body).await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{created}");
    (created["session_id"].as_str().unwrap().to_owned(), created["tuic_session"].as_str().unwrap().to_owned())
}

async fn state_of(daemon: &Daemon, id: &str) -> Value {
    ok(daemon, "session", json!({"action": "status", "session_id": id})).await
}

async fn wait_state(daemon: &Daemon, id: &str, states: &[&str]) {
    wait_until(&format!("{id} reaches {states:?}"), DEADLINE, || async {
        let s = state_of(daemon, id).await;
        states.iter().any(|w| s["agent_state"] == json!(w) && s["idle_confirmed"] != json!(false)).then_some(())
    })
    .await;
}

async fn submit(daemon: &Daemon, id: &str, input: &str) {
    let receipt = ok(daemon, "session", json!({"action": "submit", "session_id": id, "input": input})).await;
    assert_eq!(receipt["submitted"], json!(true), "{receipt}");
}

#[tokio::test]
async fn delivery_types_into_an_idle_agent_and_queues_for_a_busy_one_in_order() {
    let daemon = Daemon::start().await;
    let (id, tuic) = agent_session(&daemon).await;
    let worker = Peer::in_terminal(&daemon, &tuic).await;
    let sender = Peer::external(&daemon).await;
    sender.register(json!({"name": "lead"})).await;
    wait_state(&daemon, &id, &["idle"]).await;

    let sent = sender.send(&tuic, "hello there\nsecond line").await;
    assert_eq!(sent["delivery_path"], json!("terminal_or_queued_and_inbox"), "{sent}");
    assert_eq!((sent["delivered"].clone(), sent["recipient_has_terminal"].clone()), (json!(true), json!(true)));
    assert!(sent["recipient_state"]["agent_state"].is_string(), "{sent}");
    // Typed as one framed line (newline flattened), submitted as a real turn.
    wait_session_output(&daemon, &id, "done: [TUIC message from lead] hello there second line").await;
    // The inbox stays authoritative.
    assert_eq!(contents(&worker.inbox(None).await), ["hello there\nsecond line"]);
    // A body over 2 KB is not typed: a pointer to the inbox is.
    wait_state(&daemon, &id, &["completed", "idle"]).await;
    let long = format!("report {}", "x".repeat(3000));
    sender.send(&tuic, &long).await;
    wait_session_output(&daemon, &id, "done: [TUIC] new message from lead \u{2014} read it with: agent action=inbox")
        .await;
    assert_eq!(contents(&worker.inbox(None).await), [long]);

    // Busy: both wait for idle edges, one per transition, first in first out.
    wait_state(&daemon, &id, &["completed", "idle"]).await;
    submit(&daemon, &id, "long task").await;
    wait_state(&daemon, &id, &["working"]).await;
    for m in ["m1", "m2"] {
        let sent = sender.send(&id, m).await;
        assert_eq!(sent["delivery_path"], json!("terminal_or_queued_and_inbox"), "{sent}");
    }
    assert!(!session_output(&daemon, &id).await.contains("[TUIC message from lead] m1"), "typed into a busy agent");
    let text = wait_session_output(&daemon, &id, "done: [TUIC message from lead] m2").await;
    let (first, second) = (
        text.find("done: [TUIC message from lead] m1").unwrap(),
        text.find("Working on [TUIC message from lead] m2").unwrap(),
    );
    assert!(first < second, "m2 started before m1 finished");
    assert!(text.find("done: long task").unwrap() < text.find("Working on [TUIC message from lead] m1").unwrap());
    // A message the recipient already read is not typed as a duplicate turn.
    wait_state(&daemon, &id, &["completed", "idle"]).await;
    submit(&daemon, &id, "long task two").await;
    wait_state(&daemon, &id, &["working"]).await;
    sender.send(&id, "read before idle").await;
    let page = worker.inbox(None).await;
    assert!(contents(&page).contains(&"read before idle".to_owned()), "{page}");
    wait_session_output(&daemon, &id, "done: long task two").await;
    wait_state(&daemon, &id, &["completed", "idle"]).await;
    sender.send(&id, "after").await;
    let text = wait_session_output(&daemon, &id, "done: [TUIC message from lead] after").await;
    assert!(!text.contains("[TUIC message from lead] read before idle"), "an observed message was typed");
}

#[tokio::test]
async fn delivery_never_types_a_payload_into_an_orchestrator_only_a_notice() {
    let daemon = Daemon::start().await;
    let (id, tuic) = agent_session(&daemon).await;
    let orchestrator = Peer::in_terminal(&daemon, &tuic).await;
    let declared = orchestrator.register(json!({"orchestrator": true, "name": "orch"})).await;
    assert_eq!(
        (declared["orchestrator"].clone(), declared["mail_wake"].clone()),
        (json!(true), json!("managed_pty_lifecycle"))
    );
    let sender = Peer::external(&daemon).await;
    sender.register(json!({"name": "peer"})).await;
    wait_state(&daemon, &id, &["idle"]).await;

    let sent = sender.send(&tuic, "secret payload").await;
    assert_eq!(sent["delivery_path"], json!("wake_notification_and_inbox"), "{sent}");
    wait_session_output(&daemon, &id, "done: [TUIC] message available \u{2014} read it with: agent action=inbox").await;
    // More mail while the notice is unacknowledged coalesces into it.
    let coalesced = sender.send(&tuic, "more secret").await;
    assert_eq!(coalesced["delivery_path"], json!("coalesced_wake_and_inbox"), "{coalesced}");
    assert_eq!(contents(&orchestrator.inbox(None).await), ["secret payload", "more secret"]);
    let text = session_output(&daemon, &id).await;
    assert!(!text.contains("secret"), "a peer payload reached the orchestrator's terminal: {text}");
    assert_eq!(text.matches("done: [TUIC] message available").count(), 1, "one notice for the group");
    let peers = sender.list_peers().await;
    assert!(peers.iter().any(|p| p["tuic_session"] == json!(tuic) && p["orchestrator"] == json!(true)));
}

#[tokio::test]
async fn delivery_spawned_children_report_lifecycle_to_their_parent() {
    let daemon = Daemon::start().await;
    // An unregistered caller gets a warning, not a false two-way guarantee.
    let stranger = Peer::external(&daemon).await;
    let spawn = json!({"action": "spawn", "binary_path": fake_agent(), "agent_type": "claude",
        "prompt": "first task", "cwd": daemon.dir.path(), "name": "kid"});
    let lone = stranger.ok(spawn.clone()).await;
    assert!(lone.get("parent_session_id").is_none(), "{lone}");
    assert!(lone["communication_warning"].as_str().unwrap().contains("agent action=register"), "{lone}");
    // A later register links that child and hands over the lifecycle mail it emitted meanwhile.
    wait_state(&daemon, lone["session_id"].as_str().unwrap(), &["completed"]).await;
    let linked = stranger.register(json!({"name": "late parent"})).await;
    assert_eq!(linked["linked_children"], json!(1), "{linked}");
    let early = stranger.inbox(None).await;
    assert!(early["messages"][0]["content"].as_str().unwrap().contains("\"state\":\"completed\""), "{early}");

    let parent = Peer::external(&daemon).await;
    let parent_id = parent.register(json!({"name": "lead"})).await["tuic_session"].as_str().unwrap().to_owned();
    let child = parent.ok(spawn).await;
    assert_eq!(child["parent_session_id"], json!(parent_id), "{child}");
    let (child_id, child_tuic) = (child["session_id"].as_str().unwrap(), child["tuic_session"].as_str().unwrap());
    // The child is a peer at once, under the name the parent gave it.
    let peers = parent.list_peers().await;
    let entry = peers.iter().find(|p| p["tuic_session"] == json!(child_tuic)).expect("child registered");
    assert_eq!((entry["name"].clone(), entry["session_id"].clone()), (json!("kid"), json!(child_id)));
    // Its prompt names the parent and how to report (raw: the line is wider than the screen).
    let needle = format!("Your parent agent's tuic_session is {parent_id}");
    wait_until("the child's prompt names its parent", DEADLINE, || async {
        let args = json!({"action": "output", "session_id": child_id, "format": "raw", "limit": 100000});
        ok(&daemon, "session", args).await["data"].as_str().unwrap().contains(&needle).then_some(())
    })
    .await;

    // State-only lifecycle mail arrives in the parent's inbox (a wait wakes on it).
    let woken = parent.wait(15_000).await;
    let mail = &woken["messages"][0];
    assert!(mail["id"].as_str().unwrap().starts_with("tuic-auto-"), "{woken}");
    assert_eq!(mail["from_name"], json!("tuic"));
    let body: Value = serde_json::from_str(mail["content"].as_str().unwrap()).unwrap();
    assert_eq!(body, json!({"type": "state_change", "state": "completed", "session_id": child_tuic}));
    // The child's own report goes through send, and its exit is reported with the code.
    let kid = Peer::in_terminal(&daemon, child_tuic).await;
    kid.send(&parent_id, "result: all good").await;
    wait_state(&daemon, child_id, &["completed"]).await;
    submit(&daemon, child_id, "quit").await;
    let mut seen: Vec<String> = Vec::new();
    let start = std::time::Instant::now();
    while !seen.iter().any(|c| c.contains("\"state\":\"exited\"")) {
        assert!(start.elapsed() < DEADLINE, "no exit mail: {seen:?}");
        seen.extend(contents(&parent.wait(2_000).await));
    }
    assert!(seen.contains(&"result: all good".to_owned()), "{seen:?}");
    let exited: Value = serde_json::from_str(seen.iter().find(|c| c.contains("exited")).unwrap()).unwrap();
    assert_eq!(exited["exit_code"], json!(3));
}

#[tokio::test]
async fn delivery_lifecycle_summary_for_an_orchestrator_and_its_fallback() {
    let daemon = Daemon::start().await;
    let (id, tuic) = agent_session(&daemon).await;
    let orchestrator = Peer::in_terminal(&daemon, &tuic).await;
    orchestrator.register(json!({"orchestrator": true})).await;
    wait_state(&daemon, &id, &["idle"]).await;
    let spawn = json!({"action": "spawn", "binary_path": fake_agent(), "agent_type": "claude",
        "prompt": "first task", "cwd": daemon.dir.path()});
    // Only lifecycle mail in the window: the notice types the events themselves.
    let child = orchestrator.ok(spawn.clone()).await;
    let short = &child["tuic_session"].as_str().unwrap()[..8];
    let text = wait_session_output(&daemon, &id, &format!("done: [TUIC] child agent {short} is now completed")).await;
    assert!(!text.contains("message available"), "{text}");
    // The summary acknowledged its own window: nothing is left unread.
    assert!(contents(&orchestrator.inbox(None).await).is_empty());

    // A peer message in the same window disqualifies the summary: the generic notice instead.
    wait_state(&daemon, &id, &["completed", "idle"]).await;
    submit(&daemon, &id, "slow task").await;
    wait_state(&daemon, &id, &["working"]).await;
    let second = orchestrator.ok(spawn).await;
    wait_state(&daemon, second["session_id"].as_str().unwrap(), &["completed"]).await;
    let sender = Peer::external(&daemon).await;
    sender.register(json!({"name": "peer"})).await;
    let sent = sender.send(&tuic, "peer payload").await;
    assert_eq!(sent["delivery_path"], json!("inbox_only"), "a busy orchestrator is not steered: {sent}");
    assert_eq!(state_of(&daemon, &id).await["agent_state"], json!("working"), "the window closed before idle");
    let text = wait_session_output(&daemon, &id, "done: [TUIC] message available").await;
    let short2 = &second["tuic_session"].as_str().unwrap()[..8];
    assert!(!text.contains(&format!("child agent {short2}")), "a partial summary was typed: {text}");
    assert!(!text.contains("peer payload"));
    let page = orchestrator.inbox(None).await;
    assert_eq!(page["count"], json!(2), "both still unread: {page}");
}

#[tokio::test]
async fn delivery_pushes_into_a_working_claude_turn_on_its_channel_stream() {
    let daemon = Daemon::start().await;
    let (id, tuic) = agent_session(&daemon).await;
    let capabilities = json!({"experimental": {"claude/channel": {}}});
    let bridge = Peer::connect(&daemon, Some(&tuic), capabilities).await;
    let mut stream = open_stream(&daemon, &bridge.session).await;
    let sender = Peer::external(&daemon).await;
    let sender_id = sender.register(json!({"name": "worker-1"})).await["tuic_session"].as_str().unwrap().to_owned();
    wait_state(&daemon, &id, &["idle"]).await;
    submit(&daemon, &id, "slow task").await;
    wait_state(&daemon, &id, &["working"]).await;

    let sent = sender.send(&tuic, "done with auth module").await;
    assert_eq!(sent["delivery_path"], json!("sse_channel_and_inbox"), "{sent}");
    read_until(&mut stream, "Message from worker-1: done with auth module", "the channel push").await;
    assert_eq!(contents(&bridge.inbox(None).await), ["done with auth module"]);
    // Pushed, not typed: the terminal never sees it, even after the turn ends.
    wait_session_output(&daemon, &id, "done: slow task").await;
    wait_state(&daemon, &id, &["completed", "idle"]).await;
    assert!(!session_output(&daemon, &id).await.contains("auth module"));
    let page = bridge.inbox(Some(0)).await;
    assert_eq!(page["messages"][0]["from_tuic_session"], json!(sender_id));
}

#[tokio::test]
async fn delivery_compose_commands_share_one_fifo_with_peer_messages() {
    let daemon = Daemon::start().await;
    let (id, tuic) = agent_session(&daemon).await;
    let _bridge = Peer::in_terminal(&daemon, &tuic).await;
    let sender = Peer::external(&daemon).await;
    sender.register(json!({"name": "lead"})).await;
    let url = format!("/sessions/{id}/compose");
    wait_state(&daemon, &id, &["idle"]).await;
    submit(&daemon, &id, "long task").await;
    wait_state(&daemon, &id, &["working"]).await;
    // Accepted in this order: command, peer message, command. Clearing drops only the commands.
    let (status, queued) = daemon.post(&url, json!({"command": "cmd dropped"})).await;
    assert_eq!((status, queued["queued"].clone()), (reqwest::StatusCode::ACCEPTED, json!(1)));
    sender.send(&tuic, "m1").await;
    daemon.post(&url, json!({"command": "cmd also dropped"})).await;
    assert_eq!(daemon.get(&url).await.1["queued"], json!(2));
    let (_, cleared) = daemon.request(reqwest::Method::DELETE, &url, None).await;
    assert_eq!(cleared["cleared"], json!(2));
    assert_eq!(daemon.get(&url).await.1["queued"], json!(0));
    let (_, queued) = daemon.post(&url, json!({"command": "cmd after"})).await;
    assert_eq!(queued["queued"], json!(1));
    // The peer message accepted earlier goes first, then the command, each on its own idle edge.
    let text = wait_session_output(&daemon, &id, "done: cmd after").await;
    assert!(text.find("done: [TUIC message from lead] m1").unwrap() < text.find("Working on cmd after").unwrap());
    assert!(!text.contains("cmd dropped") && !text.contains("cmd also dropped"), "a cleared command was typed");

    // Bad input changes nothing.
    for (body, needle) in [
        (json!({"command": "  "}), "must not be empty"),
        (json!({"command": "x".repeat(64 * 1024 + 1)}), "the limit is 65536"),
        (json!({"cmd": "x"}), "cmd"),
    ] {
        let (status, error) = daemon.post(&url, body).await;
        assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{error}");
        assert!(error["error"].as_str().unwrap().contains(needle), "{error}");
    }
    let (status, _) = daemon.post("/sessions/nope/compose", json!({"command": "x"})).await;
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND);
    assert_eq!(daemon.get(&url).await.1["queued"], json!(0));
}
