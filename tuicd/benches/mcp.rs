//! MCP latency and throughput: `tools/call session status` over the daemon's Unix socket with 1
//! and with 16 concurrent clients (one keep-alive HTTP/1.1 connection each), against a bare
//! HTTP/1.1 request (`GET /health`) on the same socket, and against
//! `@modelcontextprotocol/server-everything`'s `echo` tool (Node, Streamable HTTP on loopback TCP)
//! in the same run when it is installed (tests/interop/setup.sh). Bounded: a fixed number of calls
//! per phase and of rounds (`TUIC_BENCH_ROUNDS`).
//!
//! Run: `cargo bench -p tuicd --bench mcp` (release). Prints a Markdown table.
//! `TUIC_BENCH_TUICD` runs another daemon build; `TUIC_BENCH_TUICD_B` adds a second build to the
//! same alternation (A/B) and prints B's status p50 over A's per round.

// Test code: an unwrap that fails is a failed test, with its location.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

mod common;
use common::wait_for;

const CLIENTS: usize = 16;
const CALLS_PER_CLIENT: usize = 400;
const WARMUP_PER_CLIENT: usize = 40;
const PHASE_DEADLINE: Duration = Duration::from_secs(120);
/// Alternating rounds of the bare and MCP phases; the median round is reported.
const ROUNDS: usize = 25;

#[derive(Clone)]
struct Target {
    /// A Unix socket, or a loopback TCP port.
    socket: Option<PathBuf>,
    port: u16,
    host: &'static str,
}

async fn connect(target: &Target) -> SendRequest<Full<Bytes>> {
    let (sender, conn) = if let Some(path) = &target.socket {
        let stream = tokio::net::UnixStream::connect(path).await.expect("connect to the socket");
        let (s, c) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(async move {
            let _ = c.await;
        });
        (s, ())
    } else {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", target.port)).await.expect("connect over TCP");
        stream.set_nodelay(true).unwrap();
        let (s, c) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(async move {
            let _ = c.await;
        });
        (s, ())
    };
    let () = conn;
    sender
}

async fn send(
    sender: &mut SendRequest<Full<Bytes>>,
    target: &Target,
    method: &str,
    body: Option<&Bytes>,
    session: Option<&str>,
) -> (Option<String>, Bytes) {
    sender.ready().await.unwrap();
    let mut builder = http::Request::builder()
        .method(method)
        .uri(if body.is_some() { "/mcp" } else { "/health" })
        .header("host", target.host)
        .header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        builder = builder.header("mcp-session-id", s).header("mcp-protocol-version", "2025-11-25");
    }
    // The body is encoded once per phase, as a load generator does: the client's own JSON work
    // must not count against the server.
    let payload = body.cloned().unwrap_or_default();
    if body.is_some() {
        builder = builder.header("content-type", "application/json");
    }
    let response = sender.send_request(builder.body(Full::new(payload)).unwrap()).await.expect("response");
    assert!(response.status().is_success(), "HTTP {}", response.status());
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (session, bytes)
}

fn call(id: usize, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
}

struct Figures {
    p50: Duration,
    p99: Duration,
    per_sec: f64,
}

/// Runs `CLIENTS` clients, each on its own connection (and, with `init`, its own MCP session).
async fn phase(target: &Target, init: bool, request: Option<Value>, expect: &'static str) -> Figures {
    phase_with(CLIENTS, target, init, request, expect).await
}

async fn phase_with(
    clients: usize,
    target: &Target,
    init: bool,
    request: Option<Value>,
    expect: &'static str,
) -> Figures {
    let mut tasks = Vec::new();
    let started = Instant::now();
    for _ in 0..clients {
        let target = target.clone();
        let request = request.as_ref().map(|r| Bytes::from(r.to_string()));
        tasks.push(tokio::spawn(async move {
            let mut sender = connect(&target).await;
            let mut session = None;
            if init {
                let init = Bytes::from(initialize().to_string());
                session = send(&mut sender, &target, "POST", Some(&init), None).await.0;
                let note = Bytes::from(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
                send(&mut sender, &target, "POST", Some(&note), session.as_deref()).await;
            }
            let method = if request.is_some() { "POST" } else { "GET" };
            let mut samples = Vec::with_capacity(CALLS_PER_CLIENT);
            let mut first = None;
            for i in 0..WARMUP_PER_CLIENT + CALLS_PER_CLIENT {
                let t = Instant::now();
                let (_, body) = send(&mut sender, &target, method, request.as_ref(), session.as_deref()).await;
                if i == WARMUP_PER_CLIENT {
                    first = Some(t);
                }
                if i >= WARMUP_PER_CLIENT {
                    samples.push(t.elapsed());
                }
                assert!(String::from_utf8_lossy(&body).contains(expect), "unexpected answer: {body:?}");
            }
            (samples, first.unwrap())
        }));
    }
    let mut all = Vec::new();
    let mut begin = Instant::now();
    for task in tasks {
        let (samples, first) = tokio::time::timeout(PHASE_DEADLINE, task).await.expect("phase deadline").unwrap();
        all.extend(samples);
        begin = begin.min(first);
    }
    let elapsed = begin.elapsed().max(Duration::from_millis(1));
    let _ = started;
    all.sort();
    let pick = |q: f64| all[((all.len() as f64 * q) as usize).min(all.len() - 1)];
    Figures { p50: pick(0.50), p99: pick(0.99), per_sec: all.len() as f64 / elapsed.as_secs_f64() }
}

fn row(name: &str, f: &Figures) -> String {
    format!("| {name} | {:.3} | {:.3} | {:.0} |", f.p50.as_secs_f64() * 1e3, f.p99.as_secs_f64() * 1e3, f.per_sec)
}

fn everything_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// One daemon build under measurement: its socket, the status request for its session, and the
/// figures of each round, (bare, MCP) with 1 client and with [`CLIENTS`].
struct Side {
    label: &'static str,
    daemon: common::Daemon,
    target: Target,
    status: Value,
    ones: Vec<(Figures, Figures)>,
    manys: Vec<(Figures, Figures)>,
}

async fn side(label: &'static str, daemon: common::Daemon) -> Side {
    let target = Target { socket: Some(daemon.socket.clone()), port: 0, host: "localhost" };
    let mut sender = connect(&target).await;
    let created = call(1, "session", json!({"action": "create", "shell": "/bin/sh"}));
    let (_, body) = send(&mut sender, &target, "POST", Some(&Bytes::from(created.to_string())), None).await;
    let reply: Value = serde_json::from_slice(&body).unwrap();
    let text: Value = serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let status = call(2, "session", json!({"action": "status", "session_id": text["session_id"]}));
    Side { label, daemon, target, status, ones: Vec::new(), manys: Vec::new() }
}

fn ratio((bare, mcp): &(Figures, Figures)) -> f64 {
    mcp.p50.as_secs_f64() / bare.p50.as_secs_f64().max(1e-9)
}

/// The round with the median MCP/bare ratio, and every round's ratio and p50s, sorted.
fn median_round(rounds: &mut Vec<(Figures, Figures)>) -> ((Figures, Figures), String) {
    rounds.sort_by(|a, b| ratio(a).total_cmp(&ratio(b)));
    let all: Vec<String> = rounds
        .iter()
        .map(|r| format!("{:.2} ({:.3}/{:.3} ms)", ratio(r), r.1.p50.as_secs_f64() * 1e3, r.0.p50.as_secs_f64() * 1e3))
        .collect();
    (rounds.swap_remove(rounds.len() / 2), all.join(" "))
}

fn median_of(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut sides = vec![side("", common::start_daemon(&[]).await).await];
    // TUIC_BENCH_TUICD_B adds a second daemon build to the same alternation: an A/B comparison in
    // which both builds meet the same moments of a noisy machine.
    if let Ok(other) = std::env::var("TUIC_BENCH_TUICD_B") {
        sides.push(side(" [B]", common::start_daemon_binary(&other, &[]).await).await);
    }
    println!(
        "Each client: {CALLS_PER_CLIENT} calls after {WARMUP_PER_CLIENT} warm-up calls, on its own keep-alive connection.\n"
    );
    println!("| request | p50 ms | p99 ms | calls/s |");
    println!("|---|---|---|---|");
    // Both sides are measured ROUNDS times, alternating, and the round with the median ratio is
    // reported: one short phase on 2 shared cores swings by more than the difference measured.
    // TUIC_BENCH_ROUNDS overrides the count (longer runs for profiling).
    let rounds = std::env::var("TUIC_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(ROUNDS);
    // Per round, B's MCP p50 over A's, with 1 and with CLIENTS clients.
    let mut b_over_a = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Every other round in reverse order, so no build always follows the other.
        let order: Vec<usize> =
            if round % 2 == 0 { (0..sides.len()).collect() } else { (0..sides.len()).rev().collect() };
        for i in order {
            let side = &mut sides[i];
            let bare_one = phase_with(1, &side.target, false, None, "\"ok\":true").await;
            let mcp_one = phase_with(1, &side.target, true, Some(side.status.clone()), "session_id").await;
            side.ones.push((bare_one, mcp_one));
            let bare = phase(&side.target, false, None, "\"ok\":true").await;
            let mcp = phase(&side.target, true, Some(side.status.clone()), "session_id").await;
            side.manys.push((bare, mcp));
        }
        if let [a, b] = &sides[..] {
            let p50 = |rounds: &Vec<(Figures, Figures)>| rounds[round].1.p50.as_secs_f64();
            b_over_a.0.push(p50(&b.ones) / p50(&a.ones));
            b_over_a.1.push(p50(&b.manys) / p50(&a.manys));
        }
    }
    for side in &mut sides {
        let label = side.label;
        let ((bare_one, mcp_one), ones_all) = median_round(&mut side.ones);
        let ((bare, mcp), manys_all) = median_round(&mut side.manys);
        println!("{}", row(&format!("1 client: tuicd{label} bare HTTP/1.1 `GET /health` (Unix socket)"), &bare_one));
        println!("{}", row(&format!("1 client: tuicd{label} MCP `tools/call session status` (Unix socket)"), &mcp_one));
        println!("{}", row(&format!("16 clients: tuicd{label} bare HTTP/1.1 `GET /health` (Unix socket)"), &bare));
        println!("{}", row(&format!("16 clients: tuicd{label} MCP `tools/call session status` (Unix socket)"), &mcp));
        let (one, many) = (ratio(&(bare_one, mcp_one)), ratio(&(bare, mcp)));
        println!(
            "\ntuicd{label}: MCP p50 / bare p50 per round, sorted (MCP/bare p50): 1 client {ones_all}\n{CLIENTS} clients {manys_all}"
        );
        println!(
            "tuicd{label}: median round {one:.2}x with 1 client, {many:.2}x with {CLIENTS} clients (target <= 1.5x)\n"
        );
    }
    if !b_over_a.0.is_empty() {
        println!(
            "MCP status p50 B/A per round: median {:.3} with 1 client, {:.3} with {CLIENTS} clients\n",
            median_of(b_over_a.0),
            median_of(b_over_a.1)
        );
    }

    let everything = everything_path();
    let node_ok = std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if everything.exists() && node_ok {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let _node = tokio::process::Command::new("node")
            .arg(&everything)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn server-everything");
        wait_for("server-everything", || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()).await;
        let target = Target { socket: None, port, host: "localhost" };
        let echo = call(3, "echo", json!({"message": "hi"}));
        let node = phase(&target, true, Some(echo), "Echo: hi").await;
        println!("{}", row("16 clients: server-everything `tools/call echo` (Node, loopback TCP)", &node));
    } else {
        println!("| server-everything `tools/call echo` | not installed (run tests/interop/setup.sh) | | |");
    }
    for side in &mut sides {
        let _ = side.daemon.child.start_kill();
    }
}
