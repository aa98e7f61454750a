//! A tiny MCP client for the black-box tests: JSON-RPC over POST /mcp on the daemon's socket.

#![allow(dead_code)]

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::harness::{DEADLINE, Daemon, wait_until};

pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    pub(crate) fn session(&self) -> Option<String> {
        self.headers.get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned())
    }
}

/// POSTs raw bytes to /mcp with extra headers.
pub(crate) async fn post_raw(daemon: &Daemon, body: impl Into<reqwest::Body>, headers: &[(&str, &str)]) -> Reply {
    let mut req = daemon
        .client
        .post(Daemon::url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let response = req.send().await.expect("POST /mcp reaches tuicd");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.unwrap_or_default();
    Reply { status, headers, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) }
}

pub(crate) async fn rpc(daemon: &Daemon, method: &str, params: Value, headers: &[(&str, &str)]) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    post_raw(daemon, body.to_string(), headers).await
}

pub(crate) async fn initialize(daemon: &Daemon, headers: &[(&str, &str)]) -> Reply {
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "api-test", "version": "1"}});
    rpc(daemon, "initialize", params, headers).await
}

/// Calls a tool; returns `(isError, the JSON inside the text content)`.
pub(crate) async fn call_as(daemon: &Daemon, tool: &str, args: Value, headers: &[(&str, &str)]) -> (bool, Value) {
    let reply = rpc(daemon, "tools/call", json!({"name": tool, "arguments": args}), headers).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let result = &reply.body["result"];
    assert!(result.is_object(), "not a tool result: {}", reply.body);
    let text = result["content"][0]["text"].as_str().expect("text content");
    (result["isError"] == json!(true), serde_json::from_str(text).expect("compact JSON text"))
}

pub(crate) async fn call(daemon: &Daemon, tool: &str, args: Value) -> (bool, Value) {
    call_as(daemon, tool, args, &[]).await
}

/// Calls a tool that must succeed.
pub(crate) async fn ok(daemon: &Daemon, tool: &str, args: Value) -> Value {
    let (is_error, value) = call(daemon, tool, args.clone()).await;
    assert!(!is_error, "{tool} {args} failed: {value}");
    value
}

/// Calls a tool that must fail; returns its error sentence.
/// The session's whole text output, read with MCP `session action=output`.
pub(crate) async fn session_output(daemon: &Daemon, id: &str) -> String {
    let out = ok(daemon, "session", json!({"action": "output", "session_id": id, "limit": 100000})).await;
    out["data"].as_str().unwrap().to_owned()
}

/// Waits until [`session_output`] contains `needle`; returns that output.
pub(crate) async fn wait_session_output(daemon: &Daemon, id: &str, needle: &str) -> String {
    wait_until(&format!("'{needle}' in {id}"), DEADLINE, || async {
        let text = session_output(daemon, id).await;
        text.contains(needle).then_some(text)
    })
    .await
}

pub(crate) async fn fails(daemon: &Daemon, tool: &str, args: Value) -> String {
    let (is_error, value) = call(daemon, tool, args.clone()).await;
    assert!(is_error, "{tool} {args} should have failed: {value}");
    value["error"].as_str().unwrap().to_owned()
}

/// Opens `GET /mcp` for `session` and waits for its opening comment: from then on the stream
/// misses nothing.
pub(crate) async fn open_stream(
    daemon: &Daemon,
    session: &str,
) -> impl futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin + use<> {
    use futures_util::StreamExt;
    let response = daemon
        .client
        .get(Daemon::url("/mcp"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.bytes_stream();
    let first = tokio::time::timeout(crate::harness::DEADLINE, body.next()).await.unwrap().unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).starts_with(':'));
    body
}

/// Reads `stream` until `needle` has arrived, failing with `what` after the deadline.
pub(crate) async fn read_until(
    stream: &mut (impl futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    needle: &str,
    what: &str,
) {
    use futures_util::StreamExt;
    let mut seen = String::new();
    while !seen.contains(needle) {
        let chunk = tokio::time::timeout(crate::harness::DEADLINE, stream.next()).await.expect(what).unwrap().unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
}
