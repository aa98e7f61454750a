//! Calls in flight on an upstream: its log messages reach only the session whose call made
//! them, a change to `timeout_secs` alone is applied without restarting it (the call in flight
//! finishes), and SIGTERM lets a proxied call finish before the upstreams stop.

use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{DEADLINE, Daemon, SIGTERM, wait_until};
use crate::mcp_client::open_stream;
use crate::upstream_client_requests::{SdkHttp, sdk_upstream, text_of};
use crate::upstream_config::save;
use crate::upstream_util::{children_running, request, scratch_dir, session, wait_status, with_upstreams};

/// Reads `stream` until `needle` has arrived; everything read so far is added to `seen`.
async fn read_into(
    stream: &mut (impl futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    seen: &mut String,
    needle: &str,
) {
    while !seen.contains(needle) {
        let chunk = tokio::time::timeout(DEADLINE, stream.next()).await;
        let chunk = chunk.unwrap_or_else(|_| panic!("{needle:?} not seen within {DEADLINE:?}; seen: {seen}"));
        seen.push_str(&String::from_utf8_lossy(&chunk.expect("the stream goes on").unwrap()));
    }
}

/// Starts `tools/call` of `tool` in `session` on a task of its own; the task answers the whole
/// response body.
fn spawn_call(daemon: &Daemon, session: &str, tool: &str, arguments: Value) -> tokio::task::JoinHandle<Value> {
    let client = daemon.client.clone();
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
    let session = session.to_owned();
    tokio::spawn(async move {
        let response = client
            .post(Daemon::url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", session)
            .json(&body)
            .send()
            .await
            .unwrap();
        response.json::<Value>().await.unwrap()
    })
}

/// Two sessions each hold a call that logs, both in flight at once; each session's stream
/// must carry its own call's messages and none of the other's.
async fn each_session_gets_only_its_own_logs(daemon: &Daemon) {
    let (_dir, scratch) = scratch_dir();
    let release = scratch.join("release");
    let (a, b) = (session(daemon).await, session(daemon).await);
    let (mut a_stream, mut b_stream) = (open_stream(daemon, &a).await, open_stream(daemon, &b).await);
    let hold = |tag: &str| json!({"tag": tag, "release": release});
    let a_call = spawn_call(daemon, &a, "sdk__log_and_hold", hold("tag-a"));
    let b_call = spawn_call(daemon, &b, "sdk__log_and_hold", hold("tag-b"));
    let (mut a_seen, mut b_seen) = (String::new(), String::new());
    read_into(&mut a_stream, &mut a_seen, "start tag-a").await;
    read_into(&mut b_stream, &mut b_seen, "start tag-b").await;
    std::fs::write(&release, "go").unwrap();
    assert_eq!(text_of(&a_call.await.unwrap()), "done tag-a");
    assert_eq!(text_of(&b_call.await.unwrap()), "done tag-b");
    read_into(&mut a_stream, &mut a_seen, "end tag-a").await;
    read_into(&mut b_stream, &mut b_seen, "end tag-b").await;
    assert!(!a_seen.contains("tag-b"), "session a got b's log: {a_seen}");
    assert!(!b_seen.contains("tag-a"), "session b got a's log: {b_seen}");
}

#[tokio::test]
async fn an_http_upstreams_log_messages_reach_only_the_session_whose_call_made_them() {
    let upstream = SdkHttp::start().await;
    let server = json!({"id": "sdk", "name": "sdk", "transport": {"type": "http", "url": upstream.url}});
    let daemon = with_upstreams(&[server]).start().await;
    wait_status(&daemon, "sdk", "ready").await;
    each_session_gets_only_its_own_logs(&daemon).await;
}

#[tokio::test]
async fn a_stdio_upstreams_log_messages_reach_only_the_one_session_with_a_call_never_every_caller() {
    let daemon = with_upstreams(&[sdk_upstream("sdk")]).start().await;
    wait_status(&daemon, "sdk", "ready").await;
    let (_dir, scratch) = scratch_dir();
    let (release, b_started) = (scratch.join("release"), scratch.join("b-started"));
    let (a, b) = (session(&daemon).await, session(&daemon).await);
    let (mut a_stream, mut b_stream) = (open_stream(&daemon, &a).await, open_stream(&daemon, &b).await);
    // a's call alone in flight: its log reaches a.
    let a_call = spawn_call(&daemon, &a, "sdk__log_and_hold", json!({"tag": "tag-a", "release": release}));
    let mut a_seen = String::new();
    read_into(&mut a_stream, &mut a_seen, "start tag-a").await;
    // b's call beside it: stdio names no request, so b's log cannot be told apart and reaches
    // neither session (it used to reach every session with a call in flight).
    let arguments = json!({"tag": "tag-b", "release": release, "started": b_started});
    let b_call = spawn_call(&daemon, &b, "sdk__log_and_hold", arguments);
    wait_until("b's call to log", DEADLINE, || async { b_started.exists().then_some(()) }).await;
    std::fs::write(&release, "go").unwrap();
    assert_eq!(text_of(&a_call.await.unwrap()), "done tag-a");
    assert_eq!(text_of(&b_call.await.unwrap()), "done tag-b");
    // Each stream is read up to a marker sent to both after every log (the list_changed a new
    // timeout's deadline causes): anything misrouted came first.
    let (_, base) = daemon.get("/mcp/upstreams").await;
    let mut next = base.clone();
    next["servers"][0]["timeout_secs"] = json!(31);
    assert_eq!(save(&daemon, base, next).await.0, StatusCode::OK);
    let mut b_seen = String::new();
    read_into(&mut a_stream, &mut a_seen, "notifications/tools/list_changed").await;
    read_into(&mut b_stream, &mut b_seen, "notifications/tools/list_changed").await;
    assert!(!a_seen.contains("tag-b"), "session a got b's log: {a_seen}");
    assert!(!b_seen.contains("tag-a"), "session b got a's log: {b_seen}");
}

#[tokio::test]
async fn changing_only_timeout_secs_keeps_the_upstream_process_and_the_call_in_flight_finishes() {
    let daemon = with_upstreams(&[sdk_upstream("sdk")]).start().await;
    wait_status(&daemon, "sdk", "ready").await;
    let pid = wait_until("the upstream's process", DEADLINE, || async {
        children_running(daemon.pid(), "sdk_upstream.py").first().copied()
    })
    .await;
    let (_dir, scratch) = scratch_dir();
    let started = scratch.join("started");
    let session = session(&daemon).await;
    let call = spawn_call(&daemon, &session, "sdk__slow", json!({"seconds": 2, "started": started}));
    wait_until("the slow call to start", DEADLINE, || async { started.exists().then_some(()) }).await;
    let (_, base) = daemon.get("/mcp/upstreams").await;
    let mut next = base.clone();
    next["servers"][0]["timeout_secs"] = json!(45);
    let (status, answer) = save(&daemon, base, next).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(text_of(&call.await.unwrap()), "slept 2 s", "the call in flight finished");
    assert_eq!(children_running(daemon.pid(), "sdk_upstream.py"), [pid], "the upstream was not restarted");
    assert_eq!(wait_status(&daemon, "sdk", "ready").await["status"], "ready");
    let (_, now) = daemon.get("/mcp/upstreams").await;
    assert_eq!(now["servers"][0]["timeout_secs"], 45);
    let listing = request(&daemon, &session, 3, "tools/list", json!({})).await;
    let slow = listing["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "sdk__slow").cloned();
    assert_eq!(slow.expect("listed")["_meta"]["tuic/deadline_ms"], 50_000, "the new timeout is stated");
    assert!(daemon.log().contains("applied in place"), "{}", daemon.log());
}

#[tokio::test]
async fn sigterm_lets_a_proxied_call_in_flight_answer_whole_before_the_upstreams_stop() {
    let mut daemon = with_upstreams(&[sdk_upstream("sdk")]).start().await;
    wait_status(&daemon, "sdk", "ready").await;
    let (_dir, scratch) = scratch_dir();
    let started = scratch.join("started");
    let session = session(&daemon).await;
    let call = spawn_call(&daemon, &session, "sdk__slow", json!({"seconds": 2, "started": started}));
    wait_until("the slow call to start", DEADLINE, || async { started.exists().then_some(()) }).await;
    let status = daemon.stop_with(SIGTERM).await;
    assert!(status.success(), "{status}");
    let answer = call.await.unwrap();
    assert_eq!(text_of(&answer), "slept 2 s", "{answer}");
}
