//! Cold start to the first `/health` answer: spawn `tuicd` on a fresh config dir, poll its socket
//! until `GET /health` returns 200, stop it. Bounded: `COLD_START_RUNS` runs (default 30).
//!
//! `cargo bench -p tuicd --bench cold_start`

// Test code: an unwrap that fails is a failed test, with its location.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(10);

fn health_ok(socket: &std::path::Path) -> bool {
    let Ok(mut stream) = UnixStream::connect(socket) else { return false };
    if stream.write_all(b"GET /health HTTP/1.1\r\nHost: tuic\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

fn main() {
    let runs: usize = std::env::var("COLD_START_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("mcp.sock");
        let start = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_tuicd"))
            .arg("--config-dir")
            .arg(dir.path())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        while !health_ok(&socket) {
            assert!(start.elapsed() < DEADLINE, "tuicd did not answer within {DEADLINE:?}");
            std::thread::sleep(Duration::from_millis(1));
        }
        samples.push(start.elapsed());
        let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        let _ = child.wait();
    }
    samples.sort();
    let pct = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    println!(
        "cold start to first /health: runs={runs} min={:.2?} median={:.2?} p90={:.2?} max={:.2?}",
        samples[0],
        pct(0.5),
        pct(0.9),
        samples[samples.len() - 1]
    );
}
