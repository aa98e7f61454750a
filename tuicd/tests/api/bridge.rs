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
const NATIVE_TOOLS: [&str; 7] = ["session", "agent", "task", "progress", "repo", "ui", "plugin_dev_guide"];

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
    /// The bridge's debug log lines, when started with [`Bridge::start_logged`].
    log: Option<mpsc::UnboundedReceiver<String>>,
    next_id: u64,
}

impl Bridge {
    fn start(daemon: &Daemon, tuic_session: Option<&str>) -> Bridge {
        Self::spawn(daemon, tuic_session, false)
    }

    /// A bridge logging at debug level to a pipe the test reads ([`Bridge::expect_log`]).
    fn start_logged(daemon: &Daemon) -> Bridge {
        Self::spawn(daemon, None, true)
    }

    fn spawn(daemon: &Daemon, tuic_session: Option<&str>, logged: bool) -> Bridge {
        let mut command = Command::new(bridge_bin());
        command
            .env("TUIC_SOCKET", &daemon.socket)
            .env("TUIC_BRIDGE_PING_MS", "200")
            .env("TUIC_BRIDGE_LOG", "tuic_bridge=debug")
            .env_remove("TUIC_SESSION")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if logged { Stdio::piped() } else { Stdio::null() })
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
        let log = child.stderr.take().map(|stderr| {
            let mut reader = BufReader::new(stderr).lines();
            let (tx, log) = mpsc::unbounded_channel();
            tokio::spawn(async move {
                while let Ok(Some(line)) = reader.next_line().await {
                    let _ = tx.send(line);
                }
            });
            log
        });
        Bridge { _child: child, stdin, lines, log, next_id: 0 }
    }

    /// Waits for a log line containing `text`.
    async fn expect_log(&mut self, text: &str) {
        let log = self.log.as_mut().expect("a bridge started with start_logged");
        loop {
            let line = tokio::time::timeout(DEADLINE, log.recv())
                .await
                .unwrap_or_else(|_| panic!("no bridge log line with {text:?} within {DEADLINE:?}"))
                .expect("the bridge is running");
            if line.contains(text) {
                return;
            }
        }
    }

    /// The next message the bridge writes, whatever it is.
    async fn next_message(&mut self) -> Value {
        tokio::time::timeout(DEADLINE, self.lines.recv()).await.expect("a message from the bridge").unwrap()
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
    let every_tool: Vec<&str> = NATIVE_TOOLS.iter().copied().chain(["config", "debug"]).collect();
    daemon.put("/config", json!({"disabled_native_tools": every_tool})).await;
    bridge.expect_notification("notifications/tools/list_changed").await;
    assert!(bridge.tool_names().await.is_empty());
    daemon.put("/config", json!({"disabled_native_tools": ["config", "debug"], "mcp_server_enabled": false})).await;
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

#[tokio::test]
async fn notifications_sent_before_the_clients_initialize_is_answered_follow_the_answer_in_order() {
    let daemon = Daemon::start().await;
    let mut bridge = Bridge::start_logged(&daemon);
    // The bridge opens its notification stream at start, before any client speaks.
    bridge.expect_log("notification stream open").await;
    daemon.put("/config", json!({"disabled_native_tools": NATIVE_TOOLS})).await;
    bridge.expect_log("notification held").await;
    daemon.put("/config", json!({"disabled_native_tools": []})).await;
    bridge.expect_log("notification held").await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "bridge-test-client", "version": "1"}}});
    bridge.stdin.write_all(format!("{init}\n").as_bytes()).await.unwrap();
    let first = bridge.next_message().await;
    assert_eq!(first["id"], json!(1), "the initialize answer comes first: {first}");
    for _ in 0..2 {
        let held = bridge.next_message().await;
        assert_eq!(held["method"], json!("notifications/tools/list_changed"), "{held}");
    }
}

/// Continues a stopped process when dropped, so a failed assertion leaves no daemon stopped.
struct Stopped(u32);

impl Stopped {
    fn stop(pid: u32) -> Stopped {
        let status = std::process::Command::new("kill").arg("-STOP").arg(pid.to_string()).status().unwrap();
        assert!(status.success());
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").arg("-CONT").arg(self.0.to_string()).status();
    }
}

#[tokio::test]
async fn a_call_past_the_bridge_deadline_says_that_tuicd_may_still_complete_it() {
    let daemon = Daemon::start().await;
    let mut bridge = Bridge::start(&daemon, None);
    bridge.initialize().await;
    let stopped = Stopped::stop(daemon.pid());
    let answer = bridge.ask("tools/call", json!({"name": "session", "arguments": {"action": "list"}})).await;
    drop(stopped);
    let (is_error, error) = call_text(&answer);
    assert!(is_error, "{answer}");
    assert_eq!(error["may_still_complete"], json!(true), "{error}");
    let message = error["error"].as_str().unwrap();
    assert!(message.contains("within 10 s") && message.contains("may still complete"), "{message}");
}

#[tokio::test]
async fn a_submit_that_waits_out_its_whole_acknowledgement_window_gets_its_receipt_through_the_bridge() {
    let daemon = Daemon::start().await;
    let body = json!({"shell": crate::agents::fake_agent(), "agent_type": "claude", "cwd": daemon.dir.path()});
    let (_, created) = daemon.post("/sessions", body).await;
    let id = created["session_id"].as_str().unwrap().to_owned();
    let waited = ok(&daemon, "session", json!({"action": "wait", "session_id": id, "timeout_ms": 15000})).await;
    assert_eq!(waited["idle_confirmed"], json!(true), "{waited}");
    let mut bridge = Bridge::start(&daemon, None);
    bridge.initialize().await;
    // The agent stays silent after Enter for longer than submit's largest window (10 s): tuicd
    // answers only when the window ends, past the bridge's ordinary 10 s call deadline. It never
    // saw the agent start a turn, so the receipt does not say submitted.
    let args = json!({"action": "submit", "session_id": id, "input": "mute task", "timeout_ms": 10_000});
    let asked = std::time::Instant::now();
    let answer = bridge.ask("tools/call", json!({"name": "session", "arguments": args})).await;
    let (is_error, receipt) = call_text(&answer);
    assert!(!is_error, "{receipt}");
    assert!(asked.elapsed() >= std::time::Duration::from_secs(10), "the whole window: {:?}", asked.elapsed());
    assert_eq!(
        (receipt["submitted"].clone(), receipt["acknowledged"].clone()),
        (json!(false), json!(false)),
        "{receipt}"
    );
    assert!(receipt["reason"].as_str().unwrap().starts_with("not_taken"), "{receipt}");
    assert_eq!(receipt["write_state"], json!("complete"));
}

#[tokio::test]
async fn a_14_s_upstream_call_sending_progress_every_second_completes_through_the_bridge() {
    use crate::upstream_util::{everything, wait_status, with_upstreams};
    let daemon = with_upstreams(&[everything("everything")]).start().await;
    wait_status(&daemon, "everything", "ready").await;
    let mut bridge = Bridge::start(&daemon, None);
    bridge.initialize().await;
    let listed = bridge.ask("tools/list", json!({})).await;
    let tool = "everything__trigger-long-running-operation";
    let entry = listed["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == tool).unwrap();
    assert_eq!(entry["_meta"]["tuic/deadline_ms"], json!(35_000), "tuicd states the deadline: {entry}");
    // Longer than the bridge's ordinary 10 s: the stated deadline holds it open.
    let params = json!({"name": tool, "arguments": {"duration": 14, "steps": 14}, "_meta": {"progressToken": "p-14"}});
    let line = json!({"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": params}).to_string() + "\n";
    let asked = std::time::Instant::now();
    bridge.stdin.write_all(line.as_bytes()).await.unwrap();
    let mut progress = Vec::new();
    let answer = loop {
        let message = bridge.next_message().await;
        if message["method"] == json!("notifications/progress") {
            assert_eq!(message["params"]["progressToken"], json!("p-14"), "{message}");
            progress.push(message["params"]["progress"].clone());
        } else if message["id"] == json!("long") {
            break message;
        }
    };
    assert!(asked.elapsed() >= std::time::Duration::from_secs(14), "{:?}", asked.elapsed());
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(answer["result"].get("isError").is_none() && text.contains("completed"), "{answer}");
    assert!(progress.len() >= 13, "progress every second reached the client: {progress:?}");
}
