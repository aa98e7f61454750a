//! HTTP upstreams end to end: the real `@modelcontextprotocol/server-everything` in its
//! Streamable HTTP mode behind tuicd (listed, called, passed through exactly, progress forwarded,
//! killed mid-call), and a static bearer token presented on every request.

use std::convert::Infallible;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::process::{Child, Command};

use crate::harness::{DEADLINE, Daemon, free_port, wait_until};
use crate::mcp_client::{initialize, rpc};

/// server-everything serving Streamable HTTP on a free loopback port.
struct Everything {
    url: String,
    child: Child,
}

impl Everything {
    async fn start() -> Self {
        let tests = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests");
        let script = tests.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        assert!(script.exists(), "{} is missing: run `bash tests/interop/setup.sh`", script.display());
        let port = free_port();
        let child = Command::new("node")
            .arg(&script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs (install it, then `bash tests/interop/setup.sh`)");
        let address = format!("127.0.0.1:{port}");
        wait_until("server-everything accepts connections", DEADLINE, || async {
            tokio::net::TcpStream::connect(&address).await.ok().map(|_| ())
        })
        .await;
        Self { url: format!("http://{address}/mcp"), child }
    }
}

/// A config dir holding `mcp-upstreams.json` with the one http upstream `name` at `url`.
fn upstreams_dir(name: &str, url: &str, auth: Option<Value>) -> TempDir {
    let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();
    let mut server = json!({"id": name, "name": name, "transport": {"type": "http", "url": url}});
    if let Some(auth) = auth {
        server["auth"] = auth;
    }
    let file = json!({"servers": [server]});
    std::fs::write(dir.path().join("mcp-upstreams.json"), file.to_string()).unwrap();
    dir
}

/// Waits until the upstream `name` reports `status`; returns its status entry.
async fn wait_status(daemon: &Daemon, name: &str, status: &str) -> Value {
    wait_until(&format!("upstream {name} {status}"), DEADLINE, || async {
        let (_, body) = daemon.get("/mcp/upstream-status").await;
        let entry = body["upstreams"].as_array()?.iter().find(|u| u["name"] == name)?.clone();
        (entry["status"] == status).then_some(entry)
    })
    .await
}

async fn session(daemon: &Daemon) -> String {
    initialize(daemon, &[]).await.session().expect("an MCP session id")
}

/// `tools/call` through tuicd's `/mcp`; the whole JSON-RPC response.
async fn call(daemon: &Daemon, session: &str, name: &str, arguments: Value) -> Value {
    rpc(daemon, "tools/call", json!({"name": name, "arguments": arguments}), &[("mcp-session-id", session)]).await.body
}

#[tokio::test]
async fn server_everything_over_http_is_listed_and_called_through_tuicd_exactly() {
    let everything = Everything::start().await;
    let daemon = Daemon::builder().dir(upstreams_dir("every", &everything.url, None)).start().await;
    let status = wait_status(&daemon, "every", "ready").await;
    let tools: Vec<&str> = status["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"echo") && tools.contains(&"get-sum"), "{status}");
    assert_eq!(status["transport"], json!({"type": "http", "url": everything.url}));

    let session = session(&daemon).await;
    let listed = rpc(&daemon, "tools/list", json!({}), &[("mcp-session-id", &session)]).await.body;
    let names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"every__echo"), "{names:?}");

    let echo = call(&daemon, &session, "every__echo", json!({"message": "through tuicd"})).await;
    assert_eq!(echo["result"], json!({"content": [{"type": "text", "text": "Echo: through tuicd"}]}), "{echo}");
    let sum = call(&daemon, &session, "every__get-sum", json!({"a": 2, "b": 40})).await;
    assert_eq!(sum["result"], json!({"content": [{"type": "text", "text": "The sum of 2 and 40 is 42."}]}), "{sum}");
    let structured = call(&daemon, &session, "every__get-structured-content", json!({"location": "New York"})).await;
    assert!(structured["result"]["structuredContent"].is_object(), "structured content passes through: {structured}");
}

#[tokio::test]
async fn a_long_running_http_tool_reports_progress_to_the_caller() {
    let everything = Everything::start().await;
    let daemon = Daemon::builder().dir(upstreams_dir("every", &everything.url, None)).start().await;
    wait_status(&daemon, "every", "ready").await;
    let session = session(&daemon).await;
    let params = json!({"name": "every__trigger-long-running-operation", "arguments": {"duration": 1, "steps": 3},
        "_meta": {"progressToken": "mine-7"}});
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params});
    let response = daemon
        .client
        .post(Daemon::url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let text = tokio::time::timeout(DEADLINE, response.text()).await.expect("the call answers").unwrap();
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect();
    let progress: Vec<&Value> = messages.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert!(progress.len() >= 3, "three steps of progress: {text}");
    assert!(progress.iter().all(|p| p["params"]["progressToken"] == "mine-7"), "the caller's own token: {text}");
    let result = messages.iter().find(|m| m["id"] == 9).expect("the response after the progress");
    assert!(result["result"]["content"][0]["text"].as_str().unwrap().contains("Long running operation completed"));
}

#[tokio::test]
async fn killing_the_http_upstream_mid_call_fails_that_call_clearly_and_native_tools_keep_working() {
    let mut everything = Everything::start().await;
    let daemon = Daemon::builder().dir(upstreams_dir("every", &everything.url, None)).start().await;
    wait_status(&daemon, "every", "ready").await;
    let session = session(&daemon).await;
    let long = call(&daemon, &session, "every__trigger-long-running-operation", json!({"duration": 30, "steps": 30}));
    let kill = async {
        wait_until("the call reaches the upstream", DEADLINE, || async {
            let (_, body) = daemon.get("/mcp/upstream-status").await;
            (body["upstreams"][0]["metrics"]["call_count"].as_u64() >= Some(1)).then_some(())
        })
        .await;
        everything.child.kill().await.unwrap();
    };
    let (answer, ()) = tokio::time::timeout(DEADLINE, futures_util::future::join(long, kill)).await.expect("answered");
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
    let daemon = Daemon::builder().dir(upstreams_dir("rec", &url, Some(auth))).start().await;
    let status = wait_status(&daemon, "rec", "ready").await;
    assert_eq!(status["tools"], json!(["noop"]));
    let session = session(&daemon).await;
    let answer = call(&daemon, &session, "rec__noop", json!({})).await;
    assert!(answer.get("result").is_some(), "{answer}");
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() >= 4, "initialize, initialized, tools/list, tools/call: {seen:?}");
    assert!(seen.iter().all(|a| a.as_deref() == Some("Bearer s3cret-token")), "{seen:?}");
    assert!(!daemon.log().contains("s3cret-token"), "the token never reaches the log");
}
