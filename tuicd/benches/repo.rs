//! `repo action=status` over 20 registered repositories of 5,000 files each, beside its floor:
//! `git status --porcelain=v2` run directly in a loop on the same repositories. Then one repository
//! of 100,000 files: `/repo/changed-files` answers, and the daemon's peak RSS stays bounded.
//!
//! Run: `cargo bench -p tuicd --bench repo` (release). `REPO_BENCH_ROUNDS` (default 30) rounds.

// Bench code: an unwrap that fails is a failed run, with its location.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tokio::net::UnixStream;

const REPOS: usize = 20;
const FILES_PER_REPO: usize = 5_000;
const BIG_REPO_FILES: usize = 100_000;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@example.com")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A committed repository of `files` small files in directories of 100, with a few edits and
/// one untracked file, so status has something to report.
fn make_repo(dir: &Path, files: usize, commit: bool) {
    for i in 0..files {
        let sub = dir.join(format!("d{:03}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&sub).unwrap();
        }
        std::fs::write(sub.join(format!("f{i}.txt")), format!("file {i}\n")).unwrap();
    }
    git(dir, &["init", "-q", "-b", "main"]);
    if commit {
        git(dir, &["add", "."]);
        git(dir, &["commit", "-q", "-m", "files"]);
        for i in 0..5 {
            std::fs::write(dir.join(format!("d000/f{i}.txt")), "edited\n").unwrap();
        }
        std::fs::write(dir.join("new.txt"), "new\n").unwrap();
    }
}

fn pct(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

async fn connect(daemon: &common::Daemon) -> UnixStream {
    UnixStream::connect(&daemon.socket).await.unwrap()
}

async fn mcp_call(conn: &mut UnixStream, session: &str, args: &str) -> Vec<u8> {
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"repo","arguments":{args}}}}}"#);
    let headers = [("mcp-session-id", session), ("accept", "application/json, text/event-stream")];
    let (status, answer) = common::http1::request(conn, "POST", "/mcp", &headers, &body).await;
    assert_eq!(status, 200);
    assert!(!String::from_utf8_lossy(&answer).contains(r#"\"error\""#), "{}", String::from_utf8_lossy(&answer));
    answer
}

/// The daemon's peak resident set (VmHWM), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

#[tokio::main]
async fn main() {
    let rounds: usize = std::env::var("REPO_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let tmp = tempfile::Builder::new().prefix("tuic-repo-bench").tempdir().unwrap();
    let started = Instant::now();
    let repos: Vec<PathBuf> = (0..REPOS)
        .map(|i| {
            let dir = tmp.path().join(format!("repo{i:02}"));
            std::fs::create_dir_all(&dir).unwrap();
            make_repo(&dir, FILES_PER_REPO, true);
            dir
        })
        .collect();
    eprintln!("made {REPOS} repositories of {FILES_PER_REPO} files in {:.1?}", started.elapsed());

    let daemon = common::start_daemon(&[]).await;
    let mut conn = connect(&daemon).await;
    for dir in &repos {
        let body = format!(r#"{{"path":"{}"}}"#, dir.display());
        let (status, _) = common::http1::request(&mut conn, "POST", "/repos", &[], &body).await;
        assert_eq!(status, 201);
    }
    let session = initialize_session(&daemon).await;

    // Warm every repository's index and the page cache once.
    mcp_call(&mut conn, &session, r#"{"action":"status"}"#).await;
    let (mut all, mut floor_loop, mut one, mut floor_one) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let one_args = format!(r#"{{"action":"status","path":"{}"}}"#, repos[0].display());
    for _ in 0..rounds {
        let t = Instant::now();
        mcp_call(&mut conn, &session, r#"{"action":"status"}"#).await;
        all.push(t.elapsed());
        let t = Instant::now();
        for dir in &repos {
            let out = Command::new("git").arg("-C").arg(dir).args(["status", "--porcelain=v2"]).output().unwrap();
            assert!(out.status.success());
        }
        floor_loop.push(t.elapsed());
        let t = Instant::now();
        mcp_call(&mut conn, &session, &one_args).await;
        one.push(t.elapsed());
        let t = Instant::now();
        let out = Command::new("git").arg("-C").arg(&repos[0]).args(["status", "--porcelain=v2"]).output().unwrap();
        assert!(out.status.success());
        floor_one.push(t.elapsed());
    }
    let (a50, a99, f50, f99) =
        (pct(&mut all, 0.5), pct(&mut all, 0.99), pct(&mut floor_loop, 0.5), pct(&mut floor_loop, 0.99));
    let (o50, o99, g50, g99) =
        (pct(&mut one, 0.5), pct(&mut one, 0.99), pct(&mut floor_one, 0.5), pct(&mut floor_one, 0.99));
    println!("| figure ({rounds} rounds) | p50 | p99 |");
    println!("|---|---|---|");
    println!("| `repo action=status`, all {REPOS} repos ({FILES_PER_REPO} files each) | {} | {} |", ms(a50), ms(a99));
    println!("| floor: `git status --porcelain=v2` on the {REPOS} repos in a loop | {} | {} |", ms(f50), ms(f99));
    println!(
        "| ratio all / floor | {:.2}x | {:.2}x |",
        a50.as_secs_f64() / f50.as_secs_f64(),
        a99.as_secs_f64() / f99.as_secs_f64()
    );
    println!("| `repo action=status path=` (one repo) | {} | {} |", ms(o50), ms(o99));
    println!("| floor: one `git status --porcelain=v2` | {} | {} |", ms(g50), ms(g99));
    println!(
        "| ratio one / floor | {:.2}x | {:.2}x |",
        o50.as_secs_f64() / g50.as_secs_f64(),
        o99.as_secs_f64() / g99.as_secs_f64()
    );

    // One repository of 100,000 untracked files.
    let big = tmp.path().join("big");
    std::fs::create_dir_all(&big).unwrap();
    make_repo(&big, BIG_REPO_FILES, false);
    let pid = daemon.child.id().unwrap();
    let before = peak_rss_kib(pid);
    let path: String = form_urlencoded::byte_serialize(big.display().to_string().as_bytes()).collect();
    let t = Instant::now();
    let (status, answer) =
        common::http1::request(&mut conn, "GET", &format!("/repo/changed-files?path={path}"), &[], "").await;
    let took = t.elapsed();
    assert_eq!(status, 200);
    let answer: serde_json::Value = serde_json::from_slice(&answer).unwrap();
    let after = peak_rss_kib(pid);
    println!(
        "| `/repo/changed-files` on {BIG_REPO_FILES} untracked files | {} | answer: {} files, truncated {}, {} bytes of JSON; daemon peak RSS {before} KiB before, {after} KiB after |",
        ms(took),
        answer["count"],
        answer["truncated"],
        serde_json::to_vec(&answer).unwrap().len()
    );
}

/// Opens an MCP protocol session and returns its id (read from the response head).
async fn initialize_session(daemon: &common::Daemon) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    let mut conn = connect(daemon).await;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: tuic\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    conn.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response);
    text.lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("mcp-session-id:")
                .map(|_| l.split_once(':').unwrap().1.trim().to_owned())
        })
        .expect("an mcp-session-id header")
}
