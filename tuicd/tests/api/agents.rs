//! Agents in terminals end to end: the fake agent CLI (`tests/fixtures/fake-agent/fake-agent`)
//! in a real PTY, driven through `/sessions`, `/events` and the MCP `session` tool.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};

use crate::harness::*;
use crate::mcp_client::*;

pub(crate) fn fake_agent() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-agent/fake-agent").display().to_string()
}

/// Starts the fake agent as a Claude-like session over REST; returns its id.
async fn start_fake(daemon: &Daemon, args: &[&str]) -> String {
    let body = json!({"shell": fake_agent(), "args": args, "agent_type": "claude", "cwd": daemon.dir.path()});
    let (status, created) = daemon.post("/sessions", body).await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{created}");
    created["session_id"].as_str().unwrap().to_owned()
}

async fn wait_idle(daemon: &Daemon, id: &str) -> Value {
    let waited = ok(daemon, "session", json!({"action": "wait", "session_id": id, "timeout_ms": 15000})).await;
    assert_eq!(waited["met"], json!(true), "{waited}");
    waited
}

#[tokio::test]
async fn agent_fake_turn_cycle_submit_wait_question_and_completion() {
    let daemon = Daemon::start().await;
    let id = start_fake(&daemon, &[]).await;
    let waited = wait_idle(&daemon, &id).await;
    assert_eq!(waited["agent_state"], json!("idle"), "{waited}");
    assert_eq!(waited["idle_confirmed"], json!(true));

    let receipt = ok(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "fix the bug"})).await;
    assert_eq!(receipt["submitted"], json!(true), "{receipt}");
    assert_eq!(receipt["write_state"], json!("complete"));
    assert_eq!(receipt["acknowledged"], json!(true));
    assert_eq!(receipt["retry_safe"], json!(false));
    assert_eq!(receipt["turn_epoch"], json!(1));
    assert_eq!(receipt["composer_state"], json!("cleared"));
    assert!(receipt["acknowledgement"].as_str().unwrap().contains("moved"));
    assert!(uuid_like(receipt["submission_id"].as_str().unwrap()));

    let waited = wait_idle(&daemon, &id).await;
    assert_eq!(waited["agent_state"], json!("completed"), "{waited}");
    assert_eq!(waited["suggested_actions"], json!(["Run tests", "Open PR"]));
    let status = ok(&daemon, "session", json!({"action": "status", "session_id": id})).await;
    assert_eq!(status["agent_state"], json!("completed"));
    assert_eq!(status["state"]["agent_intent"], json!("Working on fix the bug"));
    assert_eq!(status["state"]["turn_epoch"], json!(1));
    let (_, rest) = daemon.get(&format!("/sessions/{id}")).await;
    assert_eq!(rest["state"]["agent_state"], json!("completed"), "REST SessionInfo carries state: {rest}");
    let list = ok(&daemon, "session", json!({"action": "list"})).await;
    let entry = list.as_array().unwrap().iter().find(|s| s["session_id"] == json!(id)).unwrap().clone();
    assert_eq!((entry["agent_state"].clone(), entry["agent_type"].clone()), (json!("completed"), json!("claude")));

    // A numbered question: awaiting_input, a submit is refused before any byte, "1" answers it.
    ok(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "question first"})).await;
    let waited = wait_idle(&daemon, &id).await;
    assert_eq!(waited["agent_state"], json!("awaiting_input"), "{waited}");
    let (is_error, refused) =
        call(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "too early"})).await;
    assert!(is_error, "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("question"), "{refused}");
    assert_eq!((refused["retry_safe"].clone(), refused["write_state"].clone()), (json!(true), json!("not_written")));
    assert_eq!(refused["turn_epoch"], json!(2), "a refused submit opens no turn");
    ok(&daemon, "session", json!({"action": "input", "session_id": id, "input": "1"})).await;
    // The answer reaches the agent asynchronously: wait until the dialog is gone and it finished.
    let waited = wait_until("the answered turn completes", DEADLINE, || async {
        let waited = wait_idle(&daemon, &id).await;
        (waited["agent_state"] == json!("completed")).then_some(waited)
    })
    .await;
    assert_eq!(waited["turn_epoch"], json!(2));
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

#[tokio::test]
async fn agent_submit_refuses_a_partial_composer_bad_input_and_unknown_sessions() {
    let daemon = Daemon::start().await;
    let id = start_fake(&daemon, &[]).await;
    wait_idle(&daemon, &id).await;
    // Typed over REST: the composer is partial for every writer.
    let (status, _) = daemon.post(&format!("/sessions/{id}/write"), json!({"data": "half"})).await;
    assert!(status.is_success());
    let (is_error, refused) =
        call(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "go"})).await;
    assert!(is_error);
    assert_eq!(refused["composer_state"], json!("partial"), "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("composer"));
    assert_eq!(refused["turn_epoch"], json!(0));
    let before = ok(&daemon, "session", json!({"action": "status", "session_id": id})).await;
    assert_eq!(before["state"]["turn_epoch"], json!(0), "nothing changed");

    let unknown = fails(&daemon, "session", json!({"action": "submit", "session_id": "nope", "input": "x"})).await;
    assert!(unknown.contains("Unknown session \"nope\""), "{unknown}");
    let empty = fails(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "  "})).await;
    assert!(empty.contains("input must not be empty"), "{empty}");
    let typed = fails(&daemon, "session", json!({"action": "submit", "session_id": id, "input": 5})).await;
    assert!(typed.contains("input"), "{typed}");
    let missing = fails(&daemon, "session", json!({"action": "submit", "session_id": id})).await;
    assert!(missing.contains("input"), "{missing}");
}

/// Marker -> `/events` latency: the time from the submit's Enter until the `pty-parsed` intent
/// event for that turn arrives on `/events` (printed, not asserted).
#[tokio::test]
async fn agent_state_changes_reach_events_as_pty_parsed() {
    let daemon = Daemon::start().await;
    let id = start_fake(&daemon, &[]).await;
    wait_idle(&daemon, &id).await;
    let response = daemon.client.get(Daemon::url("/events?types=pty-parsed")).send().await.unwrap();
    let sent = Instant::now();
    ok(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "events"})).await;
    let events = read_events(response, |e| e.iter().any(|(_, _, d)| d["parsed"]["type"] == json!("suggest"))).await;
    let elapsed = sent.elapsed();
    let kinds: Vec<String> = events
        .iter()
        .filter(|(_, _, d)| d["session_id"] == json!(id))
        .map(|(_, _, d)| d["parsed"]["type"].as_str().unwrap().to_owned())
        .collect();
    for kind in ["user-input", "agent-state", "intent", "suggest"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} in {kinds:?}");
    }
    let intent = events.iter().find(|(_, _, d)| d["parsed"]["type"] == json!("intent")).unwrap();
    assert_eq!(intent.2["parsed"], json!({"type": "intent", "text": "Working on events", "title": "Fake task"}));
    eprintln!("submit -> suggest on /events: {elapsed:?}");
}

/// Detection latency, marker -> `/events`: a child prints 100 OSC 7770 `intent=` markers carrying
/// their wall-clock write time; the test receives the `pty-parsed` intent events and prints
/// p50/p99 of (arrival - write). Printed, not asserted (it depends on the machine's load).
#[tokio::test]
async fn agent_marker_to_events_latency() {
    const SAMPLES: usize = 100;
    let daemon = Daemon::start().await;
    let response = daemon.client.get(Daemon::url("/events?types=pty-parsed")).send().await.unwrap();
    let script = format!(
        "import os,time\ntime.sleep(0.3)\nfor i in range({SAMPLES}):\n    \
         os.write(1, ('\\x1b]7770;intent=lat %d %d\\x07' % (i, time.time_ns())).encode())\n    time.sleep(0.02)\n\
         time.sleep(30)\n"
    );
    let body = json!({"shell": "python3", "args": ["-c", script], "cwd": daemon.dir.path()});
    let (status, created) = daemon.post("/sessions", body).await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{created}");
    let mut latencies: Vec<u64> = Vec::new();
    let events = read_events_timed(response, SAMPLES).await;
    for (arrived_ns, data) in events {
        let text = data["parsed"]["text"].as_str().unwrap_or_default();
        if let Some(sent) =
            text.strip_prefix("lat ").and_then(|t| t.split(' ').nth(1)).and_then(|t| t.parse::<u64>().ok())
        {
            latencies.push(arrived_ns.saturating_sub(sent) / 1000);
        }
    }
    assert_eq!(latencies.len(), SAMPLES, "every marker reached /events");
    latencies.sort_unstable();
    let pct = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    eprintln!(
        "marker -> /events latency over {SAMPLES} markers: p50 {} us, p99 {} us, max {} us",
        pct(50),
        pct(99),
        latencies[SAMPLES - 1]
    );
}

/// `pty-parsed` intent events with their arrival time (ns since the epoch), until `count`.
async fn read_events_timed(response: reqwest::Response, count: usize) -> Vec<(u64, Value)> {
    use futures_util::StreamExt;
    let mut body = response.bytes_stream();
    let mut buffer = String::new();
    let mut found = Vec::new();
    while found.len() < count {
        let chunk = tokio::time::timeout(DEADLINE, body.next()).await.expect("an event in time").unwrap().unwrap();
        let arrived = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
        buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        while let Some(end) = buffer.find("\n\n") {
            let message: String = buffer.drain(..end + 2).collect();
            let data: String = message.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
            let Ok(value) = serde_json::from_str::<Value>(&data) else { continue };
            if value["parsed"]["type"] == json!("intent") {
                found.push((arrived, value));
            }
        }
    }
    found
}
