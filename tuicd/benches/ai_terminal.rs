//! The `ai_terminal_*` figures of issue 18, over the daemon's Unix socket:
//! 1. `ai_terminal_drive_agent` against the fake agent CLI (send, wait for idle, read the screen,
//!    confirmed by a scripted answerer on `/events?ui=confirm`), against the same fake agent in a
//!    bare PTY (write the task, read until its prompt returns): the p50 the tool adds over the
//!    agent's own turn.
//! 2. `ai_terminal_search_files` on a generated 100,000-file git repository whose `.gitignore`
//!    hides a fifth of it: p50 and tuicd's peak RSS (VmHWM), with ripgrep (`rg`, Debian's
//!    `ripgrep`) on the same tree as the floor when it is installed.
//!
//! Run: `cargo bench -p tuicd --bench ai_terminal` (release). Prints a Markdown table. Bounded:
//! `TUIC_BENCH_ROUNDS` rounds (default 15 drive, 7 search), each answer within a deadline.

// Test code: an unwrap that fails is a failed test, with its location.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

mod common;
use common::{http1, median, start_daemon};

/// The generated repository: `TRACKED` files in `src/`, `IGNORED` more under the ignored `target/`.
const TRACKED: usize = 80_000;
const IGNORED: usize = 20_000;
const PER_DIR: usize = 100;
const NEEDLE: &str = "needle_q7x";
/// Longest wait for one turn of the bare agent.
const DEADLINE: Duration = Duration::from_secs(20);

fn fake_agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-agent/fake-agent")
}

fn rounds(default: usize) -> usize {
    std::env::var("TUIC_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(default)
}

/// `tools/call name arguments`; the tool's answer parsed from its text content.
async fn call(conn: &mut UnixStream, name: &str, arguments: Value) -> Value {
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let accept = [("Accept", "application/json, text/event-stream")];
    let (status, answer) = http1::request(conn, "POST", "/mcp", &accept, &body.to_string()).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    let result = &answer["result"];
    assert_ne!(result["isError"], json!(true), "{name}: {answer}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// A person who confirms every `ai_terminal` request: an `/events?ui=confirm` stream whose
/// requests are answered over REST. Returns once the stream is open.
async fn answer_confirms(socket: &Path) -> tokio::task::JoinHandle<()> {
    let mut events = UnixStream::connect(socket).await.unwrap();
    let head = "GET /events?ui=confirm&types=ui-confirm-requested HTTP/1.1\r\nHost: tuic\r\n\r\n";
    events.write_all(head.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = events.read(&mut buf).await.unwrap();
        assert!(n > 0, "the events stream closed");
        seen.extend_from_slice(&buf[..n]);
    }
    let socket = socket.to_path_buf();
    tokio::spawn(async move {
        let ids = regex::Regex::new(r#"data: ?\{"id":"([^"]+)""#).unwrap();
        let mut answer = UnixStream::connect(&socket).await.unwrap();
        let mut pending = String::new();
        loop {
            let n = events.read(&mut buf).await.unwrap();
            if n == 0 {
                return;
            }
            pending.push_str(&String::from_utf8_lossy(&buf[..n]));
            let Some(end) = pending.rfind('\n') else { continue };
            let complete: String = pending.drain(..=end).collect();
            for id in ids.captures_iter(&complete) {
                let path = format!("/ui/confirm/{}", &id[1]);
                let (status, _) = http1::request(&mut answer, "POST", &path, &[], r#"{"confirmed":true}"#).await;
                assert_eq!(status, 200);
            }
        }
    })
}

/// The fake agent in a bare PTY, waiting at its prompt.
struct BareAgent {
    pty: pty_process::Pty,
    _child: tokio::process::Child,
}

impl BareAgent {
    async fn start(cwd: &Path) -> Self {
        let (pty, pts) = pty_process::open().unwrap();
        pty.resize(pty_process::Size::new(24, 80)).unwrap();
        let child = pty_process::Command::new(fake_agent()).current_dir(cwd).kill_on_drop(true).spawn(pts).unwrap();
        let mut agent = Self { pty, _child: child };
        agent.read_until(b"\r\n> ").await;
        agent
    }

    async fn read_until(&mut self, end: &[u8]) {
        let mut output = Vec::new();
        let mut buf = [0u8; 4096];
        let read = async {
            while !output.windows(end.len()).any(|w| w == end) {
                let n = self.pty.read(&mut buf).await.expect("read the PTY");
                output.extend_from_slice(&buf[..n]);
            }
        };
        tokio::time::timeout(DEADLINE, read).await.expect("the bare agent answers");
    }

    /// One turn: the task typed, until the prompt after its completion marker.
    async fn turn(&mut self, task: &str) -> Duration {
        let start = Instant::now();
        self.pty.write_all(format!("{task}\r").as_bytes()).await.unwrap();
        self.read_until(b"suggest: [ Run tests | Open PR ]\r\n\x1b]7770;state=idle\x07\r\n> ").await;
        start.elapsed()
    }
}

async fn drive(rounds: usize) -> (f64, f64, f64) {
    let daemon = start_daemon(&[]).await;
    let mut conn = UnixStream::connect(&daemon.socket).await.unwrap();
    let (status, _) = http1::request(&mut conn, "PUT", "/config", &[], r#"{"ai_terminal_mcp_enabled":true}"#).await;
    assert_eq!(status, 200);
    let _person = answer_confirms(&daemon.socket).await;
    let cwd = tempfile::tempdir().unwrap();
    let body = json!({"shell": fake_agent(), "agent_type": "claude", "cwd": cwd.path()}).to_string();
    let (status, created) = http1::request(&mut conn, "POST", "/sessions", &[], &body).await;
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&created));
    let id = serde_json::from_slice::<Value>(&created).unwrap()["session_id"].as_str().unwrap().to_owned();
    // Without a command the tool only waits for idle: the agent's start-up is out of the figures.
    call(&mut conn, "ai_terminal_drive_agent", json!({"session_id": id, "timeout_ms": 15000})).await;
    let mut bare = BareAgent::start(cwd.path()).await;
    let (mut tool, mut own, mut added) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds + 1 {
        let task = format!("task {round}");
        let floor = bare.turn(&task).await.as_secs_f64() * 1000.0;
        let start = Instant::now();
        let args = json!({"session_id": id, "command": task, "timeout_ms": 15000});
        let driven = call(&mut conn, "ai_terminal_drive_agent", args).await;
        let took = start.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(driven["reason"], json!("idle"), "{driven}");
        assert!(driven["screen"].as_str().unwrap().contains(&format!("done: {task}")), "{driven}");
        assert_eq!(driven["session_state"]["turn_epoch"], json!(round + 1), "{driven}");
        // The first round warms both sides.
        if round > 0 {
            tool.push(took);
            own.push(floor);
            added.push(took - floor);
        }
    }
    (median(&mut tool), median(&mut own), median(&mut added))
}

/// The 100,000-file repository: `src/dNNN/fNN.txt` tracked, `target/` ignored; the needle is in
/// ten tracked files and a hundred ignored ones.
fn generate(root: &Path) {
    let body: String = (0..20).map(|n| format!("line {n}: some ordinary text of a source file\n")).collect();
    for (top, count) in [("src", TRACKED), ("target", IGNORED)] {
        for n in 0..count {
            let dir = root.join(top).join(format!("d{:04}", n / PER_DIR));
            if n % PER_DIR == 0 {
                std::fs::create_dir_all(&dir).unwrap();
            }
            let needle = (top == "src" && n % (TRACKED / 10) == 7) || (top == "target" && n % (IGNORED / 100) == 3);
            let text = if needle { format!("{body}let {NEEDLE} = 1;\n") } else { body.clone() };
            std::fs::write(dir.join(format!("f{:02}.txt", n % PER_DIR)), text).unwrap();
        }
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    let init = std::process::Command::new("git").args(["init", "-q"]).current_dir(root).status().unwrap();
    assert!(init.success());
}

fn proc_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// One `rg -n NEEDLE` over `root`: its time and peak RSS (KiB, from /usr/bin/time), or None
/// when ripgrep is not installed.
fn ripgrep(root: &Path) -> Option<(f64, u64)> {
    let start = Instant::now();
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M", "rg", "-n", NEEDLE])
        .current_dir(root)
        .output()
        .ok()?;
    let took = start.elapsed().as_secs_f64() * 1000.0;
    if !out.status.success() {
        return None;
    }
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 10, "rg honours .gitignore");
    let kb = String::from_utf8_lossy(&out.stderr).lines().last()?.trim().parse().ok()?;
    Some((took, kb))
}

struct Searched {
    p50: f64,
    rss_before_kb: u64,
    peak_kb: u64,
    rg: Option<(f64, u64)>,
}

async fn search(rounds: usize) -> Searched {
    let tree = tempfile::tempdir().unwrap();
    let started = Instant::now();
    generate(tree.path());
    eprintln!("generated {} files in {:.1}s", TRACKED + IGNORED, started.elapsed().as_secs_f64());
    let daemon = start_daemon(&[]).await;
    let pid = daemon.child.id().unwrap();
    let mut conn = UnixStream::connect(&daemon.socket).await.unwrap();
    let (status, _) = http1::request(&mut conn, "PUT", "/config", &[], r#"{"ai_terminal_mcp_enabled":true}"#).await;
    assert_eq!(status, 200);
    let body = json!({"shell": "/bin/sh", "cwd": tree.path()}).to_string();
    let (status, created) = http1::request(&mut conn, "POST", "/sessions", &[], &body).await;
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&created));
    let id = serde_json::from_slice::<Value>(&created).unwrap()["session_id"].as_str().unwrap().to_owned();
    let rss_before_kb = proc_kb(pid, "VmRSS:");
    let (mut ours, mut theirs, mut rg_peak) = (Vec::new(), Vec::new(), 0);
    for round in 0..rounds + 1 {
        let rg = ripgrep(tree.path());
        let start = Instant::now();
        let found = call(&mut conn, "ai_terminal_search_files", json!({"session_id": id, "pattern": NEEDLE})).await;
        let took = start.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(found["matches"].as_array().unwrap().len(), 10, "tuicd honours .gitignore: {found}");
        assert_eq!(found["files_searched"], json!(TRACKED + 1), "the tracked files and .gitignore");
        if round > 0 {
            ours.push(took);
            if let Some((ms, kb)) = rg {
                theirs.push(ms);
                rg_peak = rg_peak.max(kb);
            }
        }
    }
    let rg = (!theirs.is_empty()).then(|| (median(&mut theirs), rg_peak));
    Searched { p50: median(&mut ours), rss_before_kb, peak_kb: proc_kb(pid, "VmHWM:"), rg }
}

#[tokio::main]
async fn main() {
    let (tool, own, added) = drive(rounds(15)).await;
    let searched = search(rounds(7)).await;
    println!("| figure | p50 |");
    println!("|---|---|");
    println!("| fake agent turn in a bare PTY (the floor) | {own:.1} ms |");
    println!("| `ai_terminal_drive_agent` turn (confirm, submit, idle, read) | {tool:.1} ms |");
    println!("| added by the tool (per-round difference) | {added:.1} ms |");
    println!("| `ai_terminal_search_files`, 100,000 files (80,000 searched) | {:.1} ms |", searched.p50);
    println!(
        "| tuicd RSS before the searches / peak (VmHWM) | {:.1} MiB / {:.1} MiB |",
        searched.rss_before_kb as f64 / 1024.0,
        searched.peak_kb as f64 / 1024.0
    );
    match searched.rg {
        Some((ms, kb)) => {
            println!("| ripgrep `rg -n` on the same tree / its peak RSS | {ms:.1} ms / {:.1} MiB |", kb as f64 / 1024.0)
        }
        None => println!("| ripgrep | not installed |"),
    }
}
