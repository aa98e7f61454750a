//! Upstream proxy overhead: `@modelcontextprotocol/server-everything`'s `echo` called through
//! tuicd (`tools/call everything__echo` on `/mcp` over the Unix socket, one MCP session and one
//! keep-alive connection per client) against the same server called directly over stdio by a
//! small multiplexing JSON-RPC client here, with 1 and with 16 concurrent clients. Both sides use
//! one shared server-everything process, as tuicd does for every agent.
//!
//! Bounded: a fixed number of calls per phase, `ROUNDS` alternating rounds (`TUIC_BENCH_ROUNDS`),
//! each phase under `PHASE_DEADLINE`. Needs `bash tests/interop/setup.sh`.
//! Run: `cargo bench -p tuicd --bench upstream` (release). Prints a Markdown table.

// Test code: an unwrap that fails is a failed test, with its location.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::oneshot;

mod common;

const CLIENTS: usize = 16;
/// Calls per client: (warm-up, measured) with one client and with [`CLIENTS`].
const ONE: (usize, usize) = (50, 400);
const MANY: (usize, usize) = (10, 100);
const ROUNDS: usize = 5;
const PHASE_DEADLINE: Duration = Duration::from_secs(60);

fn everything_path() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(path.exists(), "{} is missing: run `bash tests/interop/setup.sh`", path.display());
    path.to_string_lossy().into_owned()
}

/// A direct stdio client: one process, requests multiplexed by id.
struct Direct {
    stdin: tokio::sync::Mutex<tokio::process::ChildStdin>,
    pending: Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>,
    next: AtomicU64,
    _child: tokio::process::Child,
}

impl Direct {
    async fn start() -> Arc<Self> {
        let mut child = tokio::process::Command::new("node")
            .arg(everything_path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let pending: Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>> = Arc::default();
        let routes = pending.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let message: Value = serde_json::from_str(&line).unwrap();
                if let Some(id) = message.get("id").and_then(Value::as_u64)
                    && let Some(tx) = routes.lock().unwrap().remove(&id)
                {
                    let _ = tx.send(message);
                }
            }
        });
        let direct = Arc::new(Self {
            stdin: tokio::sync::Mutex::new(child.stdin.take().unwrap()),
            pending,
            next: AtomicU64::new(1),
            _child: child,
        });
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}});
        direct.request("initialize", init).await;
        direct.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        direct
    }

    async fn write(&self, message: &Value) {
        let line = format!("{message}\n");
        self.stdin.lock().await.write_all(line.as_bytes()).await.unwrap();
    }

    async fn request(&self, method: &str, params: Value) -> Value {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        tokio::time::timeout(Duration::from_secs(10), rx).await.expect("server-everything answers").unwrap()
    }
}

/// One `POST /mcp` on a kept-alive connection; returns the `mcp-session-id` and the body.
async fn exchange(conn: &mut UnixStream, session: Option<&str>, body: &str) -> (Option<String>, Vec<u8>) {
    let mut headers = vec![("Accept", "application/json, text/event-stream")];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    let (_, head, body) = common::http1::exchange(conn, "POST", "/mcp", &headers, body).await;
    let session = head.lines().find_map(|l| l.strip_prefix("mcp-session-id:")).map(|v| v.trim().to_owned());
    (session, body)
}

struct Figures {
    p50: Duration,
    p99: Duration,
    per_sec: f64,
}

fn figures(mut samples: Vec<Duration>, elapsed: Duration) -> Figures {
    samples.sort();
    let pick = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    Figures { p50: pick(0.50), p99: pick(0.99), per_sec: samples.len() as f64 / elapsed.as_secs_f64().max(1e-6) }
}

/// `clients` clients calling echo directly, each `calls` = (warm-up, measured) times.
async fn direct_phase(direct: &Arc<Direct>, clients: usize, calls: (usize, usize)) -> Figures {
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let direct = direct.clone();
            tokio::spawn(async move {
                let mut samples = Vec::with_capacity(calls.1);
                for i in 0..calls.0 + calls.1 {
                    let t = Instant::now();
                    let answer =
                        direct.request("tools/call", json!({"name": "echo", "arguments": {"message": "hi"}})).await;
                    assert!(answer.to_string().contains("Echo: hi"), "{answer}");
                    if i >= calls.0 {
                        samples.push(t.elapsed());
                    }
                }
                samples
            })
        })
        .collect();
    collect(tasks, started).await
}

/// `clients` MCP clients of tuicd calling `everything__echo`.
async fn proxied_phase(socket: &Path, clients: usize, calls: (usize, usize)) -> Figures {
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let socket = socket.to_owned();
            tokio::spawn(async move {
                let mut conn = UnixStream::connect(&socket).await.unwrap();
                let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                    "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}});
                let (session, _) = exchange(&mut conn, None, &init.to_string()).await;
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "everything__echo", "arguments": {"message": "hi"}}})
                .to_string();
                let mut samples = Vec::with_capacity(calls.1);
                for i in 0..calls.0 + calls.1 {
                    let t = Instant::now();
                    let (_, answer) = exchange(&mut conn, session.as_deref(), &body).await;
                    assert!(String::from_utf8_lossy(&answer).contains("Echo: hi"), "{}", String::from_utf8_lossy(&answer));
                    if i >= calls.0 {
                        samples.push(t.elapsed());
                    }
                }
                samples
            })
        })
        .collect();
    collect(tasks, started).await
}

async fn collect(tasks: Vec<tokio::task::JoinHandle<Vec<Duration>>>, started: Instant) -> Figures {
    let mut all = Vec::new();
    for task in tasks {
        all.extend(tokio::time::timeout(PHASE_DEADLINE, task).await.expect("phase deadline").unwrap());
    }
    figures(all, started.elapsed())
}

fn row(name: &str, f: &Figures) -> String {
    format!("| {name} | {:.3} | {:.3} | {:.0} |", f.p50.as_secs_f64() * 1e3, f.p99.as_secs_f64() * 1e3, f.per_sec)
}

/// Starts tuicd, then gives it server-everything as its one upstream (written to its config dir
/// and re-read on SIGHUP) and waits until that upstream is ready.
async fn daemon_with_everything() -> common::Daemon {
    let daemon = common::start_daemon(&[]).await;
    let dir = daemon.socket.parent().unwrap();
    let servers = json!({"servers": [{"id": "everything", "name": "everything",
        "transport": {"type": "stdio", "command": "node", "args": [everything_path()]}}]});
    std::fs::write(dir.join("mcp-upstreams.json"), servers.to_string()).unwrap();
    let pid = daemon.child.id().unwrap();
    let _ = std::process::Command::new("kill").arg("-HUP").arg(pid.to_string()).status();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut conn = UnixStream::connect(&daemon.socket).await.unwrap();
        let (_, body) = common::http1::request(&mut conn, "GET", "/mcp/upstream-status", &[], "").await;
        if String::from_utf8_lossy(&body).contains("\"status\":\"ready\"") {
            return daemon;
        }
        assert!(Instant::now() < deadline, "the upstream is not ready: {}", String::from_utf8_lossy(&body));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut daemon = daemon_with_everything().await;
    let direct = Direct::start().await;
    let rounds = std::env::var("TUIC_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(ROUNDS);
    // Per round: (direct, proxied) with one client and with CLIENTS; alternating order, so neither
    // side always meets the machine after the other.
    let mut ones = Vec::new();
    let mut manys = Vec::new();
    for round in 0..rounds {
        let (one, many) = if round % 2 == 0 {
            let d1 = direct_phase(&direct, 1, ONE).await;
            let p1 = proxied_phase(&daemon.socket, 1, ONE).await;
            let dn = direct_phase(&direct, CLIENTS, MANY).await;
            let pn = proxied_phase(&daemon.socket, CLIENTS, MANY).await;
            ((d1, p1), (dn, pn))
        } else {
            let p1 = proxied_phase(&daemon.socket, 1, ONE).await;
            let d1 = direct_phase(&direct, 1, ONE).await;
            let pn = proxied_phase(&daemon.socket, CLIENTS, MANY).await;
            let dn = direct_phase(&direct, CLIENTS, MANY).await;
            ((d1, p1), (dn, pn))
        };
        ones.push(one);
        manys.push(many);
    }
    let added = |(d, p): &(Figures, Figures)| p.p50.as_secs_f64() - d.p50.as_secs_f64();
    ones.sort_by(|a, b| added(a).total_cmp(&added(b)));
    manys.sort_by(|a, b| added(a).total_cmp(&added(b)));
    let one = ones.swap_remove(ones.len() / 2);
    let many = manys.swap_remove(manys.len() / 2);
    println!(
        "{rounds} rounds, the median round by added p50 shown. 1 client: {} calls after {} warm-up; {CLIENTS} clients: {} each after {}.\n",
        ONE.1, ONE.0, MANY.1, MANY.0
    );
    println!("| request | p50 ms | p99 ms | calls/s |");
    println!("|---|---|---|---|");
    println!("{}", row("1 client: server-everything `echo` direct (stdio)", &one.0));
    println!("{}", row("1 client: `everything__echo` through tuicd (Unix socket, stdio upstream)", &one.1));
    println!("{}", row(&format!("{CLIENTS} clients: server-everything `echo` direct (stdio)"), &many.0));
    println!("{}", row(&format!("{CLIENTS} clients: `everything__echo` through tuicd"), &many.1));
    println!(
        "\nAdded p50 through tuicd: {:.3} ms with 1 client, {:.3} ms with {CLIENTS} clients (target <= 0.3 ms).",
        added(&one) * 1e3,
        added(&many) * 1e3
    );
    let _ = daemon.child.start_kill();
}
