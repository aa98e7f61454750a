//! One meaning of "confirmed idle", end to end with the fake agent CLI in real PTYs: what
//! `session status` reports, `session action=wait until=idle`, `session action=submit` and typed
//! delivery of peer messages agree, and nothing is typed while a question is open.

use serde_json::{Value, json};

use crate::agents::fake_agent;
use crate::harness::*;
use crate::mcp_client::*;
use crate::peers::Peer;

/// Starts the fake agent (Claude-like) over REST; returns (session_id, tuic_session).
async fn fake_session(daemon: &Daemon, args: &[&str]) -> (String, String) {
    let body = json!({"shell": fake_agent(), "args": args, "agent_type": "claude", "cwd": daemon.dir.path()});
    let (status, created) = daemon.post("/sessions", body).await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{created}");
    (created["session_id"].as_str().unwrap().to_owned(), created["tuic_session"].as_str().unwrap().to_owned())
}

async fn status(daemon: &Daemon, id: &str) -> Value {
    ok(daemon, "session", json!({"action": "status", "session_id": id})).await
}

/// Polls `session status` until `check` holds; returns that status.
async fn wait_status(daemon: &Daemon, what: &str, id: &str, check: impl Fn(&Value) -> bool) -> Value {
    wait_until(what, DEADLINE, || async {
        let s = status(daemon, id).await;
        check(&s).then_some(s)
    })
    .await
}

fn confirmed(s: &Value) -> bool {
    s["state"]["idle_confirmed"] == json!(true)
}

async fn submit(daemon: &Daemon, id: &str, input: &str) -> (bool, Value) {
    call(daemon, "session", json!({"action": "submit", "session_id": id, "input": input})).await
}

#[tokio::test]
async fn idle_a_completed_agent_takes_a_submit_at_once() {
    // Without hooks only the end-of-task marker and the ready prompt tell that the turn ended.
    let daemon = Daemon::start().await;
    let (id, _) = fake_session(&daemon, &["--no-hooks"]).await;
    wait_status(&daemon, "the fake agent confirmed idle", &id, confirmed).await;
    let (failed, receipt) = submit(&daemon, &id, "first job").await;
    assert!(!failed, "{receipt}");
    let done = wait_status(&daemon, "the first job completed", &id, |s| s["agent_state"] == json!("completed")).await;
    assert!(confirmed(&done), "completed but not confirmed idle: {done}");
    let (failed, receipt) = submit(&daemon, &id, "second job").await;
    assert!(!failed && receipt["submitted"] == json!(true), "a completed agent refused a submit: {receipt}");
    wait_session_output(&daemon, &id, "done: second job").await;
}

#[tokio::test]
async fn idle_wait_is_not_met_while_the_agent_still_works() {
    let daemon = Daemon::start().await;
    let (id, _) = fake_session(&daemon, &[]).await;
    wait_status(&daemon, "the fake agent confirmed idle", &id, confirmed).await;
    // The turn ends with the idle hook and the marker, but leaves a build running for 3 s.
    let (failed, receipt) = submit(&daemon, &id, "background build").await;
    assert!(!failed, "{receipt}");
    wait_session_output(&daemon, &id, "done: background build").await;
    let busy = wait_status(&daemon, "the build seen as background work", &id, |s| s["background_work"] == json!(true));
    let busy = busy.await;
    assert_eq!(busy["agent_state"], json!("working"), "{busy}");
    let waited = ok(&daemon, "session", json!({"action": "wait", "session_id": id, "timeout_ms": 15000})).await;
    assert_eq!(waited["met"], json!(true), "{waited}");
    let after = status(&daemon, &id).await;
    assert!(
        confirmed(&after) && after["agent_state"] != json!("working") && after.get("background_work").is_none(),
        "wait until=idle returned while the agent still worked: {after}"
    );
}

/// A question drawn without `❯`: reported as awaiting_input, a peer's message is held (not
/// typed: it would answer the question), then typed once the question is answered.
async fn a_question_holds_typed_delivery(task: &str, question: &str) {
    let daemon = Daemon::start().await;
    let (id, tuic) = fake_session(&daemon, &[]).await;
    let _worker = Peer::in_terminal(&daemon, &tuic).await;
    let sender = Peer::external(&daemon).await;
    sender.register(json!({"name": "orch"})).await;
    wait_status(&daemon, "the fake agent confirmed idle", &id, confirmed).await;

    let (failed, receipt) = submit(&daemon, &id, task).await;
    assert!(!failed, "{receipt}");
    let asked =
        wait_status(&daemon, "the question is awaiting_input", &id, |s| s["agent_state"] == json!("awaiting_input"))
            .await;
    assert_eq!(asked["state"]["question_text"], json!(question), "{asked}");
    let (failed, refused) = submit(&daemon, &id, "typed over the question").await;
    assert!(failed && refused.to_string().contains("question"), "{refused}");
    let sent = sender.send(&tuic, "hello").await;
    assert!(sent["delivery_path"].is_string(), "{sent}");

    // The question is answered by hand; the held message must not have been its answer.
    let answer = json!({"action": "input", "session_id": id, "input": "1", "special_key": "enter"});
    ok(&daemon, "session", answer).await;
    let text = wait_session_output(&daemon, &id, "answer=").await;
    assert!(text.contains("answer=1"), "the question got another answer: {text}");
    let text = wait_session_output(&daemon, &id, "done: [TUIC message from orch] hello").await;
    assert!(text.find("answer=1").unwrap() < text.find("Working on [TUIC message from orch] hello").unwrap());
}

#[tokio::test]
async fn idle_a_plain_numbered_question_holds_typed_delivery() {
    a_question_holds_typed_delivery("plainq now", "Do you want to proceed?").await;
}

#[tokio::test]
async fn idle_a_yes_no_prompt_holds_typed_delivery() {
    a_question_holds_typed_delivery("yesno now", "Proceed?").await;
}
