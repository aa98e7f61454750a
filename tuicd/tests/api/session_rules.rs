//! Session rules users meet at the edges: one live session per `tuic_session`, close is
//! idempotent on REST and MCP alike, `session-closed` ends a session's events, and refusals say
//! what was wrong (size limit, session limit, query parameters).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::*;
use crate::mcp_client::ok;
use crate::session_util::*;

const TUIC: &str = "5d0c1a52-7d0e-4c55-9a1b-0000000000aa";

#[tokio::test]
async fn a_tuic_session_held_by_a_live_session_is_refused_even_by_parallel_creates() {
    let daemon = Daemon::start().await;
    let first = create(&daemon, json!({"tuic_session": TUIC})).await;
    let (status, refused) = daemon.post("/sessions", json!({"shell": "/bin/sh", "tuic_session": TUIC})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["code"], json!("conflict"));
    let message = refused["error"].as_str().unwrap();
    assert!(message.contains(TUIC) && message.contains("tuic_session"), "{message}");
    assert_eq!(daemon.get("/sessions").await.1.as_array().unwrap().len(), 1, "the refusal started nothing");

    // Twenty racing creates with one fresh tuic_session: exactly one wins.
    let shared = "5d0c1a52-7d0e-4c55-9a1b-0000000000bb";
    let creates = (0..20).map(|_| daemon.post("/sessions", json!({"shell": "/bin/sh", "tuic_session": shared})));
    let statuses: Vec<StatusCode> = futures_util::future::join_all(creates).await.into_iter().map(|(s, _)| s).collect();
    assert_eq!(statuses.iter().filter(|s| **s == StatusCode::CREATED).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == StatusCode::CONFLICT).count(), 19, "{statuses:?}");
    let holders = daemon.get("/sessions").await.1;
    let holders = holders.as_array().unwrap().iter().filter(|s| s["tuic_session"] == json!(shared)).count();
    assert_eq!(holders, 1);

    // Once its holder has closed, the tuic_session can be used again (a restored tab).
    let id = first["session_id"].as_str().unwrap();
    assert_eq!(daemon.request(Method::DELETE, &format!("/sessions/{id}"), None).await.0, StatusCode::OK);
    create(&daemon, json!({"tuic_session": TUIC})).await;
}

#[tokio::test]
async fn closing_an_exited_session_succeeds_on_rest_and_mcp_alike() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    write(&daemon, &id, "exit 3\n").await;
    wait_exited(&daemon, &id).await;
    let (status, closed) = daemon.request(Method::DELETE, &format!("/sessions/{id}"), None).await;
    assert_eq!(status, StatusCode::OK, "{closed}");
    assert_eq!(closed, json!({"ok": true, "exit_code": 3}));
    assert_eq!(ok(&daemon, "session", json!({"action": "close", "session_id": id})).await, json!({"ok": true}));
    let (status, unknown) = daemon.request(Method::DELETE, "/sessions/no-such-session", None).await;
    assert_eq!((status, unknown["code"].clone()), (StatusCode::NOT_FOUND, json!("not_found")));
}

/// Reads `/events` until `marker` (a `session-created` for that session) has arrived.
async fn events_until_created(response: reqwest::Response, marker: &str) -> Vec<(u64, String, Value)> {
    read_events(response, |events| {
        events.iter().any(|(_, kind, data)| kind == "session-created" && data["session_id"] == json!(marker))
    })
    .await
}

#[tokio::test]
async fn session_closed_is_the_last_event_of_a_session_on_the_bus() {
    let daemon = Daemon::start().await;
    let response = daemon.client.get(Daemon::url("/events")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let exits = create_id(&daemon, json!({})).await;
    let closed = create_id(&daemon, json!({})).await;
    write(&daemon, &exits, "echo bye; exit 0\n").await;
    assert_eq!(daemon.request(Method::DELETE, &format!("/sessions/{closed}"), None).await.0, StatusCode::OK);
    for id in [&exits, &closed] {
        wait_exited(&daemon, id).await;
        // A status read after the end ticks the agent engine past its silence threshold: the
        // moment a late `idle` would be published.
        wait_until("the ended shell reads as idle", DEADLINE, || async {
            let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
            (info["shell_state"] == json!("idle")).then_some(())
        })
        .await;
    }
    let marker = create_id(&daemon, json!({})).await;
    let events = events_until_created(response, &marker).await;
    for id in [&exits, &closed] {
        let of_session: Vec<&(u64, String, Value)> =
            events.iter().filter(|(_, _, data)| data["session_id"] == json!(id)).collect();
        let last = of_session.last().expect("events of the session");
        assert_eq!(last.1, "session-closed", "after session-closed: {:?}", of_session);
    }
}

fn body_json(response: &str) -> Value {
    serde_json::from_str(response.split_once("\r\n\r\n").map_or("", |(_, b)| b)).unwrap_or(Value::Null)
}

#[tokio::test]
async fn an_oversize_body_with_a_content_length_gets_the_documented_413_on_rest_and_mcp() {
    let daemon = Daemon::start().await;
    let big = vec![b' '; 2 * 1024 * 1024 + 1];
    let head = |path: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: tuic\r\nContent-Type: application/json\r\nAccept: application/json, \
             text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            big.len()
        )
    };
    let response = upload_raw(&daemon, head("/sessions"), &big).await;
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(response.to_ascii_lowercase().contains("content-type: application/json"), "{response}");
    assert_eq!(body_json(&response)["code"], json!("payload_too_large"), "{response}");
    assert!(daemon.get("/sessions").await.1.as_array().unwrap().is_empty(), "nothing was created");

    let response = upload_raw(&daemon, head("/mcp"), &big).await;
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    let rpc = body_json(&response);
    assert_eq!(rpc["jsonrpc"], json!("2.0"), "{response}");
    assert_eq!(rpc["error"]["code"], json!(-32600), "{response}");
    assert!(rpc["error"]["message"].as_str().unwrap().contains("byte limit"), "{response}");
}

#[tokio::test]
async fn the_session_limit_refusal_names_the_real_config_key() {
    let daemon = Daemon::builder().config(json!({"max_sessions": 1})).start().await;
    create(&daemon, json!({})).await;
    let (status, refused) = daemon.post("/sessions", json!({"shell": "/bin/sh"})).await;
    assert_eq!((status, refused["code"].clone()), (StatusCode::TOO_MANY_REQUESTS, json!("session_limit")));
    let message = refused["error"].as_str().unwrap();
    assert!(message.contains("max_sessions in config.json") && !message.contains("services."), "{message}");
}

#[tokio::test]
async fn an_env_name_that_is_not_a_shell_name_or_a_value_with_nul_is_refused_naming_the_field() {
    let daemon = Daemon::start().await;
    for (name, value, field) in [
        ("A\nB", "1", "env: \"A\\nB\""),
        ("LD_PRELOAD=x", "1", "env: \"LD_PRELOAD=x\""),
        ("1ABC", "1", "env: \"1ABC\""),
        ("", "1", "env: \"\""),
        ("A-B", "1", "env: \"A-B\""),
        ("OK_NAME", "a\0b", "env.OK_NAME"),
    ] {
        let body = json!({"shell": "/bin/sh", "cwd": "/", "env": {name: value}});
        let (status, refused) = daemon.post("/sessions", body).await;
        assert_eq!((status, refused["code"].clone()), (StatusCode::BAD_REQUEST, json!("invalid_field")), "{name:?}");
        let message = refused["error"].as_str().unwrap();
        assert!(message.contains(field), "{name:?}: {message}");
    }
    assert_eq!(daemon.get("/sessions").await.1, json!([]), "no refused create made a session");
    let id = create_id(&daemon, json!({"env": {"_Good_1": "x y"}})).await;
    write(&daemon, &id, "echo \"[$_Good_1]\"\n").await;
    wait_text(&daemon, &id, "[x y]").await;
}

#[tokio::test]
async fn query_string_errors_name_the_parameter_and_what_it_expects() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    for (query, field, value) in
        [("limit=abc", "limit", "abc"), ("since_cursor=x", "since_cursor", "x"), ("limit=-5", "limit", "-5")]
    {
        let (status, refused) = daemon.get(&format!("/sessions/{id}/output?{query}")).await;
        assert_eq!((status, refused["code"].clone()), (StatusCode::BAD_REQUEST, json!("invalid_field")), "{query}");
        let message = refused["error"].as_str().unwrap();
        assert!(message.contains(&format!("{field}: '{value}'")), "{query}: {message}");
        assert!(message.contains("expected a whole number"), "{query}: {message}");
    }
    let (_, refused) = daemon.get("/events?last_event_id=soon").await;
    assert!(refused["error"].as_str().unwrap().contains("last_event_id: 'soon'"), "{refused}");
}
