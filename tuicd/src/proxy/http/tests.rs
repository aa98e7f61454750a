//! The client against the scripted server in `test_server`: JSON and SSE answers, the session
//! id, re-initializing after a 404, the 401 recovery, a broken stream resumed, cancellation.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::HttpClient;
use super::test_server::{Reply, Seen, TestServer, json, json_with_session, sse, sse_then_hold, status};
use crate::proxy::config::{Transport, UpstreamServer};
use crate::proxy::wire::{BearerSource, BoxFuture, ConnectCtx, RequestOpts, StaticBearer, UpstreamError};

const WAIT: Duration = Duration::from_secs(10);

fn server_entry(url: &str) -> UpstreamServer {
    UpstreamServer {
        id: "t".into(),
        name: "t".into(),
        transport: Transport::Http { url: url.into() },
        enabled: true,
        timeout_secs: 10,
        tool_filter: None,
        tool_aliases: Default::default(),
        auth: None,
    }
}

fn ctx(bearer: Option<Arc<dyn BearerSource>>) -> (ConnectCtx, mpsc::Receiver<Value>) {
    let (notifications, receiver) = mpsc::channel(8);
    (ConnectCtx { notifications, bearer, name: "t".into(), stderr_log: None }, receiver)
}

async fn connect(server: &TestServer) -> (HttpClient, mpsc::Receiver<Value>) {
    let (ctx, receiver) = ctx(None);
    let (client, _) = HttpClient::connect(&server_entry(&server.url), ctx).await.expect("connects");
    (client, receiver)
}

/// What every scripted server answers the same way: initialize (session `session`),
/// notifications and responses (202), DELETE (200), and no GET stream (405).
fn basics(seen: &Seen, session: &str) -> Option<Reply> {
    if seen.method == Method::GET {
        return Some(status(StatusCode::METHOD_NOT_ALLOWED, &[]));
    }
    if seen.method == Method::DELETE {
        return Some(status(StatusCode::OK, &[]));
    }
    if seen.rpc() == "initialize" {
        let result =
            json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "scripted"}});
        return Some(json_with_session(json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": result}), session));
    }
    if seen.body.get("id").is_none() || seen.body.get("method").is_none() {
        return Some(status(StatusCode::ACCEPTED, &[]));
    }
    None
}

fn answer(seen: &Seen, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": result})
}

fn opts() -> RequestOpts {
    RequestOpts::within(WAIT)
}

#[tokio::test]
async fn json_answers_carry_the_session_id_and_the_negotiated_version() {
    let server = TestServer::start(|seen| {
        basics(seen, "s1").unwrap_or_else(|| json(answer(seen, json!({"tools": [{"name": "echo"}]}))))
    })
    .await;
    let (ctx, _notifications) = ctx(None);
    let (client, handshake) = HttpClient::connect(&server_entry(&server.url), ctx).await.unwrap();
    assert_eq!(handshake.protocol_version, "2025-06-18");
    assert_eq!(handshake.server_info["name"], "scripted");

    let result = client.request("tools/list", json!({}), opts()).await.unwrap();
    assert_eq!(result, json!({"tools": [{"name": "echo"}]}));
    let list = server.seen().into_iter().find(|s| s.rpc() == "tools/list").unwrap();
    assert_eq!(list.header("mcp-session-id"), Some("s1"));
    assert_eq!(list.header("mcp-protocol-version"), Some("2025-06-18"));
    let initialized = server.seen().into_iter().find(|s| s.rpc() == "notifications/initialized").unwrap();
    assert_eq!(initialized.header("mcp-session-id"), Some("s1"));

    client.close().await;
    let delete = server.wait_for("DELETE", WAIT, |s| s.method == Method::DELETE).await;
    assert_eq!(delete.header("mcp-session-id"), Some("s1"));
    let after = client.request("tools/list", json!({}), opts()).await;
    assert!(matches!(after, Err(UpstreamError::Closed(_))), "{after:?}");
}

#[tokio::test]
async fn an_sse_answer_hands_related_notifications_to_the_caller_before_the_result() {
    let server = TestServer::start(|seen| {
        basics(seen, "s1").unwrap_or_else(|| {
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 5, "progress": 1}});
            let error = json!({"jsonrpc": "2.0", "id": seen.body["id"], "error": {"code": -32602, "message": "bad args"}});
            sse(&format!(": hello\n\nevent: message\ndata: {progress}\n\ndata: {error}\n\n"))
        })
    })
    .await;
    let (client, mut unrelated) = connect(&server).await;
    let (related, mut received) = mpsc::channel(4);
    let outcome = client.request("tools/call", json!({}), RequestOpts { timeout: WAIT, related: Some(related) }).await;
    assert_eq!(outcome, Err(UpstreamError::Rpc { code: -32602, message: "bad args".into(), data: None }));
    assert_eq!(received.try_recv().unwrap()["method"], "notifications/progress");
    assert!(unrelated.try_recv().is_err(), "the related notification went to the caller only");
}

#[tokio::test]
async fn a_404_for_the_session_re_initializes_once_and_retries() {
    let initializes = Arc::new(AtomicUsize::new(0));
    let count = initializes.clone();
    let server = TestServer::start(move |seen| {
        if seen.rpc() == "initialize" {
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            return basics(seen, &format!("s{n}")).unwrap();
        }
        if let Some(reply) = basics(seen, "") {
            return reply;
        }
        match seen.header("mcp-session-id") {
            Some("s2") => json(answer(seen, json!({"ok": true}))),
            _ => status(StatusCode::NOT_FOUND, &[]),
        }
    })
    .await;
    let (client, _notifications) = connect(&server).await;
    let result = client.request("tools/list", json!({}), opts()).await.unwrap();
    assert_eq!(result, json!({"ok": true}));
    assert_eq!(initializes.load(Ordering::SeqCst), 2);
}

/// A bearer source whose current credential the server refuses and whose recovery is accepted.
#[derive(Debug)]
struct Rotating;

impl BearerSource for Rotating {
    fn current(&self) -> Option<String> {
        Some("old".into())
    }
    fn recover<'a>(&'a self, rejected: Option<&'a str>) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move { (rejected == Some("old")).then(|| "new".to_owned()) })
    }
}

async fn guarded(challenge: &'static str) -> TestServer {
    TestServer::start(move |seen| {
        if seen.header("authorization") != Some("Bearer new") {
            return status(StatusCode::UNAUTHORIZED, &[("www-authenticate", challenge)]);
        }
        basics(seen, "s1").unwrap_or_else(|| json(answer(seen, json!({}))))
    })
    .await
}

#[tokio::test]
async fn a_401_is_recovered_once_then_named_by_its_challenge() {
    let challenge = r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource""#;
    let server = guarded(challenge).await;
    let (ctx_ok, _n) = ctx(Some(Arc::new(Rotating)));
    let (client, _) =
        HttpClient::connect(&server_entry(&server.url), ctx_ok).await.expect("the recovered token is accepted");
    client.request("ping", Value::Null, opts()).await.unwrap();
    let presented: Vec<_> = server.seen().iter().map(|s| s.header("authorization").map(str::to_owned)).collect();
    assert!(presented.iter().all(Option::is_some), "a credential on every attempt: {presented:?}");

    let (ctx_static, _n) = ctx(Some(Arc::new(StaticBearer("wrong".into()))));
    let refused = HttpClient::connect(&server_entry(&server.url), ctx_static).await.err();
    assert_eq!(refused, Some(UpstreamError::NeedsOAuth { www_authenticate: challenge.into() }));

    let basic = guarded("Basic realm=\"x\"").await;
    let (ctx_none, _n) = ctx(None);
    let refused = HttpClient::connect(&server_entry(&basic.url), ctx_none).await.err();
    assert!(matches!(refused, Some(UpstreamError::AuthFailed(_))), "{refused:?}");
}

#[tokio::test]
async fn a_403_insufficient_scope_is_typed_with_its_challenge_and_any_other_403_is_not() {
    let server = TestServer::start(|seen| {
        if let Some(reply) = basics(seen, "s1") {
            return reply;
        }
        match seen.rpc() {
            "tools/call" => status(
                StatusCode::FORBIDDEN,
                &[(
                    "www-authenticate",
                    r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://h/prm""#,
                )],
            ),
            _ => status(StatusCode::FORBIDDEN, &[("www-authenticate", r#"Bearer error="invalid_token""#)]),
        }
    })
    .await;
    let (ctx, _n) = ctx(None);
    let (client, _) = HttpClient::connect(&server_entry(&server.url), ctx).await.unwrap();
    let call = client.request("tools/call", json!({}), opts()).await;
    let expected =
        UpstreamError::InsufficientScope { scope: Some("a b".into()), resource_metadata: Some("http://h/prm".into()) };
    assert_eq!(call, Err(expected));
    let other = client.request("tools/list", json!({}), opts()).await;
    assert!(matches!(&other, Err(UpstreamError::Io(e)) if e.contains("403")), "{other:?}");
}

#[tokio::test]
async fn a_response_stream_that_breaks_is_resumed_with_last_event_id_after_retry() {
    let server = TestServer::start(|seen| {
        if seen.method == Method::GET && seen.header("last-event-id") == Some("p1") {
            let result = json!({"jsonrpc": "2.0", "id": 2, "result": {"resumed": true}});
            return sse(&format!("id: r1\ndata: {result}\n\n"));
        }
        basics(seen, "s1").unwrap_or_else(|| sse("id: p1\nretry: 50\ndata: \n\n"))
    })
    .await;
    let (client, _notifications) = connect(&server).await;
    let result = client.request("tools/call", json!({}), opts()).await.unwrap();
    assert_eq!(result, json!({"resumed": true}));
    let resume = server.seen().into_iter().find(|s| s.header("last-event-id").is_some()).unwrap();
    assert_eq!(resume.header("mcp-session-id"), Some("s1"));
}

#[tokio::test]
async fn a_stream_that_ends_without_ids_or_the_response_is_a_clear_error() {
    let server = TestServer::start(|seen| basics(seen, "s1").unwrap_or_else(|| sse(": nothing\n\n"))).await;
    let (client, _notifications) = connect(&server).await;
    let outcome = client.request("tools/call", json!({}), opts()).await;
    assert_eq!(outcome, Err(UpstreamError::Closed("the response stream ended before the response".into())));
}

#[tokio::test]
async fn a_timeout_cancels_the_request_upstream() {
    let server = TestServer::start(|seen| basics(seen, "s1").unwrap_or_else(|| sse_then_hold(": working\n\n"))).await;
    let (client, _notifications) = connect(&server).await;
    let timeout = Duration::from_millis(200);
    let outcome = client.request("tools/call", json!({}), RequestOpts::within(timeout)).await;
    assert_eq!(outcome, Err(UpstreamError::Timeout(timeout)));
    let call = server.seen().into_iter().find(|s| s.rpc() == "tools/call").unwrap();
    let cancel = server.wait_for("cancellation", WAIT, |s| s.rpc() == "notifications/cancelled").await;
    assert_eq!(cancel.body["params"]["requestId"], call.body["id"]);
    assert_eq!(cancel.header("mcp-session-id"), Some("s1"));
}

#[tokio::test]
async fn the_get_stream_hands_on_notifications_and_requests_and_a_ping_is_answered_at_once() {
    let server = TestServer::start(|seen| {
        if seen.method == Method::GET {
            let ping = json!({"jsonrpc": "2.0", "id": "srv-0", "method": "ping"});
            let sampling = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "sampling/createMessage", "params": {}});
            let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
            return sse_then_hold(&format!("data: {ping}\n\ndata: {sampling}\n\ndata: {changed}\n\n"));
        }
        basics(seen, "s1").unwrap()
    })
    .await;
    let (client, mut notifications) = connect(&server).await;
    let pong = server.wait_for("answer to ping", WAIT, |s| s.body["id"] == "srv-0").await;
    assert_eq!(pong.body["result"], json!({}));
    let request = tokio::time::timeout(WAIT, notifications.recv()).await.unwrap().unwrap();
    assert_eq!((request["id"].clone(), request["method"].clone()), (json!("srv-1"), json!("sampling/createMessage")));
    let message = tokio::time::timeout(WAIT, notifications.recv()).await.unwrap().unwrap();
    assert_eq!(message["method"], "notifications/tools/list_changed");
    // The registry answers the request; the answer is POSTed in the session.
    client.respond(&json!({"jsonrpc": "2.0", "id": "srv-1", "result": {"model": "m"}})).await.unwrap();
    let answer = server.wait_for("answer to sampling", WAIT, |s| s.body["id"] == "srv-1").await;
    assert_eq!(answer.body["result"]["model"], "m");
    assert_eq!(answer.header("mcp-session-id"), Some("s1"));
    assert_eq!(client.dropped_notifications(), 0);
    client.close().await;
    assert!(notifications.recv().await.is_none(), "close ends the connection's queue");
}

#[tokio::test]
async fn a_caller_that_goes_away_cancels_the_request_upstream() {
    let server = TestServer::start(|seen| basics(seen, "s1").unwrap_or_else(|| sse_then_hold(": working\n\n"))).await;
    let (client, _notifications) = connect(&server).await;
    let abandoned = tokio::time::timeout(Duration::from_millis(200), client.request("tools/call", json!({}), opts()));
    assert!(abandoned.await.is_err(), "the caller gave up first");
    let cancel = server.wait_for("cancellation", WAIT, |s| s.rpc() == "notifications/cancelled").await;
    assert_eq!(cancel.body["params"]["reason"], "the client went away");
}

/// A bearer source whose credential changes between requests, as after a re-authorization.
#[derive(Debug, Default)]
struct Stored(std::sync::Mutex<String>);

impl BearerSource for Stored {
    fn current(&self) -> Option<String> {
        Some(self.0.lock().unwrap().clone())
    }
    fn recover<'a>(&'a self, _rejected: Option<&'a str>) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }
}

#[tokio::test]
async fn the_bearer_credential_is_read_again_for_every_request() {
    let server = TestServer::start(|seen| basics(seen, "s1").unwrap_or_else(|| json(answer(seen, json!({}))))).await;
    let stored = Arc::new(Stored(std::sync::Mutex::new("first".into())));
    let (ctx, _notifications) = ctx(Some(stored.clone()));
    let (client, _) = HttpClient::connect(&server_entry(&server.url), ctx).await.unwrap();
    *stored.0.lock().unwrap() = "second".into();
    client.request("tools/list", json!({}), opts()).await.unwrap();
    let list = server.seen().into_iter().find(|s| s.rpc() == "tools/list").unwrap();
    assert_eq!(list.header("authorization"), Some("Bearer second"));
}
