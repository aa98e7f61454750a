//! The daemon never spins or hangs: a child that never reads its input, a close while the writer
//! is blocked on it, and SIGTERM with such a writer. CPU is read from /proc over a bounded window.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use tuicd::limits::{SHUTDOWN_DRAIN, SHUTDOWN_SESSIONS, SHUTDOWN_TASKS};

use crate::harness::*;

/// How long the daemon's CPU use is sampled; a spinning worker burns all of it.
const CPU_WINDOW: Duration = Duration::from_millis(1500);

/// utime + stime of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process is alive");
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th overall.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn ticks_per_second() -> u64 {
    let out = std::process::Command::new("getconf").arg("CLK_TCK").output().expect("getconf runs");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// The share of one core the process used over [`CPU_WINDOW`].
async fn cpu_share(pid: u32) -> f64 {
    let (before, start) = (cpu_ticks(pid), Instant::now());
    tokio::time::sleep(CPU_WINDOW).await;
    let used = (cpu_ticks(pid) - before) as f64 / ticks_per_second() as f64;
    used / start.elapsed().as_secs_f64()
}

/// A session whose child never reads, with 1 MB of lines queued to it (more than the terminal
/// takes: the writer is left blocked). Returns (session id, child pid).
async fn blocked_writer(daemon: &Daemon) -> (String, u32) {
    let body = json!({"shell": "/bin/sh", "args": ["-c", "sleep 100"], "cwd": "/"});
    let (status, created) = daemon.post("/sessions", body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["session_id"].as_str().unwrap().to_owned();
    let line = format!("{}\n", "x".repeat(99));
    let (status, body) = daemon.post(&format!("/sessions/{id}/write"), json!({"data": line.repeat(10_000)})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The terminal echoes what its line discipline took: once that holds ~4 KiB of lines it
    // takes no more, and the writer waits on the child with the rest.
    let info = wait_until("the line discipline's buffer is full", DEADLINE, || async {
        let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
        (info["total_written"].as_u64() >= Some(4000)).then_some(info)
    })
    .await;
    (id, info["pid"].as_u64().expect("the child's pid") as u32)
}

/// Sends SIGTERM and waits, at most for every shutdown bound plus slack, for the exit.
async fn terminate_within_bounds(daemon: &mut Daemon) -> Duration {
    let bound = SHUTDOWN_SESSIONS + SHUTDOWN_DRAIN + SHUTDOWN_TASKS + Duration::from_secs(3);
    let pid = daemon.pid();
    let start = Instant::now();
    let _ = std::process::Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
    wait_until("tuicd exits after SIGTERM", bound, || async {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        // Gone, or a zombie waiting for the test's own reaper: either way it has exited.
        state.is_none_or(|s| s[s.rfind(')').unwrap() + 2..].starts_with('Z')).then_some(())
    })
    .await;
    let status = daemon.wait_exit().await;
    assert!(status.success(), "{status}\n{}", daemon.log());
    start.elapsed()
}

/// The child is gone: reaped by the daemon, not left a zombie.
fn assert_no_child(pid: u32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(stat.is_empty(), "the session's child {pid} is still there: {stat}");
}

#[tokio::test]
async fn closing_a_session_with_a_blocked_writer_leaves_the_daemon_idle_and_stoppable() {
    let mut daemon = Daemon::start().await;
    let (id, child) = blocked_writer(&daemon).await;
    let (status, closed) = daemon.request(reqwest::Method::DELETE, &format!("/sessions/{id}"), None).await;
    assert_eq!(status, StatusCode::OK, "{closed}");
    let share = cpu_share(daemon.pid()).await;
    assert!(share < 0.25, "the daemon used {:.0}% of a core after the close", share * 100.0);
    terminate_within_bounds(&mut daemon).await;
    assert_no_child(child);
    assert!(daemon.log().contains("stopped"), "{}", daemon.log());
}

#[tokio::test]
async fn sigterm_with_a_live_session_and_a_blocked_writer_exits_promptly_and_reaps_the_child() {
    let mut daemon = Daemon::start().await;
    let (_, child) = blocked_writer(&daemon).await;
    let took = terminate_within_bounds(&mut daemon).await;
    // Nothing had to be killed: the session closes well within its shutdown deadline.
    assert!(took < SHUTDOWN_SESSIONS, "shutdown took {took:?}\n{}", daemon.log());
    assert_no_child(child);
    assert!(daemon.log().contains("stopped"), "{}", daemon.log());
}
