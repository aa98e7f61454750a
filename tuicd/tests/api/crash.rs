//! Crash recovery (`tuicd/src/keep`): after `kill -9` the next daemon takes back every session
//! whose program still runs, from the keeper process, under the same ids and aliases; output the
//! programs wrote while no daemon ran waits in the kernel and is read by the new one; a program
//! that ended meanwhile is forgotten; a re-adopted program's exit is seen with its code unknown.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::*;
use crate::session_util::{create_id, wait_text, write};
use crate::upgrade::{COUNTER, consecutive, follow};

async fn session(daemon: &Daemon, id: &str) -> Value {
    daemon.get(&format!("/sessions/{id}")).await.1
}

fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_kill_9_the_next_daemon_takes_back_every_running_session_and_what_was_written_meanwhile() {
    let mut daemon = Daemon::builder().env("TUIC_KEEPER", "on").start().await;
    assert_eq!(daemon.get("/health").await.1["crash_recovery"], "keeper");
    let flood = create_id(&daemon, json!({"shell": "python3", "args": ["-u", "-c", COUNTER]})).await;
    let cat_id = create_id(&daemon, json!({"args": ["-c", "echo up; exec cat"]})).await;
    let cat = session(&daemon, &cat_id).await;
    let go = daemon.dir.path().join("go");
    let waiter = create_id(
        &daemon,
        json!({"args": ["-c", format!("echo waiting; while [ ! -e {} ]; do sleep 0.05; done; exit 4", go.display())]}),
    )
    .await;
    let waiter_pid = session(&daemon, &waiter).await["pid"].as_u64().unwrap();

    // A client follows the flood; the session stops reading just before the crash, so the kernel
    // holds what the counter writes next, and the client has everything the daemon read.
    let (stop, progress) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let follower = tokio::spawn(follow(daemon.socket.clone(), flood.clone(), stop.clone(), progress.clone()));
    wait_until("the client past 20000 bytes", DEADLINE, || async {
        (progress.load(Ordering::SeqCst) > 20_000).then_some(())
    })
    .await;
    let (status, body) = daemon.post(&format!("/sessions/{flood}/pause"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let read = wait_until("the pause to hold", DEADLINE, || async {
        let first = session(&daemon, &flood).await["total_written"].as_u64()?;
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let second = session(&daemon, &flood).await["total_written"].as_u64()?;
        (first == second).then_some(second)
    })
    .await;
    stop.store(read, Ordering::SeqCst);
    let before = follower.await.unwrap().bytes;
    assert_eq!(before.len() as u64, read);

    daemon.stop_with(9).await;
    // While no daemon runs: one program ends.
    std::fs::write(&go, "").unwrap();
    wait_until("the waiter to end", DEADLINE, || async { (!alive(waiter_pid)).then_some(()) }).await;

    let dir = daemon.into_dir().await;
    let started = Instant::now();
    let daemon = Daemon::builder().dir(dir).env("TUIC_KEEPER", "on").start().await;
    let listed = wait_until("both running sessions listed again", DEADLINE, || async {
        let (_, list) = daemon.get("/sessions").await;
        let ids: Vec<_> = list.as_array()?.iter().map(|s| s["session_id"].as_str().unwrap().to_owned()).collect();
        (ids.contains(&flood) && ids.contains(&cat_id)).then_some(list)
    })
    .await;
    println!("sessions listed again {:?} after the new daemon was started", started.elapsed());
    assert_eq!(listed.as_array().unwrap().len(), 2, "the ended program is forgotten: {listed}");
    let again = session(&daemon, &cat_id).await;
    assert_eq!((again["alias"].clone(), again["pid"].clone()), (cat["alias"].clone(), cat["pid"].clone()), "{again}");
    let (status, _) = daemon.get(&format!("/sessions/{waiter}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The flood goes on from exactly where the crashed daemon stopped reading.
    let (stop, progress) = (Arc::new(AtomicU64::new(50_000)), Arc::new(AtomicU64::new(0)));
    let after = follow(daemon.socket.clone(), flood.clone(), stop, progress).await.bytes;
    let whole = [before, after].concat();
    let lines = consecutive(&whole);
    assert!(lines > 5_000, "{lines} lines");

    // Input reaches the re-adopted program; its exit is seen, its code unknown.
    write(&daemon, &cat_id, "back\n").await;
    wait_text(&daemon, &cat_id, "back\nback").await;
    let cat_pid = again["pid"].as_u64().unwrap();
    assert!(std::process::Command::new("kill").args(["-9", &cat_pid.to_string()]).status().unwrap().success());
    let ended = wait_until("the re-adopted cat's end", DEADLINE, || async {
        let info = session(&daemon, &cat_id).await;
        (info["exited"] == json!(true)).then_some(info)
    })
    .await;
    assert!(ended["exit_code"].is_null(), "not tuicd's child: its code is unknown: {ended}");

    // A stop ends the sessions, and the keeper, holding nothing, goes too.
    let keeper = daemon.dir.path().join("mcp.keep").join("keeper.sock");
    assert!(keeper.exists());
    let mut daemon = daemon;
    daemon.stop_with(SIGTERM).await;
    wait_until("the keeper to exit", DEADLINE, || async { (!keeper.exists()).then_some(()) }).await;
}
