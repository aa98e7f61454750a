//! The orchestrator's workflow end to end with the fake agent CLI in real PTYs: "spawn three
//! workers, wait until all three are done, read their results", scripted and counted (tool calls
//! and bytes of tool text read), and `agent action=wait sessions=[...]`'s outcomes: complete,
//! question, failed, a timeout that reports what is known and what is still pending.

use std::time::Instant;

use serde_json::{Value, json};

use crate::agents::fake_agent;
use crate::harness::*;
use crate::mcp_client::*;
use crate::peers::Peer;

/// An orchestrator that counts its tool calls and the bytes of tool text it reads.
struct Script<'a> {
    peer: Peer<'a>,
    calls: usize,
    bytes: usize,
}

impl<'a> Script<'a> {
    async fn new(daemon: &'a Daemon) -> Self {
        Self { peer: Peer::external(daemon).await, calls: 0, bytes: 0 }
    }

    async fn call(&mut self, tool: &str, args: Value) -> Value {
        let headers = [("mcp-session-id", self.peer.session.as_str())];
        let reply = rpc(self.peer.daemon, "tools/call", json!({"name": tool, "arguments": args}), &headers).await;
        let result = &reply.body["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{tool} {args}: {}", reply.body));
        assert_ne!(result["isError"], json!(true), "{tool} {args} failed: {text}");
        self.calls += 1;
        self.bytes += text.len();
        serde_json::from_str(text).unwrap()
    }

    async fn spawn(&mut self, daemon: &Daemon, prompt: &str) -> Value {
        let args = json!({"action": "spawn", "binary_path": fake_agent(), "agent_type": "claude",
            "prompt": prompt, "cwd": daemon.dir.path()});
        self.call("agent", args).await
    }
}

fn open_gate(daemon: &Daemon) {
    std::fs::write(daemon.dir.path().join("gate.open"), b"").unwrap();
}

fn ids(spawned: &[Value]) -> Vec<String> {
    spawned.iter().map(|s| s["session_id"].as_str().unwrap().to_owned()).collect()
}

/// Each worker's result line is in its entry's output, under its own session id.
fn assert_every_result(results: &[Value], spawned: &[Value], jobs: &[&str]) {
    assert_eq!(results.len(), jobs.len(), "{results:?}");
    for ((entry, worker), job) in results.iter().zip(spawned).zip(jobs) {
        assert_eq!(entry["session_id"], worker["session_id"], "{entry}");
        assert_eq!(entry["status"], json!("complete"), "{entry}");
        assert!(entry["output"].as_str().unwrap().contains(&format!("done: gate {job}")), "{entry}");
    }
}

#[tokio::test]
async fn orchestrate_three_workers_in_one_wait_within_four_calls() {
    let daemon = Daemon::start().await;
    let mut script = Script::new(&daemon).await;
    let jobs = ["job-a", "job-b", "job-c"];
    let mut spawned = Vec::new();
    for job in jobs {
        spawned.push(script.spawn(&daemon, &format!("gate {job}")).await);
    }
    // The three turns end within milliseconds of each other.
    open_gate(&daemon);
    let start = Instant::now();
    let answer = script.call("agent", json!({"action": "wait", "sessions": ids(&spawned), "timeout_ms": 30000})).await;
    assert_eq!((answer["met"].clone(), answer["timed_out"].clone()), (json!(true), json!(false)), "{answer}");
    assert_eq!(answer["pending"], json!([]));
    let results = answer["results"].as_array().unwrap();
    assert_every_result(results, &spawned, &jobs);
    assert!(results.iter().all(|r| r["agent_state"] == json!("completed")), "{answer}");
    assert!(script.calls <= 4, "{} calls", script.calls);
    eprintln!(
        "orchestrator after: {} calls, {} bytes read (wait answered in {} ms)",
        script.calls,
        script.bytes,
        start.elapsed().as_millis()
    );
}

/// The workflow before `sessions` existed: register, three spawns, `agent wait` until the three
/// lifecycle messages are in, then one `session output` per worker. It prints its calls and bytes
/// (the "before" figures); a build without the burst gather takes three waits here.
#[tokio::test]
async fn orchestrate_the_mail_way_reads_every_result_too() {
    let daemon = Daemon::start().await;
    let mut script = Script::new(&daemon).await;
    script.call("agent", json!({"action": "register", "name": "lead"})).await;
    let jobs = ["job-a", "job-b", "job-c"];
    let mut spawned = Vec::new();
    for job in jobs {
        spawned.push(script.spawn(&daemon, &format!("gate {job}")).await);
    }
    open_gate(&daemon);
    let (mut completed, mut waits) = (0, 0);
    let start = Instant::now();
    while completed < jobs.len() {
        assert!(start.elapsed() < DEADLINE, "only {completed} lifecycle messages");
        let woken = script.call("agent", json!({"action": "wait", "timeout_ms": 15000})).await;
        waits += 1;
        let contents = woken["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap().to_owned());
        completed += contents.filter(|c| c.contains("\"state\":\"completed\"")).count();
    }
    let mut results = Vec::new();
    for id in ids(&spawned) {
        let out = script.call("session", json!({"action": "output", "session_id": id, "limit": 100000})).await;
        results.push(json!({"session_id": id, "status": "complete", "output": out["data"]}));
    }
    assert_every_result(&results, &spawned, &jobs);
    eprintln!("orchestrator by mail: {} calls ({waits} waits), {} bytes read", script.calls, script.bytes);
}

#[tokio::test]
async fn orchestrate_a_question_and_a_failure_come_back_as_such() {
    let daemon = Daemon::start().await;
    let mut script = Script::new(&daemon).await;
    let asking = script.spawn(&daemon, "question job").await;
    let failing = script.spawn(&daemon, "quit job").await;
    // A task_id names its session as well as the session_id does.
    let sessions = json!([asking["task_id"], failing["session_id"]]);
    let answer = script.call("agent", json!({"action": "wait", "sessions": sessions, "timeout_ms": 30000})).await;
    assert_eq!(answer["met"], json!(true), "{answer}");
    let (question, failed) = (&answer["results"][0], &answer["results"][1]);
    assert_eq!(question["status"], json!("question"), "{answer}");
    assert_eq!(question["session_id"], asking["session_id"]);
    assert_eq!(question["agent_state"], json!("awaiting_input"), "{answer}");
    assert!(question["output"].as_str().unwrap().contains("Do you want to proceed?"), "{answer}");
    assert_eq!(failed["status"], json!("failed"), "{answer}");
    assert_eq!(failed["exit_code"], json!(3), "{answer}");
    assert!(failed["output"].as_str().unwrap().contains("bye"), "{answer}");
}

#[tokio::test]
async fn orchestrate_a_timeout_returns_what_is_known_and_the_rest_to_wait_on() {
    let daemon = Daemon::start().await;
    let mut script = Script::new(&daemon).await;
    let lead = script.call("agent", json!({"action": "register", "name": "lead"})).await;
    assert_eq!(lead["ok"], json!(true));
    let quick = script.spawn(&daemon, "quick job").await;
    let gated = script.spawn(&daemon, "gate job-g").await;
    let sessions = json!([quick["session_id"], gated["alias"]]);
    // Once the quick one is done, a short wait runs out on the gated one.
    wait_until("the quick worker completes", DEADLINE, || async {
        let s = ok(&daemon, "session", json!({"action": "status", "session_id": quick["session_id"]})).await;
        (s["agent_state"] == json!("completed")).then_some(())
    })
    .await;
    let partial = script.call("agent", json!({"action": "wait", "sessions": sessions, "timeout_ms": 300})).await;
    assert_eq!((partial["met"].clone(), partial["timed_out"].clone()), (json!(false), json!(true)), "{partial}");
    assert_eq!(partial["results"][0]["status"], json!("complete"), "{partial}");
    assert_eq!(partial["results"][1]["status"], json!("working"), "{partial}");
    assert_eq!(partial["pending"], json!([gated["session_id"]]), "{partial}");
    // A registered caller's mail comes with it: the quick child's lifecycle message.
    let mail = partial["messages"].as_array().unwrap();
    assert!(mail.iter().any(|m| m["content"].as_str().unwrap().contains("\"state\":\"completed\"")), "{partial}");
    assert!(partial["next_since"].as_u64().unwrap() > 0, "{partial}");
    assert!(partial["results"][0]["cursor"].as_u64().is_some(), "{partial}");

    open_gate(&daemon);
    let rest =
        script.call("agent", json!({"action": "wait", "sessions": partial["pending"], "timeout_ms": 30000})).await;
    assert_eq!(rest["met"], json!(true), "{rest}");
    assert_eq!(rest["results"][0]["status"], json!("complete"), "{rest}");
    assert!(rest["results"][0]["output"].as_str().unwrap().contains("done: gate job-g"), "{rest}");
}

#[tokio::test]
async fn orchestrate_a_bad_set_is_refused_naming_the_entry() {
    let daemon = Daemon::start().await;
    let peer = Peer::external(&daemon).await;
    let error = peer.fails(json!({"action": "wait", "sessions": []})).await;
    assert!(error.contains("sessions must name at least one"), "{error}");
    let error = peer.fails(json!({"action": "wait", "sessions": ["nope-1"]})).await;
    assert!(error.contains("sessions[0] 'nope-1' is neither a session nor a task_id of yours"), "{error}");
    let many: Vec<String> = (0..17).map(|i| format!("s{i}")).collect();
    let error = peer.fails(json!({"action": "wait", "sessions": many})).await;
    assert!(error.contains("at most 16"), "{error}");
    let error = peer.fails(json!({"action": "wait", "sessions": "tu-1"})).await;
    assert!(error.contains("sessions"), "{error}");
    // Another caller's task_id is not a handle for this one.
    let owner = Peer::external(&daemon).await;
    let args = json!({"action": "spawn", "binary_path": fake_agent(), "agent_type": "claude",
        "prompt": "quick job", "cwd": daemon.dir.path()});
    let spawned = owner.ok(args).await;
    let error = peer.fails(json!({"action": "wait", "sessions": [spawned["task_id"]], "timeout_ms": 10})).await;
    assert!(error.contains("sessions[0]"), "{error}");
}
