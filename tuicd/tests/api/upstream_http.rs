//! HTTP upstreams end to end: the real `@modelcontextprotocol/server-everything` in its
//! Streamable HTTP mode behind tuicd (listed, called, passed through exactly, progress forwarded,
//! killed mid-call), and a static bearer token presented on every request.

use std::convert::Infallible;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::harness::{DEADLINE, START_DEADLINE, free_port};
use crate::mcp_client::{open_stream, rpc};
use crate::upstream_util::{call_tool, listed_names, node_server, session, wait_status, with_upstreams};

/// server-everything serving Streamable HTTP on a free loopback port.
struct Everything {
    url: String,
    child: Child,
}

impl Everything {
    /// Starts server-everything; a port taken by someone else between `free_port` and node's
    /// bind makes node exit, so that start is retried on a fresh port.
    async fn start() -> Self {
        let script = node_server("server-everything");
        for _ in 0..3 {
            let port = free_port();
            let log = tempfile::NamedTempFile::new().unwrap();
            let mut child = Command::new("node")
                .arg(&script)
                .arg("streamableHttp")
                .env("PORT", port.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log.reopen().unwrap())
                .kill_on_drop(true)
                .spawn()
                .expect("node runs (install it, then `bash tests/interop/setup.sh`)");
            let address = format!("127.0.0.1:{port}");
            let started = tokio::time::Instant::now();
            loop {
                if tokio::net::TcpStream::connect(&address).await.is_ok() {
                    return Self { url: format!("http://{address}/mcp"), child };
                }
                if let Some(status) = child.try_wait().unwrap() {
                    eprintln!(
                        "server-everything on {port} exited ({status}): {}",
                        std::fs::read_to_string(log.path()).unwrap_or_default()
                    );
                    break;
                }
                assert!(
                    started.elapsed() < START_DEADLINE,
                    "server-everything not accepting on {port} after {START_DEADLINE:?}: {}",
                    std::fs::read_to_string(log.path()).unwrap_or_default()
                );
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
        panic!("server-everything exited on three fresh ports");
    }
}

/// The http upstream `name` at `url`.
fn http_upstream(name: &str, url: &str, auth: Option<Value>) -> Value {
    let mut server = json!({"id": name, "name": name, "transport": {"type": "http", "url": url}});
    if let Some(auth) = auth {
        server["auth"] = auth;
    }
    server
}

#[tokio::test]
async fn server_everything_over_http_is_listed_and_called_through_tuicd_exactly() {
    let everything = Everything::start().await;
    let daemon = with_upstreams(&[http_upstream("every", &everything.url, None)]).start().await;
    let status = wait_status(&daemon, "every", "ready").await;
    let tools: Vec<&str> = status["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"echo") && tools.contains(&"get-sum"), "{status}");
    assert_eq!(status["transport"], json!({"type": "http", "url": everything.url}));

    let session = session(&daemon).await;
    let names = listed_names(&daemon, &session).await;
    assert!(names.iter().any(|n| n == "every__echo"), "{names:?}");

    let echo = call_tool(&daemon, &session, "every__echo", json!({"message": "through tuicd"})).await;
    assert_eq!(echo["result"], json!({"content": [{"type": "text", "text": "Echo: through tuicd"}]}), "{echo}");
    let sum = call_tool(&daemon, &session, "every__get-sum", json!({"a": 2, "b": 40})).await;
    assert_eq!(sum["result"], json!({"content": [{"type": "text", "text": "The sum of 2 and 40 is 42."}]}), "{sum}");
    let structured =
        call_tool(&daemon, &session, "every__get-structured-content", json!({"location": "New York"})).await;
    assert!(structured["result"]["structuredContent"].is_object(), "structured content passes through: {structured}");
}

/// Reads the caller's GET stream until `count` progress notifications with `token` arrived.
async fn read_progress(
    stream: &mut (impl futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    token: &str,
    count: usize,
) -> Vec<Value> {
    use futures_util::StreamExt;
    let mut text = String::new();
    loop {
        let progress: Vec<Value> = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .filter(|m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == token)
            .collect();
        if progress.len() >= count {
            return progress;
        }
        let chunk = tokio::time::timeout(DEADLINE, stream.next()).await;
        let chunk = chunk.unwrap_or_else(|_| panic!("{count} progress notifications for {token}; got: {text}"));
        text.push_str(&String::from_utf8_lossy(&chunk.unwrap().unwrap()));
    }
}

#[tokio::test]
async fn a_long_running_http_tool_reports_progress_to_the_caller() {
    let everything = Everything::start().await;
    let daemon = with_upstreams(&[http_upstream("every", &everything.url, None)]).start().await;
    wait_status(&daemon, "every", "ready").await;
    let session = session(&daemon).await;
    let mut stream = open_stream(&daemon, &session).await;
    let params = json!({"name": "every__trigger-long-running-operation", "arguments": {"duration": 1, "steps": 3},
        "_meta": {"progressToken": "mine-7"}});
    let answer = rpc(&daemon, "tools/call", params, &[("mcp-session-id", &session)]).await.body;
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Long running operation completed"), "{answer}");
    let progress = read_progress(&mut stream, "mine-7", 3).await;
    let values: Vec<f64> = progress.iter().map(|p| p["params"]["progress"].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "progress never goes back: {values:?}");
}

#[tokio::test]
async fn killing_the_http_upstream_mid_call_fails_that_call_clearly_and_native_tools_keep_working() {
    let mut everything = Everything::start().await;
    let daemon = with_upstreams(&[http_upstream("every", &everything.url, None)]).start().await;
    wait_status(&daemon, "every", "ready").await;
    let session = session(&daemon).await;
    let mut stream = open_stream(&daemon, &session).await;
    let params = json!({"name": "every__trigger-long-running-operation", "arguments": {"duration": 30, "steps": 30},
        "_meta": {"progressToken": "doomed"}});
    let headers = [("mcp-session-id", session.as_str())];
    let long = rpc(&daemon, "tools/call", params, &headers);
    let kill = async {
        read_progress(&mut stream, "doomed", 1).await;
        everything.child.kill().await.unwrap();
    };
    let (answer, ()) = tokio::time::timeout(DEADLINE, futures_util::future::join(long, kill)).await.expect("answered");
    let answer = answer.body;
    let failed = answer["result"]["isError"] == true || answer.get("error").is_some();
    assert!(failed, "the killed call fails: {answer}");
    assert!(answer.to_string().contains("every"), "the error names the upstream: {answer}");

    let native = rpc(&daemon, "tools/list", json!({}), &[("mcp-session-id", &session)]).await;
    assert!(native.body["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{}", native.body);
    let (status, health) = daemon.get("/health").await;
    assert_eq!(status, reqwest::StatusCode::OK, "{health}");
}

/// A minimal Streamable HTTP server that records the Authorization header of every request.
async fn recording_server(seen: Arc<Mutex<Vec<Option<String>>>>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = seen.clone();
            let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let seen = seen.clone();
                async move {
                    let authorization =
                        request.headers().get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
                    seen.lock().unwrap().push(authorization);
                    let get = request.method() == hyper::Method::GET;
                    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let result = match message["method"].as_str() {
                        Some("initialize") => json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                            "serverInfo": {"name": "recording", "version": "1"}}),
                        Some("tools/list") => json!({"tools": [{"name": "noop", "inputSchema": {"type": "object"}}]}),
                        _ => json!({}),
                    };
                    let response = if get {
                        hyper::Response::builder().status(405).body(Full::new(Bytes::new()))
                    } else if message.get("id").is_none() {
                        hyper::Response::builder().status(202).body(Full::new(Bytes::new()))
                    } else {
                        let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                        hyper::Response::builder()
                            .header("content-type", "application/json")
                            .header("mcp-session-id", "rec-1")
                            .body(Full::new(Bytes::from(answer.to_string())))
                    };
                    Ok::<_, Infallible>(response.unwrap())
                }
            });
            tokio::spawn(hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    url
}

#[tokio::test]
async fn a_static_bearer_token_is_presented_on_every_request() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = recording_server(seen.clone()).await;
    let auth = json!({"type": "bearer", "token": "s3cret-token"});
    let daemon = with_upstreams(&[http_upstream("rec", &url, Some(auth))]).start().await;
    let status = wait_status(&daemon, "rec", "ready").await;
    assert_eq!(status["tools"], json!(["noop"]));
    let session = session(&daemon).await;
    let answer = call_tool(&daemon, &session, "rec__noop", json!({})).await;
    assert!(answer.get("result").is_some(), "{answer}");
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() >= 4, "initialize, initialized, tools/list, tools/call: {seen:?}");
    assert!(seen.iter().all(|a| a.as_deref() == Some("Bearer s3cret-token")), "{seen:?}");
    assert!(!daemon.log().contains("s3cret-token"), "the token never reaches the log");
}

#[tokio::test]
async fn a_dead_http_upstream_leaves_ready_after_three_failed_calls_not_at_the_next_health_check() {
    let mut everything = Everything::start().await;
    let daemon = with_upstreams(&[http_upstream("every", &everything.url, None)]).start().await;
    wait_status(&daemon, "every", "ready").await;
    let session = session(&daemon).await;
    everything.child.kill().await.unwrap();
    for _ in 0..3 {
        let failed = call_tool(&daemon, &session, "every__echo", json!({"message": "anyone?"})).await;
        assert!(failed["result"]["isError"] == true || failed.get("error").is_some(), "{failed}");
    }
    // Well inside the 60 s health interval: the calls' failures opened the breaker.
    let status = crate::harness::wait_until("the upstream leaves ready", std::time::Duration::from_secs(5), || async {
        let status = crate::upstream_util::upstream(&daemon, "every").await;
        (status["status"] != "ready").then_some(status)
    })
    .await;
    assert!(status["last_error"].as_str().is_some_and(|e| !e.is_empty()), "{status}");
}
