//! ACP end to end against a scripted agent (`tests/fixtures/acp/fake_acp_agent.py`): launch,
//! sessions, a prompt streamed over the WebSocket, permission and elicitation answers, cancel,
//! kill and reconnect, the stream's cursor rules, and a hostile agent. The real agents (Claude
//! Code, Codex, Gemini CLI in their ACP modes) are driven by `tests/acp/run.py`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use http::StatusCode;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::harness::{DEADLINE, Daemon, read_events, wait_until};

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::UnixStream>;

fn fake_agent() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp/fake_acp_agent.py").display().to_string()
}

/// A daemon whose `ego_executable` is the scripted agent; it knows the daemon's socket (for the
/// self-answer attack) and keeps its sessions in a file across generations.
async fn daemon() -> Daemon {
    let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();
    let socket = dir.path().join("mcp.sock").display().to_string();
    let store = dir.path().join("acp-store.json").display().to_string();
    Daemon::builder()
        .dir(dir)
        .config(json!({"ego_executable": "python3", "ego_args": [fake_agent()]}))
        .env("FAKE_ACP_SOCKET", socket)
        .env("FAKE_ACP_STORE", store)
        .start()
        .await
}

async fn connect(daemon: &Daemon) -> (String, String) {
    let (status, body) = daemon.post("/acp/connections", json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["state"], "ready", "{body}");
    let id = body["id"].as_str().unwrap().to_owned();
    let (status, session) = daemon.post(&format!("/acp/connections/{id}/sessions"), json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    (id, session["session_id"].as_str().unwrap().to_owned())
}

async fn open_stream(daemon: &Daemon, id: &str, after: Option<u64>) -> Socket {
    let path = match after {
        Some(after) => format!("/acp/connections/{id}/stream?after={after}"),
        None => format!("/acp/connections/{id}/stream"),
    };
    let stream = tokio::net::UnixStream::connect(&daemon.socket).await.unwrap();
    let (mut socket, response) = tokio_tungstenite::client_async(format!("ws://tuic{path}"), stream).await.unwrap();
    assert_eq!(response.status(), 101);
    let hello = next_frame(&mut socket).await;
    assert_eq!(hello["kind"], "hello", "{hello}");
    socket
}

async fn next_frame(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(DEADLINE, socket.next()).await.expect("a frame in time");
        match message {
            Some(Ok(Message::Text(text))) => return serde_json::from_str(&text).unwrap(),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            other => panic!("expected a text frame, got {other:?}"),
        }
    }
}

/// Frames until the agent's response to request `id`; checks the sequence has no gap.
async fn read_turn(socket: &mut Socket, id: u64) -> Vec<Value> {
    let mut frames: Vec<Value> = Vec::new();
    loop {
        let frame = next_frame(socket).await;
        if let Some(last) = frames.last() {
            assert_eq!(frame["seq"].as_u64(), last["seq"].as_u64().map(|s| s + 1), "no gap: {frame}");
        }
        let done =
            frame["kind"] == "agent" && frame["message"]["id"] == json!(id) && frame["message"].get("method").is_none();
        frames.push(frame);
        if done {
            return frames;
        }
    }
}

fn said(frames: &[Value]) -> String {
    frames
        .iter()
        .filter(|f| f["message"]["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|f| f["message"]["params"]["update"]["content"]["text"].as_str())
        .collect()
}

fn stop_reason(frames: &[Value]) -> Value {
    frames.last().unwrap()["message"]["result"]["stopReason"].clone()
}

async fn prompt(daemon: &Daemon, id: &str, session: &str, text: &str) -> u64 {
    let (status, body) =
        daemon.post(&format!("/acp/connections/{id}/sessions/{session}/prompt"), json!({"prompt": text})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["sent"], true);
    body["request_id"].as_u64().unwrap()
}

async fn pending(daemon: &Daemon, id: &str, count: usize) -> Vec<Value> {
    wait_until("the interactions", DEADLINE, || async {
        let (_, body) = daemon.get(&format!("/acp/connections/{id}/interactions")).await;
        let items = body["interactions"].as_array().cloned().unwrap_or_default();
        (items.len() == count).then_some(items)
    })
    .await
}

#[tokio::test]
async fn acp_without_an_agent_configured_says_which_setting_to_set() {
    let daemon = Daemon::start().await;
    let (status, body) = daemon.post("/acp/connections", json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"].as_str().unwrap().contains("ego_executable"), "{body}");
    let (status, body) = daemon.get("/acp/connections/acp-9").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // The executable is never taken from the request.
    let (status, body) = daemon.post("/acp/connections", json!({"ego_executable": "/bin/sh"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("ego_executable"), "{body}");
    let missing = Daemon::builder().config(json!({"ego_executable": "/nonexistent/agent"})).start().await;
    let (status, body) = missing.post("/acp/connections", json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("/nonexistent/agent"), "{body}");
    let (_, list) = missing.get("/acp/connections").await;
    assert_eq!(list["connections"], json!([]), "a launch that never started leaves nothing behind");
}

#[tokio::test]
async fn acp_a_prompt_streams_in_order_and_ends_with_its_response() {
    let daemon = daemon().await;
    let (id, session) = connect(&daemon).await;
    let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
    assert_eq!(snapshot["agent_info"]["name"], "fake-acp");
    assert_eq!(snapshot["generation"], 1);
    assert_eq!(snapshot["sessions"][0]["session_id"], json!(session));
    assert_eq!(snapshot["sessions"][0]["attached"], true);
    let mut socket = open_stream(&daemon, &id, Some(snapshot["sequence"].as_u64().unwrap())).await;
    let request = prompt(&daemon, &id, &session, "hello there").await;
    let frames = read_turn(&mut socket, request).await;
    assert_eq!(frames[0]["kind"], "client", "the prompt as sent comes first: {}", frames[0]);
    assert_eq!(frames[0]["message"]["method"], "session/prompt");
    assert_eq!(said(&frames), "Received: hello there");
    assert_eq!(stop_reason(&frames), "end_turn");

    // One turn at a time per session.
    let slow = prompt(&daemon, &id, &session, "slow 30").await;
    let (status, body) =
        daemon.post(&format!("/acp/connections/{id}/sessions/{session}/prompt"), json!({"prompt": "again"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"].as_str().unwrap().contains("a turn is running"), "{body}");
    let frames = read_turn(&mut socket, slow).await;
    assert_eq!(stop_reason(&frames), "end_turn");

    // Bad input is named and changes nothing.
    let base = format!("/acp/connections/{id}/sessions/{session}");
    for (body, needle) in [
        (json!({"prompt": 5}), "prompt"),
        (json!({"prompt": [{"type": "text"}]}), "prompt[0]"),
        (json!({"prompt": "  "}), "empty"),
        (json!({"text": "x"}), "text"),
    ] {
        let (status, answer) = daemon.post(&format!("{base}/prompt"), body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer["error"].as_str().unwrap().contains(needle), "{needle}: {answer}");
    }
    let (status, answer) =
        daemon.post(&format!("/acp/connections/{id}/sessions/nope/prompt"), json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    let (status, answer) = daemon.post(&format!("{base}/config"), json!({"config_id": "x"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let (status, answer) = daemon.post(&format!("{base}/config"), json!({"mode_id": "plan"})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, answer) = daemon.post(&format!("{base}/teleport"), json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");

    // What the agent did not advertise, or does not know, is unsupported.
    for action in ["fork", "resume", "pause", "compact", "resume-turn"] {
        let (status, answer) = daemon.post(&format!("{base}/{action}"), json!({})).await;
        assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{action}: {answer}");
        assert!(answer["error"].as_str().unwrap().starts_with("unsupported by this agent"), "{answer}");
    }
    let (status, answer) = daemon.request(http::Method::DELETE, &base, None).await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{answer}");
    let (status, answer) = daemon.post(&format!("{base}/close"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, answer) = daemon.post(&format!("{base}/prompt"), json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "a closed session takes no prompt: {answer}");
}

#[tokio::test]
async fn acp_a_person_answers_permissions_and_elicitations_and_notices_ride_events() {
    let daemon = daemon().await;
    let (id, session) = connect(&daemon).await;
    let events = daemon.client.get(Daemon::url("/events?types=acp-notice")).send().await.unwrap();
    let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
    let mut socket = open_stream(&daemon, &id, Some(snapshot["sequence"].as_u64().unwrap())).await;

    let request = prompt(&daemon, &id, &session, "ask").await;
    let items = pending(&daemon, &id, 1).await;
    let question = &items[0];
    assert_eq!(question["kind"], "permission");
    assert_eq!(question["session_id"], json!(session));
    assert_eq!(question["tool_call"]["title"], "Run echo hi");
    let rid = question["request_id"].as_str().unwrap().to_owned();
    let answer_path = format!("/acp/connections/{id}/permissions/{rid}/response");
    let (status, body) = daemon.post(&answer_path, json!({"option_id": "maybe"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("allow, reject"), "names the options: {body}");
    let (status, body) = daemon.post(&answer_path, json!({"option_id": "allow", "cancelled": true})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = daemon.post(&answer_path, json!({"option_id": "allow"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = daemon.post(&answer_path, json!({"option_id": "allow"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "answered once: {body}");
    let frames = read_turn(&mut socket, request).await;
    assert_eq!(said(&frames), "permission: selected allow");

    let request = prompt(&daemon, &id, &session, "elicit").await;
    let items = pending(&daemon, &id, 1).await;
    assert_eq!(items[0]["kind"], "elicitation");
    assert_eq!(items[0]["message"], "Your name?");
    let rid = items[0]["request_id"].as_str().unwrap().to_owned();
    let path = format!("/acp/connections/{id}/elicitations/{rid}/response");
    let (status, body) = daemon.post(&path, json!({"action": "shrug"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) =
        daemon.post(&format!("/acp/connections/{id}/permissions/{rid}/response"), json!({"cancelled": true})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "an elicitation is not a permission: {body}");
    let (status, body) = daemon.post(&path, json!({"action": "accept", "content": {"name": "Ada"}})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let frames = read_turn(&mut socket, request).await;
    assert_eq!(said(&frames), r#"elicitation: {"action": "accept", "content": {"name": "Ada"}}"#);

    let notices =
        read_events(events, |seen| seen.iter().filter(|(_, _, d)| d["notice"] == "interaction_settled").count() >= 2)
            .await;
    let kinds: Vec<&str> = notices.iter().filter_map(|(_, _, d)| d["notice"].as_str()).collect();
    assert_eq!(
        kinds,
        ["interaction_pending", "interaction_settled", "interaction_pending", "interaction_settled"],
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .all(|(_, kind, d)| kind == "acp-notice" && d["connection"] == json!(id) && d["sequence"].is_u64())
    );
    assert_eq!(notices[0].2["session_id"], json!(session));
    assert!(notices[0].2["request_id"].is_string());
}

#[tokio::test]
async fn acp_the_agent_cannot_answer_its_own_permission_request() {
    let daemon = daemon().await;
    let (id, session) = connect(&daemon).await;
    let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
    let mut socket = open_stream(&daemon, &id, Some(snapshot["sequence"].as_u64().unwrap())).await;
    let request = prompt(&daemon, &id, &session, "answer-self").await;
    // The agent answers its own question over the daemon's socket and says the status it got;
    // the question still waits for a person.
    let mut frames = Vec::new();
    while !said(&frames).contains("self-answer: ") || said(&frames).len() < "self-answer: 403".len() {
        frames.push(next_frame(&mut socket).await);
    }
    assert_eq!(said(&frames), "self-answer: 403");
    let items = pending(&daemon, &id, 1).await;
    let rid = items[0]["request_id"].as_str().unwrap().to_owned();
    let (status, body) =
        daemon.post(&format!("/acp/connections/{id}/permissions/{rid}/response"), json!({"option_id": "reject"})).await;
    assert_eq!(status, StatusCode::OK, "the person's answer is the one that counts: {body}");
    let rest = read_turn(&mut socket, request).await;
    assert_eq!(said(&rest), " then: selected");
}

#[tokio::test]
async fn acp_cancel_ends_the_turn_and_answers_what_it_asked() {
    let daemon = daemon().await;
    let (id, session) = connect(&daemon).await;
    let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
    let mut socket = open_stream(&daemon, &id, Some(snapshot["sequence"].as_u64().unwrap())).await;
    let base = format!("/acp/connections/{id}/sessions/{session}");

    let request = prompt(&daemon, &id, &session, "slow 500").await;
    let first = next_frame(&mut socket).await;
    assert_eq!(first["kind"], "client");
    let (status, body) = daemon.post(&format!("{base}/cancel"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["turn_running"], true);
    let frames = read_turn(&mut socket, request).await;
    assert_eq!(stop_reason(&frames), "cancelled");
    assert!(frames.iter().any(|f| f["message"]["method"] == "session/cancel"), "the cancel is journaled");

    let request = prompt(&daemon, &id, &session, "ask").await;
    pending(&daemon, &id, 1).await;
    let (status, _) = daemon.post(&format!("{base}/cancel"), json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let frames = read_turn(&mut socket, request).await;
    assert_eq!(said(&frames), "permission: cancelled");
    pending(&daemon, &id, 0).await;
}

#[tokio::test]
async fn acp_kill_settles_reconnect_starts_a_generation_and_load_replays_the_session() {
    let daemon = daemon().await;
    let (id, session) = connect(&daemon).await;
    let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
    let mut socket = open_stream(&daemon, &id, Some(snapshot["sequence"].as_u64().unwrap())).await;
    let request = prompt(&daemon, &id, &session, "remember me").await;
    read_turn(&mut socket, request).await;
    let pid = snapshot["pid"].as_u64().unwrap();

    let (status, settled) = daemon.post(&format!("/acp/connections/{id}/kill"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{settled}");
    assert_eq!(settled["state"], "settled", "the answer says the kill's outcome: {settled}");
    assert_eq!(settled["settled_reason"], "killed");
    wait_until("the killed agent to be reaped", DEADLINE, || async {
        (!std::path::Path::new(&format!("/proc/{pid}")).exists()).then_some(())
    })
    .await;
    let state = loop {
        let frame = next_frame(&mut socket).await;
        if frame["kind"] == "state" {
            break frame;
        }
    };
    assert_eq!(state["state"], "settled");
    let (status, body) =
        daemon.post(&format!("/acp/connections/{id}/sessions/{session}/prompt"), json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"].as_str().unwrap().contains("settled"), "{body}");

    let (status, body) = daemon.post(&format!("/acp/connections/{id}/reconnect"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["generation"], 2);
    assert_eq!(body["state"], "ready");
    assert_eq!(body["sessions"][0]["attached"], false, "{body}");
    let (status, body) =
        daemon.post(&format!("/acp/connections/{id}/sessions/{session}/prompt"), json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "not attached until loaded: {body}");
    let (status, body) = daemon.post(&format!("/acp/connections/{id}/sessions/{session}/load"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut replay = Vec::new();
    loop {
        let frame = next_frame(&mut socket).await;
        let done = frame["message"]["result"] == json!({});
        replay.push(frame);
        if done {
            break;
        }
    }
    let kinds: Vec<&str> =
        replay.iter().filter_map(|f| f["message"]["params"]["update"]["sessionUpdate"].as_str()).collect();
    assert_eq!(kinds, ["user_message_chunk", "agent_message_chunk"], "{replay:?}");
    assert!(replay.iter().all(|f| f["generation"] == 2 || f["kind"] == "state"));
    let request = prompt(&daemon, &id, &session, "after load").await;
    let frames = read_turn(&mut socket, request).await;
    assert_eq!(said(&frames), "Received: after load");

    let (status, body) = daemon.request(http::Method::DELETE, &format!("/acp/connections/{id}"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = daemon.get(&format!("/acp/connections/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn acp_stream_cursors_resume_exactly_and_a_dropped_one_is_refused_before_the_upgrade() {
    let daemon = daemon().await;
    let (id, session) = connect(&daemon).await;
    let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
    let start = snapshot["sequence"].as_u64().unwrap();

    // 20 reconnects during one turn, each resuming from the last frame seen: every frame once.
    let request = prompt(&daemon, &id, &session, "slow 200").await;
    let mut seen: Vec<u64> = Vec::new();
    let mut after = start;
    let mut reconnects = 0;
    let mut done = false;
    while !done {
        let mut socket = open_stream(&daemon, &id, Some(after)).await;
        let take = if reconnects < 20 { 7 } else { usize::MAX };
        for _ in 0..take {
            let frame = next_frame(&mut socket).await;
            let seq = frame["seq"].as_u64().unwrap();
            seen.push(seq);
            after = seq;
            if frame["message"]["id"] == json!(request) && frame["message"].get("result").is_some() {
                done = true;
                break;
            }
        }
        socket.close(None).await.ok();
        reconnects += 1;
    }
    assert!(reconnects > 20, "{reconnects}");
    let expected: Vec<u64> = (start + 1..=after).collect();
    assert_eq!(seen, expected, "0 frames lost or repeated across {reconnects} reconnects");

    // A cursor beyond the newest frame is a bad request; one older than the journal is 404.
    let (status, body) = daemon.get(&format!("/acp/connections/{id}/stream?after={}", after + 100)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let request = prompt(&daemon, &id, &session, "fast 8300").await;
    wait_until("the journal to drop its oldest frames", Duration::from_secs(60), || async {
        let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
        (snapshot["first_sequence"].as_u64().unwrap() > 2).then_some(())
    })
    .await;
    let (status, body) = daemon.get(&format!("/acp/connections/{id}/stream?after=1")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body["error"].as_str().unwrap().contains("no longer kept"), "{body}");
    let mut socket = open_stream(&daemon, &id, None).await;
    let first = next_frame(&mut socket).await;
    assert!(first["seq"].as_u64().unwrap() > 2, "without after: from the oldest kept: {first}");
    let _ = request;
}

#[tokio::test]
async fn acp_a_hostile_agent_leaves_the_daemon_serving_with_a_clear_state() {
    let daemon = daemon().await;
    let (id, session) = connect(&daemon).await;
    let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
    let mut socket = open_stream(&daemon, &id, Some(snapshot["sequence"].as_u64().unwrap())).await;

    let request = prompt(&daemon, &id, &session, "garbage").await;
    let frames = read_turn(&mut socket, request).await;
    let invalid: Vec<&Value> = frames.iter().filter(|f| f["kind"] == "invalid").collect();
    assert_eq!(invalid.len(), 3, "{frames:?}");
    assert!(invalid[0]["reason"].as_str().unwrap().starts_with("not JSON"), "{}", invalid[0]);
    assert_eq!(invalid[0]["head"], "this is not json");
    assert_eq!(said(&frames), "after garbage");

    let request = prompt(&daemon, &id, &session, "oversize").await;
    let frames = read_turn(&mut socket, request).await;
    let big = frames.iter().find(|f| f["kind"] == "invalid").expect("the oversize line is journaled as invalid");
    assert!(big["reason"].as_str().unwrap().contains("over the size limit"), "{big}");
    assert!(big["bytes"].as_u64().unwrap() > 9 * 1024 * 1024);
    assert!(big.to_string().len() < 4096, "the frame does not carry the line");

    let request = prompt(&daemon, &id, &session, "fs").await;
    let frames = read_turn(&mut socket, request).await;
    assert_eq!(said(&frames), "fs: -32601", "no file system is offered");

    let started = Instant::now();
    let request = prompt(&daemon, &id, &session, "flood 100 36").await;
    let frames = read_turn(&mut socket, request).await;
    assert_eq!(said(&frames), "flood: 36 refused at once", "64 wait on a person, the rest are refused");
    let (_, list) = daemon.get(&format!("/acp/connections/{id}/interactions")).await;
    assert_eq!(list["interactions"].as_array().unwrap().len(), 64);
    assert!(started.elapsed() < DEADLINE);

    let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
    assert_eq!(snapshot["invalid_lines"], 4);
    let request = prompt(&daemon, &id, &session, "exit").await;
    let _ = request;
    let settled = wait_until("the connection to settle", DEADLINE, || async {
        let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
        (snapshot["state"] == "settled").then_some(snapshot)
    })
    .await;
    assert!(settled["settled_reason"].as_str().unwrap().starts_with("exited with code 3"), "{settled}");
    assert_eq!(settled["interactions_pending"], 0, "its questions went with it");
    assert_eq!(settled["sessions"][0]["turn_running"], false);
    let (status, _) = daemon.get("/health").await;
    assert_eq!(status, StatusCode::OK);
    // The socket still serves, and says the state.
    loop {
        let frame = next_frame(&mut socket).await;
        if frame["kind"] == "state" {
            assert_eq!(frame["state"], "settled");
            break;
        }
    }
    socket.send(Message::Close(None)).await.ok();
}

#[tokio::test]
async fn acp_connections_are_read_through_the_session_tool_like_terminals() {
    let daemon = daemon().await;
    let (id, session) = connect(&daemon).await;
    let (_, snapshot) = daemon.get(&format!("/acp/connections/{id}")).await;
    let mut socket = open_stream(&daemon, &id, Some(snapshot["sequence"].as_u64().unwrap())).await;
    let request = prompt(&daemon, &id, &session, "hello from a person").await;
    read_turn(&mut socket, request).await;

    let list = crate::mcp_client::ok(&daemon, "session", json!({"action": "list"})).await;
    let entry = list.as_array().unwrap().iter().find(|e| e["session_id"] == json!(id)).expect("listed");
    assert_eq!(entry["agent_type"], "fake-acp");
    assert_eq!(entry["agent_state"], "idle");
    let read = crate::mcp_client::ok(&daemon, "session", json!({"action": "output", "session_id": id})).await;
    let data = read["data"].as_str().unwrap();
    assert!(data.contains("prompt: hello from a person"), "{data}");
    assert!(data.contains("\nReceived: hello from a person\n"), "the chunks join into one line: {data}");
    assert!(data.contains("turn ended: end_turn"), "{data}");
    let cursor = read["cursor"].as_u64().unwrap();
    let again = crate::mcp_client::ok(
        &daemon,
        "session",
        json!({"action": "output", "session_id": id, "since_cursor": cursor}),
    )
    .await;
    assert_eq!(again["data"], "", "nothing new after the cursor: {again}");
    let small =
        crate::mcp_client::ok(&daemon, "session", json!({"action": "output", "session_id": id, "limit": 40})).await;
    assert!(small["data"].as_str().unwrap().len() <= 80 && small["more"] == true, "{small}");

    let request = prompt(&daemon, &id, &session, "ask").await;
    pending(&daemon, &id, 1).await;
    let list = crate::mcp_client::ok(&daemon, "session", json!({"action": "list"})).await;
    let entry = list.as_array().unwrap().iter().find(|e| e["session_id"] == json!(id)).unwrap();
    assert_eq!(entry["agent_state"], "awaiting_input");
    let read = crate::mcp_client::ok(
        &daemon,
        "session",
        json!({"action": "output", "session_id": id, "since_cursor": cursor}),
    )
    .await;
    assert!(read["data"].as_str().unwrap().contains("asks permission: Run echo hi"), "{read}");
    let _ = request;
}
