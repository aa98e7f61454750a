//! Messaging stress over the wire: 20 agents x 500 messages through the real daemon's `/mcp`
//! on its Unix socket, with concurrent waits, reconnects and reaps. Every agent owns a real PTY
//! (its bridge sends `x-tuic-session`); each has a receiver (blocking `agent action=wait` in a
//! loop, reconnecting as a new MCP session every [`RECONNECT_EVERY`] messages, alternately
//! DELETEing the old session and abandoning it to the reaper, whose TTL is shortened to
//! [`SESSION_TTL_MS`]; the run prints how many sessions the reaper removed, from the daemon's log)
//! and a sender (its own MCP session on the same identity, a sibling bridge).
//! Senders keep at most [`WINDOW`] unread messages per recipient, so the 100-message inbox never
//! has to evict: any loss would be ours.
//!
//! Asserts 0 lost and 0 duplicated deliveries; prints messages/s and the send-to-woken-wait
//! latency (from just before the send's POST to the wait's answer carrying it), p50 / p99.
//! Run: `cargo bench -p tuicd --bench messaging`. Bounded: fixed counts, a [`DEADLINE`].

// Test code: an unwrap that fails is a failed test, with its location.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::{Barrier, Semaphore};

mod common;

const AGENTS: usize = 20;
const MESSAGES_PER_AGENT: usize = 500;
/// Unread messages a recipient may have in flight from all senders together (inbox holds 100).
const WINDOW: usize = 60;
const RECONNECT_EVERY: usize = 100;
const SESSION_TTL_MS: u64 = 100;
const WAIT_MS: u64 = 5000;
const DEADLINE: Duration = Duration::from_secs(300);

struct Conn {
    socket: PathBuf,
    sender: SendRequest<Full<Bytes>>,
    session: Option<String>,
    tuic_session: String,
    next_id: u64,
}

impl Conn {
    async fn open(socket: &PathBuf, tuic_session: &str) -> Self {
        let stream = tokio::net::UnixStream::connect(socket).await.expect("connect to the socket");
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut conn =
            Self { socket: socket.clone(), sender, session: None, tuic_session: tuic_session.to_owned(), next_id: 0 };
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "messaging-bench", "version": "1"}});
        conn.rpc("initialize", params).await;
        conn
    }

    async fn post(&mut self, method: &str, body: Option<Value>) -> Value {
        self.sender.ready().await.unwrap();
        let mut builder = http::Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", "localhost")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("x-tuic-session", &self.tuic_session);
        if let Some(s) = &self.session {
            builder = builder.header("mcp-session-id", s);
        }
        let payload = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
        let response = self.sender.send_request(builder.body(Full::new(payload)).unwrap()).await.expect("response");
        assert!(response.status().is_success(), "HTTP {}", response.status());
        if let Some(s) = response.headers().get("mcp-session-id") {
            self.session = Some(s.to_str().unwrap().to_owned());
        }
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap_or(Value::Null)
    }

    async fn rpc(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        self.post("POST", Some(json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))).await
    }

    async fn agent(&mut self, args: Value) -> Value {
        let reply = self.rpc("tools/call", json!({"name": "agent", "arguments": args})).await;
        let result = &reply["result"];
        let value: Value = serde_json::from_str(result["content"][0]["text"].as_str().expect("text")).unwrap();
        assert!(result["isError"] != json!(true), "agent {args}: {value}");
        value
    }

    /// A new MCP session on a new connection for the same identity; the old one is DELETEd or
    /// left for the reaper.
    async fn reconnect(self, delete_old: bool) -> Self {
        let socket = self.socket.clone();
        let fresh = Self::open(&socket, &self.tuic_session).await;
        if delete_old {
            let mut old = self;
            old.post("DELETE", None).await;
        }
        fresh
    }
}

/// Who sender `from` addresses with its `k`-th message: every other agent in turn.
fn recipient(from: usize, k: usize) -> usize {
    (from + 1 + k % (AGENTS - 1)) % AGENTS
}

#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    duplicates: usize,
}

#[allow(clippy::too_many_arguments)]
async fn receive(
    ready: Arc<Barrier>,
    socket: PathBuf,
    tuic: String,
    me: usize,
    expected: usize,
    window: Arc<Semaphore>,
    base: Instant,
    tally: Arc<Mutex<Tally>>,
) -> usize {
    let mut conn = Conn::open(&socket, &tuic).await;
    ready.wait().await;
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    let mut since_reconnect = 0;
    let mut reconnects = 0;
    while seen.len() < expected {
        let woken = conn.agent(json!({"action": "wait", "timeout_ms": WAIT_MS})).await;
        let arrived = Instant::now();
        for message in woken["messages"].as_array().unwrap() {
            let content = message["content"].as_str().unwrap();
            let mut parts = content.split(':').map(|p| p.parse::<u64>().unwrap());
            let (from, seq, sent_ns) =
                (parts.next().unwrap() as usize, parts.next().unwrap() as usize, parts.next().unwrap());
            let mut tally = tally.lock().unwrap();
            if !seen.insert((from, seq)) {
                tally.duplicates += 1;
                continue;
            }
            tally.latencies.push(arrived.duration_since(base) - Duration::from_nanos(sent_ns));
            window.add_permits(1);
            since_reconnect += 1;
        }
        if since_reconnect >= RECONNECT_EVERY {
            since_reconnect = 0;
            reconnects += 1;
            conn = conn.reconnect(reconnects % 2 == 0).await;
        }
    }
    let rest = conn.agent(json!({"action": "inbox"})).await;
    assert_eq!(rest["count"], json!(0), "agent {me}: mail left after all expected arrived: {rest}");
    assert!(rest.get("missed_count").is_none(), "agent {me}: the inbox evicted mail: {rest}");
    reconnects
}

async fn send_all(
    ready: Arc<Barrier>,
    socket: PathBuf,
    tuic: String,
    me: usize,
    windows: Arc<Vec<Arc<Semaphore>>>,
    base: Instant,
    targets: Arc<Vec<String>>,
) {
    let mut conn = Conn::open(&socket, &tuic).await;
    // Every identity is bound (at initialize) before the first send.
    ready.wait().await;
    for k in 0..MESSAGES_PER_AGENT {
        let to = recipient(me, k);
        windows[to].acquire().await.unwrap().forget();
        let sent_ns = base.elapsed().as_nanos();
        let content = format!("{me}:{k}:{sent_ns}");
        let outcome = conn.agent(json!({"action": "send", "to": targets[to], "message": content})).await;
        assert_eq!(outcome["accepted"], json!(true));
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // The reaper's passes are counted from the daemon's log (info level for the MCP layer only).
    let env = [("TUIC_MCP_SESSION_TTL_MS", SESSION_TTL_MS.to_string()), ("RUST_LOG", "warn,tuicd::mcp=info".into())];
    let mut daemon = common::start_daemon(&env).await;
    let socket = daemon.socket.clone();
    // One real PTY per agent: its TUIC_SESSION is the agent's identity.
    let mut setup = Conn::open(&socket, "00000000-0000-4000-8000-000000000000").await;
    let mut tuics = Vec::new();
    for _ in 0..AGENTS {
        let reply = setup
            .rpc("tools/call", json!({"name": "session", "arguments": {"action": "create", "shell": "/bin/sh"}}))
            .await;
        let created: Value = serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        tuics.push(created["tuic_session"].as_str().unwrap().to_owned());
    }
    let mut expected = [0usize; AGENTS];
    for from in 0..AGENTS {
        for k in 0..MESSAGES_PER_AGENT {
            expected[recipient(from, k)] += 1;
        }
    }
    let windows: Arc<Vec<Arc<Semaphore>>> = Arc::new((0..AGENTS).map(|_| Arc::new(Semaphore::new(WINDOW))).collect());
    let targets = Arc::new(tuics.clone());
    let tally = Arc::new(Mutex::new(Tally::default()));
    let base = Instant::now();
    let ready = Arc::new(Barrier::new(2 * AGENTS));
    let mut receivers = Vec::new();
    for me in 0..AGENTS {
        let args = (socket.clone(), tuics[me].clone(), me, expected[me], windows[me].clone(), base, tally.clone());
        receivers.push(tokio::spawn(receive(ready.clone(), args.0, args.1, args.2, args.3, args.4, args.5, args.6)));
    }
    let mut senders = Vec::new();
    for (me, tuic) in tuics.iter().enumerate() {
        senders.push(tokio::spawn(send_all(
            ready.clone(),
            socket.clone(),
            tuic.clone(),
            me,
            windows.clone(),
            base,
            targets.clone(),
        )));
    }
    let run = async {
        for s in senders {
            s.await.expect("a sender failed");
        }
        let mut reconnects = 0;
        for r in receivers {
            reconnects += r.await.expect("a receiver failed");
        }
        reconnects
    };
    let reconnects = tokio::time::timeout(DEADLINE, run).await.expect("the stress run exceeded its deadline");
    let elapsed = base.elapsed();
    let total = AGENTS * MESSAGES_PER_AGENT;
    let mut tally = std::mem::take(&mut *tally.lock().unwrap());
    tally.latencies.sort();
    let pct = |p: f64| tally.latencies[((tally.latencies.len() - 1) as f64 * p) as usize];
    assert_eq!(tally.latencies.len(), total, "lost messages");
    assert_eq!(tally.duplicates, 0, "duplicated deliveries");
    println!(
        "{AGENTS} agents x {MESSAGES_PER_AGENT} messages = {total} in {:.2} s: {:.0} messages/s; 0 lost, 0 duplicated; \
         {reconnects} reconnects (half DELETEd, half abandoned; reaper TTL {SESSION_TTL_MS} ms)",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
    println!("send-to-woken-wait latency: p50 {:?}, p99 {:?}, max {:?}", pct(0.5), pct(0.99), pct(1.0));
    let log = std::fs::read_to_string(&daemon.log).unwrap_or_default();
    let reaped: usize = log
        .lines()
        .filter(|l| l.contains("reaped idle MCP sessions"))
        .filter_map(|l| l.split("reaped=").nth(1)?.split_whitespace().next()?.parse::<usize>().ok())
        .sum();
    println!("the reaper removed {reaped} idle MCP sessions during the run");
    let _ = daemon.child.start_kill();
}
