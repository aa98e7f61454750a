//! `session action=output` in text format against raw format with the same `limit` (4096, the
//! figure agents poll with), on the same idle session holding a long log (`seq 100000 120000`): one
//! MCP client on a kept-alive Unix-socket connection, phases alternating text and raw, bounded in
//! count and time. Reports each format's median phase p50 and the median per-round ratio.
//!
//! Run: `cargo bench -p tuicd --bench output`. `TUIC_BENCH_ROUNDS` sets the rounds (default 15);
//! `TUIC_BENCH_TUICD` runs another daemon build (for a before-figure).

// Test code: an unwrap that fails is a failed test, with its location.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::net::UnixStream;

mod common;
use common::http1;

const ROUNDS: usize = 15;
const CALLS_PER_PHASE: usize = 300;
const WARMUP_PER_PHASE: usize = 30;
const LIMIT: usize = 4096;
const MCP_HEADERS: [(&str, &str); 2] =
    [("Accept", "application/json, text/event-stream"), ("MCP-Protocol-Version", "2025-11-25")];

async fn call(conn: &mut UnixStream, arguments: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "session", "arguments": arguments}});
    let (status, answer) = http1::request(conn, "POST", "/mcp", &MCP_HEADERS, &body.to_string()).await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_ne!(answer["result"]["isError"], json!(true), "{answer}");
    serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// The p50 of `CALLS_PER_PHASE` reads in `format`, after a warm-up.
async fn phase(conn: &mut UnixStream, id: &str, format: &str) -> Duration {
    let arguments = json!({"action": "output", "session_id": id, "format": format, "limit": LIMIT});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "session", "arguments": arguments}})
    .to_string();
    let mut samples = Vec::with_capacity(CALLS_PER_PHASE);
    for i in 0..WARMUP_PER_PHASE + CALLS_PER_PHASE {
        let start = Instant::now();
        let (status, answer) = http1::request(conn, "POST", "/mcp", &MCP_HEADERS, &body).await;
        let took = start.elapsed();
        assert!(status == 200 && answer.len() > LIMIT / 2, "a full read: {}", String::from_utf8_lossy(&answer));
        if i >= WARMUP_PER_PHASE {
            samples.push(took);
        }
    }
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let rounds = std::env::var("TUIC_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(ROUNDS);
    let mut daemon = common::start_daemon(&[]).await;
    let mut conn = UnixStream::connect(&daemon.socket).await.unwrap();
    let created = call(&mut conn, json!({"action": "create", "shell": "/bin/sh", "cwd": "/"})).await;
    let id = created["session_id"].as_str().unwrap().to_owned();
    call(&mut conn, json!({"action": "input", "session_id": id, "input": "seq 100000 120000", "special_key": "enter"}))
        .await;
    let settled = Instant::now();
    loop {
        let read = call(&mut conn, json!({"action": "output", "session_id": id, "format": "text"})).await;
        if read["data"].as_str().unwrap().contains("120000") {
            break;
        }
        assert!(settled.elapsed() < Duration::from_secs(10), "the session's output did not arrive");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (mut texts, mut raws, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let text = phase(&mut conn, &id, "text").await.as_secs_f64() * 1e6;
        let raw = phase(&mut conn, &id, "raw").await.as_secs_f64() * 1e6;
        texts.push(text);
        raws.push(raw);
        ratios.push(text / raw);
    }
    println!("{rounds} alternating rounds of {CALLS_PER_PHASE} calls per format, limit={LIMIT}, 1 client:\n");
    println!("| `session action=output` | p50 µs |");
    println!("|---|---|");
    println!("| format=text | {:.0} |", common::median(&mut texts));
    println!("| format=raw | {:.0} |", common::median(&mut raws));
    println!("\nmedian round: text p50 / raw p50 = {:.2}x (target <= 2x)", common::median(&mut ratios));
    let _ = daemon.child.start_kill();
}
