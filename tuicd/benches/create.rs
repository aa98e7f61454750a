//! Session creation to the first prompt: `POST /sessions` of an interactive bash, then its first
//! prompt on the session's WebSocket (binary frames), against a bare pty-process spawn of the same
//! bash (same size, working directory, arguments and environment) reading its own PTY until the
//! prompt. Both run bash with `--norc`: an rc file's own start-up would hide what the daemon
//! adds. Both run in the same process, alternating round by round (bare first), bounded in count
//! and time; the medians and the median per-round ratio are reported.
//!
//! Run: `cargo bench -p tuicd --bench create`. `TUIC_BENCH_ROUNDS` sets the rounds (default 40);
//! `TUIC_BENCH_TUICD` runs another daemon build (for a before-figure).

// Test code: an unwrap that fails is a failed test, with its location.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;
use tokio_tungstenite::tungstenite::Message;

mod common;
use common::http1;

const ROUNDS: usize = 40;
/// Longest wait for one answer or one prompt.
const DEADLINE: Duration = Duration::from_secs(10);
const BASH: &str = "/bin/bash";
const BASH_ARGS: [&str; 1] = ["--norc"];
const ROWS: u16 = 24;
const COLS: u16 = 80;

/// The end of bash's prompt, `$ ` (or `# ` for root), as the default PS1 and Debian's rc draw it.
fn has_prompt(output: &[u8]) -> bool {
    output.windows(2).any(|w| w == b"$ " || w == b"# ")
}

/// The spawn tuicd makes (`session/spawn.rs`), without the daemon: open, size, spawn, read.
async fn bare(cwd: &Path) -> Duration {
    let start = Instant::now();
    let (mut pty, pts) = pty_process::open().unwrap();
    pty.resize(pty_process::Size::new(ROWS, COLS)).unwrap();
    let mut child = pty_process::Command::new(BASH)
        .args(BASH_ARGS)
        .current_dir(cwd)
        .env("TERM", "xterm-256color")
        .env("COLORTERM", "truecolor")
        .env("TUIC_SESSION", uuid::Uuid::new_v4().to_string())
        .kill_on_drop(true)
        .spawn(pts)
        .unwrap();
    let mut output = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        while !has_prompt(&output) {
            let n = pty.read(&mut buf).await.expect("read the PTY");
            output.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(DEADLINE, read).await.expect("bare bash reaches its prompt");
    let took = start.elapsed();
    let _ = child.start_kill();
    let _ = child.wait().await;
    took
}

/// `POST /sessions` answered, and the first prompt on the session's WebSocket, both from the
/// request; the session is closed afterwards.
async fn tuicd(socket: &Path, conn: &mut UnixStream, cwd: &Path) -> (Duration, Duration) {
    let body = json!({"shell": BASH, "args": BASH_ARGS, "cwd": cwd, "rows": ROWS, "cols": COLS}).to_string();
    let start = Instant::now();
    let (status, created) = http1::request(conn, "POST", "/sessions", &[], &body).await;
    let posted = start.elapsed();
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&created));
    let created: Value = serde_json::from_slice(&created).unwrap();
    let id = created["session_id"].as_str().unwrap().to_owned();
    let stream = UnixStream::connect(socket).await.unwrap();
    let url = format!("ws://tuic/sessions/{id}/stream?cursor=0&binary=1");
    let (mut ws, _) = tokio_tungstenite::client_async(url, stream).await.unwrap();
    let mut output = Vec::new();
    let read = async {
        while !has_prompt(&output) {
            match ws.next().await.expect("the stream stays open").unwrap() {
                Message::Binary(frame) => output.extend_from_slice(&frame[8..]),
                Message::Close(_) => panic!("the session's stream closed before its prompt"),
                _ => {}
            }
        }
    };
    tokio::time::timeout(DEADLINE, read).await.expect("the tuicd session reaches its prompt");
    let prompt = start.elapsed();
    let (status, _) = http1::request(conn, "DELETE", &format!("/sessions/{id}"), &[], "").await;
    assert!(status < 300 || status == 410, "DELETE answered {status}");
    (posted, prompt)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let rounds = std::env::var("TUIC_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(ROUNDS);
    let mut daemon = common::start_daemon(&[]).await;
    let cwd = std::env::var_os("HOME").map(PathBuf::from).filter(|p| p.is_dir()).unwrap_or_else(|| "/".into());
    let mut conn = UnixStream::connect(&daemon.socket).await.unwrap();
    // One unmeasured round each: page cache, the daemon's lazily built parts.
    bare(&cwd).await;
    tuicd(&daemon.socket, &mut conn, &cwd).await;
    let (mut bares, mut posts, mut prompts, mut ratios) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let b = bare(&cwd).await.as_secs_f64() * 1e3;
        let (post, prompt) = tuicd(&daemon.socket, &mut conn, &cwd).await;
        let (post, prompt) = (post.as_secs_f64() * 1e3, prompt.as_secs_f64() * 1e3);
        bares.push(b);
        posts.push(post);
        prompts.push(prompt);
        ratios.push(prompt / b);
    }
    let command = format!("{BASH} {}", BASH_ARGS.join(" "));
    println!("{rounds} alternating rounds ({command}, {ROWS}x{COLS}, cwd {}), medians:\n", cwd.display());
    println!("| measure | p50 ms |");
    println!("|---|---|");
    println!("| bare pty-process spawn -> first prompt | {:.2} |", common::median(&mut bares));
    println!("| tuicd `POST /sessions` answered | {:.2} |", common::median(&mut posts));
    println!("| tuicd `POST /sessions` -> first prompt on the WebSocket | {:.2} |", common::median(&mut prompts));
    println!(
        "\nmedian round: tuicd create-to-prompt / bare spawn-to-prompt = {:.2}x (target <= 1.5x)",
        common::median(&mut ratios)
    );
    let _ = daemon.child.start_kill();
}
