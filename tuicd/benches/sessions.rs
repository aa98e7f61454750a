//! Session benchmarks against the real daemon over its Unix socket (bounded in count and time).
//!
//! `cargo bench -p tuicd --bench sessions -- [flood] [echo] [idle]` (all three without arguments).
//! - flood: the same producer (`cat` of a ~108 MB base64 file) read (a) directly from a PTY by a
//!   minimal reader (a thread in blocking `read()`) and (b) through tuicd's WebSocket by a client
//!   on its own thread and current-thread runtime, in both
//!   output modes: JSON text frames (the default) and binary frames (`?binary=1`); 10 alternating
//!   runs, each tuicd run compared with the direct run just before it. On 2 cores a single run
//!   swings between ~35 and ~90 MB/s with where the scheduler puts the producer, the reader and
//!   the tty kworkers, so only the medians over many runs mean anything.
//!   `TUIC_BENCH_RELAY=1` adds a minimal relay (see `flood_relay`), `TUIC_BENCH_DIRECT_SLICE=1` a
//!   direct reader in tuicd's `read()` size, and `TUIC_BENCH_TUICD_B` a second daemon build in the
//!   same alternation (A/B).
//! - echo: keystroke echo round trip through the WebSocket to `cat` in a cooked PTY, 1000
//!   iterations, p50/p99 (with `TUIC_BENCH_TUICD_B`, in alternating blocks per build). Run under
//!   `taskset -c 0` for the pinned figure (children inherit it).
//! - idle: daemon RSS per session with 500 idle shells; daemon CPU over 10 s with 100 idle shells.

// Test code: an unwrap that fails is a failed test, with its location.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

mod common;

use common::raw_ws::{self, RawWs};

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::UnixStream>;

const FLOOD_RUNS: usize = 10;
/// The baseline direct reader's `read()` size: a plain large buffer.
const DIRECT_READ: usize = 64 * 1024;
const ECHO_ITERATIONS: usize = 1000;
/// Alternating blocks of the echo iterations per daemon build in an A/B run.
const ECHO_BLOCKS: usize = 4;
const IDLE_SESSIONS: usize = 500;
const IDLE_CPU_SESSIONS: usize = 100;
const IDLE_CPU_WINDOW: Duration = Duration::from_secs(10);
const DEADLINE: Duration = Duration::from_secs(120);

struct Daemon {
    dir: tempfile::TempDir,
    child: tokio::process::Child,
    client: reqwest::Client,
}

impl Daemon {
    async fn start(config: Value) -> Daemon {
        // TUIC_BENCH_TUICD runs another build of the daemon.
        let binary = std::env::var("TUIC_BENCH_TUICD").unwrap_or_else(|_| env!("CARGO_BIN_EXE_tuicd").to_owned());
        Self::start_binary(config, &binary).await
    }

    async fn start_binary(config: Value, binary: &str) -> Daemon {
        let dir = tempfile::Builder::new().prefix("tuicb").tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
        let child = tokio::process::Command::new(binary)
            .arg("--config-dir")
            .arg(dir.path())
            .env("RUST_LOG", "warn")
            .env("TUIC_KEEPER", "off")
            .env_remove("TUIC_PORT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let client = reqwest::Client::builder().unix_socket(dir.path().join("mcp.sock")).build().unwrap();
        let start = Instant::now();
        while client.get("http://tuic/health").send().await.is_err() {
            assert!(start.elapsed() < DEADLINE, "daemon did not start");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Daemon { dir, child, client }
    }

    fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    async fn create(&self, body: Value) -> String {
        let response = self.client.post("http://tuic/sessions").json(&body).send().await.unwrap();
        assert_eq!(response.status(), 201);
        response.json::<Value>().await.unwrap()["session_id"].as_str().unwrap().to_owned()
    }
}

/// Opens `/sessions/:id/stream?cursor=0` plus `query` over the daemon's Unix socket.
async fn connect_stream(sock: &Path, id: &str, query: &str) -> Socket {
    let stream = tokio::net::UnixStream::connect(sock).await.unwrap();
    tokio_tungstenite::client_async(format!("ws://tuic/sessions/{id}/stream?cursor=0{query}"), stream).await.unwrap().0
}

#[derive(serde::Deserialize)]
struct Frame {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    data: String,
}

/// The flood client counts bytes from the frame's cursors and skips `data` without decoding it,
/// as a renderer that hands the string straight to a terminal widget would.
#[derive(serde::Deserialize)]
struct CountFrame {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    cursor: u64,
    #[serde(default)]
    total_written: u64,
    #[serde(default)]
    missed: u64,
}

/// One flood mode's runs: per run, throughput to the exit frame, its ratio, and the ratio of the
/// times to the last byte.
type ModeRuns = (Mode, usize, Vec<(f64, f64, f64)>);

fn flood_file(dir: &Path) -> PathBuf {
    let path = dir.join("flood.b64");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("head -c 80000000 /dev/urandom | base64 > {}", path.display()))
        .status()
        .unwrap();
    assert!(status.success());
    path
}

/// The producer waits for one line of input, then cats the file, so both readers are attached first.
/// With `TUIC_BENCH_PRODUCER_CPU=<n>` the producer runs on core n only (run the bench itself under
/// `taskset` on the other cores): a controlled placement with less run-to-run noise.
fn producer(file: &Path) -> Vec<String> {
    let pin = std::env::var("TUIC_BENCH_PRODUCER_CPU").map(|cpu| format!("taskset -c {cpu} ")).unwrap_or_default();
    vec!["-c".into(), format!("stty -echo; read go; exec {pin}cat {}", file.display())]
}

/// The producer on a PTY this process opened, started: the master, the child and when "go" went.
fn start_producer(file: &Path) -> (std::fs::File, std::process::Child, Instant) {
    use std::io::Write;
    let (pty, pts) = pty_process::blocking::open().unwrap();
    pty.resize(pty_process::Size::new(24, 80)).unwrap();
    let child = pty_process::blocking::Command::new("/bin/sh").args(producer(file)).spawn(pts).unwrap();
    let mut pty = std::fs::File::from(std::os::fd::OwnedFd::from(pty));
    std::thread::sleep(Duration::from_millis(200)); // let stty run before "go"
    let start = Instant::now();
    pty.write_all(b"\n").unwrap();
    (pty, child, start)
}

/// The direct baseline: a plain thread reading the PTY master in blocking `read()` calls of up to
/// `read_size` bytes (64 KiB for the baseline, the most minimal reader there is). Returns the
/// bytes, the time to the end of output (EOF) and the time to the last byte.
fn flood_direct(file: &Path, read_size: usize) -> (u64, Duration, Duration) {
    use std::io::Read;
    let (mut pty, mut child, start) = start_producer(file);
    let mut buf = vec![0u8; read_size];
    let (mut total, mut last_byte) = (0u64, start);
    loop {
        match pty.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => (total, last_byte) = (total + n as u64, Instant::now()),
        }
    }
    let elapsed = start.elapsed();
    let _ = child.wait();
    (total, elapsed, last_byte - start)
}

/// A minimal relay (`TUIC_BENCH_RELAY=1`): the direct reader forwards each chunk to a Unix socket
/// and a second thread reads it there, with no framing, no ring and no screen: what one more
/// reader of the bytes costs on this machine. `TUIC_BENCH_RELAY_HOP=1` hands each chunk to a third
/// thread that writes it to the socket (the shape of a reader thread feeding a sender task), and
/// `TUIC_BENCH_RELAY_SYNC=1` makes the reader wait for that write before its next read.
fn flood_relay(file: &Path, hop: bool, sync: bool) -> (u64, Duration) {
    use std::io::{Read, Write};
    let (mut near, mut far) = std::os::unix::net::UnixStream::pair().unwrap();
    let (mut pty, mut child, start) = start_producer(file);
    let relay = std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        if hop {
            let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
            let (ack_tx, ack_rx) = std::sync::mpsc::channel::<()>();
            let writer = std::thread::spawn(move || {
                for chunk in rx {
                    near.write_all(&chunk).unwrap();
                    let _ = ack_tx.send(());
                }
            });
            while let Ok(n @ 1..) = pty.read(&mut buf) {
                tx.send(buf[..n].to_vec()).unwrap();
                if sync {
                    ack_rx.recv().unwrap();
                }
            }
            drop(tx);
            writer.join().unwrap();
            return;
        }
        while let Ok(n @ 1..) = pty.read(&mut buf) {
            near.write_all(&buf[..n]).unwrap();
        }
    });
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    while let Ok(n @ 1..) = far.read(&mut buf) {
        total += n as u64;
    }
    let elapsed = start.elapsed();
    relay.join().unwrap();
    let _ = child.wait();
    (total, elapsed)
}

/// Output modes of the stream the flood measures.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Json,
    Binary,
}

impl Mode {
    fn key(self) -> &'static str {
        match self {
            Mode::Json => "json",
            Mode::Binary => "binary",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Json => "JSON text frames",
            Mode::Binary => "binary frames (?binary=1)",
        }
    }
}

async fn flood_tuicd(daemon: &Daemon, file: &Path, mode: Mode) -> (u64, u64, Duration, Duration) {
    let id = daemon.create(json!({"shell": "/bin/sh", "args": producer(file), "cwd": "/"})).await;
    let (sock, daemon_pid) = (daemon.dir.path().join("mcp.sock"), daemon.pid());
    let resyncs = || async {
        let metrics: Value = daemon.client.get("http://tuic/metrics").send().await.unwrap().json().await.unwrap();
        metrics["ws_lag_resyncs"].as_u64().unwrap_or(0)
    };
    let before = resyncs().await;
    // The client is as minimal as the direct reader: a plain thread in blocking reads.
    let result = tokio::task::spawn_blocking(move || stream_flood(&sock, &id, mode, daemon_pid)).await.unwrap();
    println!("  resyncs (the client fell behind the output): {}", resyncs().await - before);
    result
}

/// Reads one flood through the stream until its `exit` frame: bytes, bytes missed, time taken,
/// time to the last byte.
/// Binary frames are checked to be contiguous; a JSON `output` frame is counted from the cursors
/// at its end without decoding `data`, as a renderer that hands the string straight to a terminal
/// widget would.
fn stream_flood(sock: &Path, id: &str, mode: Mode, daemon_pid: u32) -> (u64, u64, Duration, Duration) {
    let query = if mode == Mode::Binary { "&binary=1" } else { "" };
    let mut socket = RawWs::connect(sock, &format!("/sessions/{id}/stream?cursor=0{query}"));
    std::thread::sleep(Duration::from_millis(200)); // let stty run before "go"
    let (daemon_ticks, own_cpu) = (cpu_ticks(daemon_pid), cpu_ticks(std::process::id()));
    let start = Instant::now();
    socket.send_text(b"\n");
    let (mut total, mut missed, mut frames) = (0u64, 0u64, 0u64);
    let mut next = 0u64;
    let mut last_byte = start;
    while let Some(frame) = socket.next() {
        frames += 1;
        match frame.opcode {
            raw_ws::BINARY => {
                last_byte = Instant::now();
                // An 8-byte big-endian cursor, then raw bytes: count them, check they are contiguous.
                let cursor = u64::from_be_bytes(frame.payload[..8].try_into().unwrap());
                assert_eq!(cursor, next, "binary frames are contiguous");
                next = cursor + (frame.payload.len() - 8) as u64;
                total += (frame.payload.len() - 8) as u64;
            }
            raw_ws::TEXT if frame.payload.starts_with(br#"{"type":"output","#) => {
                let (cursor, total_written) = output_cursors(frame.payload);
                total += total_written - cursor;
                last_byte = Instant::now();
            }
            raw_ws::TEXT => {
                let frame: CountFrame = serde_json::from_slice(frame.payload).unwrap();
                match frame.kind.as_str() {
                    "lagged" => {
                        missed += frame.missed;
                        next = frame.cursor;
                    }
                    "exit" => break,
                    _ => {}
                }
            }
            raw_ws::CLOSE => break,
            _ => {}
        }
    }
    let elapsed = start.elapsed();
    println!(
        "  tuicd {}: {frames} frames, {} B per frame on average; exit frame {:.1} ms after the last byte; CPU daemon {:.2} s, client {:.2} s",
        mode.name(),
        total / frames.max(1),
        (start + elapsed - last_byte).as_secs_f64() * 1e3,
        (cpu_ticks(daemon_pid) - daemon_ticks) as f64 / 100.0,
        (cpu_ticks(std::process::id()) - own_cpu) as f64 / 100.0
    );
    (total, missed, elapsed, last_byte - start)
}

/// `cursor` and `total_written` of an `output` frame, read from its end:
/// `...","cursor":C,"total_written":T}`.
fn output_cursors(frame: &[u8]) -> (u64, u64) {
    let tail = &frame[frame.len().saturating_sub(64)..];
    let key = br#""cursor":"#;
    let at = tail.windows(key.len()).rposition(|w| w == key).expect("an output frame ends with its cursors");
    let tail: CountFrame = serde_json::from_slice(&[br#"{"type":"output","#.as_slice(), &tail[at..]].concat()).unwrap();
    (tail.cursor, tail.total_written)
}

/// The same flood with no stream client: how fast the daemon alone drains the PTY (go over REST,
/// end seen on /events).
async fn flood_unwatched(daemon: &Daemon, file: &Path) -> Duration {
    let mut events = daemon.client.get("http://tuic/events?types=session-closed").send().await.unwrap();
    let id = daemon.create(json!({"shell": "/bin/sh", "args": producer(file), "cwd": "/"})).await;
    tokio::time::sleep(Duration::from_millis(200)).await; // let stty run before "go"
    let start = Instant::now();
    let write = daemon.client.post(format!("http://tuic/sessions/{id}/write")).json(&json!({"data": "\n"}));
    assert!(write.send().await.unwrap().status().is_success());
    let mut seen = String::new();
    while !seen.contains(&id) {
        seen.push_str(&String::from_utf8_lossy(&events.chunk().await.unwrap().unwrap()));
    }
    start.elapsed()
}

async fn flood() {
    // In memory when /dev/shm exists: a file on disk would be written back during the first runs,
    // and the writeback kworkers would compete with the flood.
    let shm = Path::new("/dev/shm");
    let work = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let file = flood_file(work.path());
    let size = std::fs::metadata(&file).unwrap().len();
    // TUIC_BENCH_TUICD_B adds a second daemon build to the same alternation: an A/B comparison in
    // which both builds meet the same moments of a noisy machine.
    let mut daemons = vec![("", Daemon::start(json!({})).await)];
    if let Ok(other) = std::env::var("TUIC_BENCH_TUICD_B") {
        daemons.push((" [B]", Daemon::start_binary(json!({}), &other).await));
    }
    let mb_s = |bytes: u64, took: Duration| bytes as f64 / took.as_secs_f64() / 1e6;
    // Per mode and daemon: each run's throughput and its ratio to the direct run just before it.
    let mut direct_runs = Vec::new();
    let mut relay_runs = Vec::new();
    let mut sliced_runs: Vec<(f64, f64)> = Vec::new();
    // Per run: throughput to the exit frame, its ratio, and the ratio of the times to the last byte.
    let mut runs: Vec<ModeRuns> = Vec::new();
    // TUIC_BENCH_ROUNDS overrides the number of runs; TUIC_BENCH_FLOOD_MODES=json, binary or none
    // keeps one mode (or none); TUIC_BENCH_UNWATCHED=1 adds the daemon draining with no client;
    // TUIC_BENCH_RELAY=1 adds the minimal relay (`flood_relay`).
    let rounds = std::env::var("TUIC_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(FLOOD_RUNS);
    let only = std::env::var("TUIC_BENCH_FLOOD_MODES").unwrap_or_default();
    for mode in [Mode::Json, Mode::Binary] {
        if only.is_empty() || only == mode.key() {
            runs.extend((0..daemons.len()).map(|d| (mode, d, Vec::new())));
        }
    }
    for run in 1..=rounds {
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let load = load.split_whitespace().next().unwrap_or("?").to_owned();
        let direct_file = file.clone();
        let own_ticks = cpu_ticks(std::process::id());
        let (bytes, direct, direct_last) =
            tokio::task::spawn_blocking(move || flood_direct(&direct_file, DIRECT_READ)).await.unwrap();
        direct_runs.push(mb_s(bytes, direct));
        println!(
            "flood run {run} (load {load}): file {size} B; direct {bytes} B in {:.3} s ({:.0} MB/s), reader CPU {:.2} s",
            direct.as_secs_f64(),
            mb_s(bytes, direct),
            (cpu_ticks(std::process::id()) - own_ticks) as f64 / 100.0
        );
        if std::env::var_os("TUIC_BENCH_DIRECT_SLICE").is_some() {
            // The direct reader reading as tuicd's reader does, at most PTY_READ_SLICE per read():
            // how much of tuicd's figure is that way of reading the PTY.
            let sliced_file = file.clone();
            let slice = tuicd::limits::PTY_READ_SLICE;
            let (got, took, _) = tokio::task::spawn_blocking(move || flood_direct(&sliced_file, slice)).await.unwrap();
            let ratio = mb_s(got, took) / mb_s(bytes, direct);
            sliced_runs.push((mb_s(got, took), ratio));
            println!("flood run {run}: direct in {slice} B reads {:.0} MB/s, ratio {ratio:.3}", mb_s(got, took));
        }
        if std::env::var_os("TUIC_BENCH_RELAY").is_some() {
            let relay_file = file.clone();
            let hop = std::env::var_os("TUIC_BENCH_RELAY_HOP").is_some();
            let sync = std::env::var_os("TUIC_BENCH_RELAY_SYNC").is_some();
            let (got, took) = tokio::task::spawn_blocking(move || flood_relay(&relay_file, hop, sync)).await.unwrap();
            let ratio = mb_s(got, took) / mb_s(bytes, direct);
            relay_runs.push(ratio);
            println!("flood run {run}: minimal relay {:.0} MB/s, ratio {ratio:.3}", mb_s(got, took));
        }
        if std::env::var_os("TUIC_BENCH_UNWATCHED").is_some() {
            for (label, daemon) in &daemons {
                let took = flood_unwatched(daemon, &file).await;
                let ratio = mb_s(bytes, took) / mb_s(bytes, direct);
                println!(
                    "flood run {run}: tuicd{label} with no client {:.0} MB/s, ratio {ratio:.3}",
                    mb_s(bytes, took)
                );
            }
        }
        // Every other round in reverse order, so no arm always follows the same one.
        let order: Vec<usize> = if run % 2 == 1 { (0..runs.len()).collect() } else { (0..runs.len()).rev().collect() };
        for i in order {
            let (mode, d, results) = &mut runs[i];
            let (label, daemon) = &daemons[*d];
            let (got, missed, via, via_last) = flood_tuicd(daemon, &file, *mode).await;
            // Only what reached the client counts.
            let ratio = mb_s(got, via) / mb_s(bytes, direct);
            let ratio_last = mb_s(got, via_last) / mb_s(bytes, direct_last);
            results.push((mb_s(got, via), ratio, ratio_last));
            println!(
                "flood run {run}: tuicd{label} WS {}: {got} B (+{missed} missed) in {:.3} s ({:.0} MB/s), ratio to this run's direct {ratio:.3} (to the last byte {ratio_last:.3})",
                mode.name(),
                via.as_secs_f64(),
                mb_s(got, via),
            );
        }
    }
    let direct_median = median(&direct_runs);
    if !sliced_runs.is_empty() {
        let speeds: Vec<f64> = sliced_runs.iter().map(|r| r.0).collect();
        let ratios: Vec<f64> = sliced_runs.iter().map(|r| r.1).collect();
        println!(
            "flood direct in {} B reads over {} runs: median {:.0} MB/s, ratio {:.3}; per-run ratios median {:.3}, mean {:.3}",
            tuicd::limits::PTY_READ_SLICE,
            sliced_runs.len(),
            median(&speeds),
            median(&speeds) / direct_median,
            median(&ratios),
            mean(&ratios)
        );
    }
    if !relay_runs.is_empty() {
        println!(
            "flood minimal relay over {} runs: per-run ratios median {:.3}, mean {:.3}",
            relay_runs.len(),
            median(&relay_runs),
            mean(&relay_runs)
        );
    }
    for (mode, d, results) in &runs {
        let tuicd_median = median(&results.iter().map(|r| r.0).collect::<Vec<_>>());
        let ratios: Vec<f64> = results.iter().map(|r| r.1).collect();
        let to_last: Vec<f64> = results.iter().map(|r| r.2).collect();
        println!(
            "flood{} {} over {} runs: median direct {direct_median:.0} MB/s vs tuicd {tuicd_median:.0} MB/s, ratio {:.3}; \
             per-run ratios: median {:.3}, mean {:.3}; to the last byte: median {:.3}, mean {:.3}",
            daemons[*d].0,
            mode.name(),
            results.len(),
            tuicd_median / direct_median,
            median(&ratios),
            mean(&ratios),
            median(&to_last),
            mean(&to_last),
        );
        if *d > 0 {
            // The A/B figure: B's throughput over A's in the same round, same mode.
            let a = runs.iter().find(|(m, d, _)| m == mode && *d == 0).map(|r| &r.2).unwrap();
            let per_round: Vec<f64> = results.iter().zip(a).map(|(b, a)| b.0 / a.0).collect();
            println!(
                "flood {} B/A per round: median {:.3}, mean {:.3}",
                mode.name(),
                median(&per_round),
                mean(&per_round)
            );
        }
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) { (sorted[mid - 1] + sorted[mid]) / 2.0 } else { sorted[mid] }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sends `iterations` keystrokes (after 50 to warm up), each once the previous one's echo came
/// back; returns the round trips.
async fn echo_rounds(sock: &Path, id: &str, iterations: usize) -> Vec<Duration> {
    let mut socket = connect_stream(sock, id, "").await;
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..iterations + 50 {
        let key = [b'a' + (i % 26) as u8];
        let start = Instant::now();
        socket.send(Message::binary(key.to_vec())).await.unwrap();
        loop {
            let Some(Ok(Message::Text(text))) = socket.next().await else { panic!("socket closed") };
            let frame: Frame = serde_json::from_str(&text).unwrap();
            if frame.kind == "output" && frame.data.as_bytes().contains(&key[0]) {
                break;
            }
        }
        if i >= 50 {
            samples.push(start.elapsed());
        }
    }
    samples
}

/// The echo round trips of `iterations` keystrokes to `cat` in `daemon`'s session `id`.
async fn echo_samples(daemon: &Daemon, id: &str, iterations: usize) -> Vec<Duration> {
    // Like the flood client: its own thread and current-thread runtime, so the round trip has no
    // hop between the bench runtime's reactor and a worker in it.
    let sock = daemon.dir.path().join("mcp.sock");
    let id = id.to_owned();
    let client = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(echo_rounds(&sock, &id, iterations))
    });
    tokio::task::spawn_blocking(move || client.join().unwrap()).await.unwrap()
}

async fn echo() {
    // TUIC_BENCH_TUICD_B adds a second daemon build: the iterations then run in ECHO_BLOCKS
    // alternating blocks per build, so both meet the same moments of a noisy machine.
    let mut daemons = vec![("", Daemon::start(json!({})).await)];
    if let Ok(other) = std::env::var("TUIC_BENCH_TUICD_B") {
        daemons.push((" [B]", Daemon::start_binary(json!({}), &other).await));
    }
    let mut ids = Vec::new();
    for (_, daemon) in &daemons {
        ids.push(daemon.create(json!({"shell": "/bin/cat", "cwd": "/"})).await);
    }
    // TUIC_BENCH_ECHO_ITERATIONS overrides the count (a longer run to profile the daemon under).
    let iterations =
        std::env::var("TUIC_BENCH_ECHO_ITERATIONS").ok().and_then(|n| n.parse().ok()).unwrap_or(ECHO_ITERATIONS);
    let blocks = if daemons.len() > 1 { ECHO_BLOCKS } else { 1 };
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); daemons.len()];
    for block in 0..blocks {
        let order: Vec<usize> =
            if block % 2 == 0 { (0..daemons.len()).collect() } else { (0..daemons.len()).rev().collect() };
        for d in order {
            samples[d].extend(echo_samples(&daemons[d].1, &ids[d], iterations / blocks).await);
        }
    }
    let affinity = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list"))
        .map(|l| l.split_whitespace().last().unwrap_or("?").to_owned())
        .unwrap_or_default();
    for ((label, _), samples) in daemons.iter().zip(&mut samples) {
        samples.sort();
        let pct = |p: f64| samples[((samples.len() as f64 * p) as usize).min(samples.len() - 1)];
        println!(
            "echo{label} ({} iterations, cpus {affinity}): p50 {:?}, p99 {:?}, max {:?}",
            samples.len(),
            pct(0.50),
            pct(0.99),
            samples.last().unwrap()
        );
    }
}

fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status.lines().find(|l| l.starts_with("VmRSS")).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

async fn settle(daemon: &Daemon, count: usize) {
    // Wait until every shell printed its prompt, so the daemon is idle.
    let start = Instant::now();
    loop {
        let list: Value = daemon.client.get("http://tuic/sessions").send().await.unwrap().json().await.unwrap();
        let ready = list.as_array().unwrap().iter().filter(|s| s["shell_state"] == "idle").count();
        if ready == count {
            return;
        }
        assert!(start.elapsed() < DEADLINE, "{ready}/{count} sessions idle");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn idle() {
    let ticks_per_sec = 100.0; // USER_HZ on Linux
    let daemon = Daemon::start(json!({"max_sessions": IDLE_SESSIONS + 10})).await;
    let base = rss_kb(daemon.pid());
    for _ in 0..IDLE_CPU_SESSIONS {
        daemon.create(json!({"shell": "/bin/sh", "cwd": "/"})).await;
    }
    settle(&daemon, IDLE_CPU_SESSIONS).await;
    // A session that just had output keeps its agent ticker for AGENT_TICK_LINGER (6 s) so its
    // silence timers resolve; idle means after that. Wait for one quiet second (no CPU tick),
    // bounded, then measure.
    let quiet_from = Instant::now();
    loop {
        let ticks = cpu_ticks(daemon.pid());
        tokio::time::sleep(Duration::from_secs(1)).await;
        if cpu_ticks(daemon.pid()) == ticks {
            break;
        }
        assert!(quiet_from.elapsed() < Duration::from_secs(30), "the daemon never went quiet");
    }
    println!("daemon quiet {:.1} s after the shells settled", quiet_from.elapsed().as_secs_f64());
    let before = cpu_ticks(daemon.pid());
    tokio::time::sleep(IDLE_CPU_WINDOW).await;
    let used = (cpu_ticks(daemon.pid()) - before) as f64 / ticks_per_sec;
    println!(
        "idle CPU with {IDLE_CPU_SESSIONS} idle sessions: {:.3}% of a core over {:?}",
        used / IDLE_CPU_WINDOW.as_secs_f64() * 100.0,
        IDLE_CPU_WINDOW
    );
    for _ in IDLE_CPU_SESSIONS..IDLE_SESSIONS {
        daemon.create(json!({"shell": "/bin/sh", "cwd": "/"})).await;
    }
    settle(&daemon, IDLE_SESSIONS).await;
    let after = rss_kb(daemon.pid());
    println!(
        "RSS with {IDLE_SESSIONS} idle sessions: {after} KiB (baseline {base} KiB): {:.1} KiB per session",
        (after - base) as f64 / IDLE_SESSIONS as f64
    );
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |name: &str| args.is_empty() || args.iter().any(|a| a == name);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        if wanted("flood") {
            flood().await;
        }
        if wanted("echo") {
            echo().await;
        }
        if wanted("idle") {
            idle().await;
        }
    });
}
