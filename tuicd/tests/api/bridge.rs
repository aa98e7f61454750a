//! tuic-bridge between a stdio client and the real daemon: forwarding, identity, notifications,
//! offline answers and recovery across a daemon restart (with the client's initialize replayed).

use std::path::PathBuf;
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use crate::harness::*;
use crate::mcp_client::ok;

/// The native tools `tools/list` shows by default.
const NATIVE_TOOLS: [&str; 5] = ["session", "agent", "task", "progress", "repo"];

/// The bridge binary: `TUIC_BRIDGE_BIN`, else beside tuicd in the target dir (built by
/// `cargo test -p tuicd -p tuic-bridge`, which builds every target before running tests).
fn bridge_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("TUIC_BRIDGE_BIN") {
        return PathBuf::from(path);
    }
    let path = PathBuf::from(env!("CARGO_BIN_EXE_tuicd")).with_file_name("tuic-bridge");
    assert!(path.exists(), "{} is missing: run `cargo test -p tuicd -p tuic-bridge`", path.display());
    path
}

struct Bridge {
    _child: Child,
    stdin: ChildStdin,
    lines: mpsc::UnboundedReceiver<Value>,
    next_id: u64,
}

impl Bridge {
    fn start(daemon: &Daemon, tuic_session: Option<&str>) -> Bridge {
        let mut command = Command::new(bridge_bin());
        command
            .env("TUIC_SOCKET", &daemon.socket)
            .env("TUIC_BRIDGE_PING_MS", "200")
            .env_remove("TUIC_SESSION")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        if let Some(t) = tuic_session {
            command.env("TUIC_SESSION", t);
        }
        let mut child = command.spawn().expect("spawn tuic-bridge");
        let stdin = child.stdin.take().unwrap();
        let mut reader = BufReader::new(child.stdout.take().unwrap()).lines();
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = reader.next_line().await {
                let _ = tx.send(serde_json::from_str(&line).expect("the bridge writes one JSON message per line"));
            }
        });
        Bridge { _child: child, stdin, lines, next_id: 0 }
    }

    /// Sends a request and returns its answer; notifications that arrive first are kept aside.
    async fn ask(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string() + "\n";
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        loop {
            let message = tokio::time::timeout(DEADLINE, self.lines.recv()).await.expect("an answer").unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    async fn expect_notification(&mut self, method: &str) {
        loop {
            let message = tokio::time::timeout(DEADLINE, self.lines.recv())
                .await
                .unwrap_or_else(|_| panic!("no {method} within {DEADLINE:?}"))
                .unwrap();
            if message["method"] == json!(method) {
                return;
            }
        }
    }

    async fn initialize(&mut self) -> Value {
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bridge-test-client", "version": "1"}});
        let answer = self.ask("initialize", params).await;
        self.stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.unwrap();
        answer
    }

    async fn tool_names(&mut self) -> Vec<String> {
        let listed = self.ask("tools/list", json!({})).await;
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    }
}

fn call_text(answer: &Value) -> (bool, Value) {
    let result = &answer["result"];
    (result["isError"] == json!(true), serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap())
}

#[tokio::test]
async fn a_stdio_client_reaches_the_session_tool_through_the_bridge_with_its_identity() {
    let daemon = Daemon::start().await;
    let created = ok(&daemon, "session", json!({"action": "create", "shell": "/bin/sh"})).await;
    let tuic = created["tuic_session"].as_str().unwrap();
    let mut bridge = Bridge::start(&daemon, Some(tuic));
    let init = bridge.initialize().await;
    assert_eq!(init["result"]["serverInfo"]["name"], json!("tuicd"));
    assert_eq!(bridge.tool_names().await, NATIVE_TOOLS);
    let (is_error, list) =
        call_text(&bridge.ask("tools/call", json!({"name": "session", "arguments": {"action": "list"}})).await);
    assert!(!is_error);
    assert_eq!(list[0]["is_caller"], json!(true), "x-tuic-session from $TUIC_SESSION: {list}");
    let discover = bridge.ask("server/discover", json!({})).await;
    assert_eq!(discover["error"]["code"], json!(-32601));
    let log = daemon.log();
    assert!(log.contains("bridge-test-client"), "the client's own initialize reached tuicd");
}

#[tokio::test]
async fn the_bridge_forwards_notifications_and_reports_an_endpoint_that_is_off() {
    let daemon = Daemon::start().await;
    let mut bridge = Bridge::start(&daemon, None);
    bridge.initialize().await;
    daemon.put("/config", json!({"disabled_native_tools": NATIVE_TOOLS})).await;
    bridge.expect_notification("notifications/tools/list_changed").await;
    assert!(bridge.tool_names().await.is_empty());
    daemon.put("/config", json!({"disabled_native_tools": [], "mcp_server_enabled": false})).await;
    bridge.expect_notification("notifications/tools/list_changed").await;
    let (is_error, error) =
        call_text(&bridge.ask("tools/call", json!({"name": "session", "arguments": {"action": "list"}})).await);
    assert!(is_error);
    assert!(error["error"].as_str().unwrap().contains("MCP endpoint is unavailable"), "{error}");
    daemon.put("/config", json!({"mcp_server_enabled": true})).await;
    bridge.expect_notification("notifications/tools/list_changed").await;
    assert_eq!(bridge.tool_names().await, NATIVE_TOOLS);
}

#[tokio::test]
async fn the_bridge_answers_offline_while_tuicd_is_down_and_recovers_after_a_restart() {
    let daemon = Daemon::start().await;
    let mut bridge = Bridge::start(&daemon, None);
    bridge.initialize().await;
    assert_eq!(bridge.tool_names().await, NATIVE_TOOLS);
    let dir = daemon.into_dir().await;
    bridge.expect_notification("notifications/tools/list_changed").await;
    assert!(bridge.tool_names().await.is_empty());
    let (is_error, error) =
        call_text(&bridge.ask("tools/call", json!({"name": "session", "arguments": {"action": "list"}})).await);
    assert!(is_error && error["error"].as_str().unwrap().contains("tuicd is not running"), "{error}");
    assert_eq!(bridge.ask("ping", json!({})).await["result"], json!({}));
    let daemon = Daemon::builder().dir(dir).start().await;
    bridge.expect_notification("notifications/tools/list_changed").await;
    assert_eq!(bridge.tool_names().await, NATIVE_TOOLS);
    let (is_error, _) =
        call_text(&bridge.ask("tools/call", json!({"name": "session", "arguments": {"action": "list"}})).await);
    assert!(!is_error);
    // The restarted daemon saw the client's own initialize, replayed by the bridge under the old
    // session id, which it no longer holds: logged as `reconnected`.
    wait_until("the replayed initialize in the new daemon's log", DEADLINE, || async {
        let log = daemon.log();
        let since_restart = log.rsplit("IPC listener bound").next().unwrap_or("");
        let replayed = since_restart.lines().any(|l| l.contains("bridge-test-client") && l.contains("reconnected"));
        replayed.then_some(())
    })
    .await;
}
