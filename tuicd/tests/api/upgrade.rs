//! Upgrade in place (`tuicd upgrade`, SIGUSR2, `POST /daemon/upgrade`): the daemon re-executes its
//! binary under the same pid and every program keeps running; WebSocket clients that reconnect at
//! their cursor get every byte once; MCP clients keep their session; `/events` ids continue. A
//! binary that cannot read the snapshot is refused and the old daemon serves on.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::harness::*;
use crate::mcp_client::rpc;
use crate::session_util::{create_id, wait_text, write};

/// A paced, endless counter: one number per line, about 0.5 MB/s.
pub(crate) const COUNTER: &str = "import itertools, sys, time\n\
for i in itertools.count():\n    sys.stdout.write(f'{i}\\n')\n    \
if i % 200 == 0:\n        sys.stdout.flush(); time.sleep(0.002)\n";

/// What a stream client got: the bytes in cursor order from where it started, and how many times
/// it connected.
pub(crate) struct Followed {
    pub bytes: Vec<u8>,
    pub connections: usize,
}

/// A client of the session's binary stream that reconnects at its own cursor whenever the
/// connection closes, and checks that each frame starts exactly where the last one ended. Stops
/// once its cursor passes `stop` (0: not yet set).
pub(crate) async fn follow(socket: PathBuf, id: String, stop: Arc<AtomicU64>, progress: Arc<AtomicU64>) -> Followed {
    let started = Instant::now();
    let (mut next, mut bytes, mut connections) = (0u64, Vec::new(), 0usize);
    loop {
        assert!(started.elapsed() < Duration::from_secs(120), "the follower ran past 120 s at cursor {next}");
        let Ok(stream) = tokio::net::UnixStream::connect(&socket).await else {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        let url = format!("ws://tuic/sessions/{id}/stream?binary=1&cursor={next}");
        let Ok((mut ws, _)) = tokio_tungstenite::client_async(url, stream).await else {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        connections += 1;
        loop {
            let done = |next: u64| {
                let stop = stop.load(Ordering::SeqCst);
                stop > 0 && next >= stop
            };
            if done(next) {
                return Followed { bytes, connections };
            }
            let message = match tokio::time::timeout(Duration::from_millis(100), ws.next()).await {
                // Nothing new: look at `stop` again (it may have been set at the cursor reached).
                Err(_) => continue,
                Ok(Some(Ok(message))) => message,
                Ok(_) => break,
            };
            match message {
                Message::Binary(frame) => {
                    let cursor = u64::from_be_bytes(frame[..8].try_into().unwrap());
                    assert_eq!(cursor, next, "a frame starts at {cursor}, the last ended at {next}: a gap or a repeat");
                    bytes.extend_from_slice(&frame[8..]);
                    next += (frame.len() - 8) as u64;
                    progress.store(next, Ordering::SeqCst);
                }
                Message::Text(text) => {
                    let frame: Value = serde_json::from_str(&text).unwrap();
                    assert_ne!(frame["type"], "lagged", "the client lost output: {frame}");
                }
                Message::Close(_) => break,
                _ => {}
            }
        }
    }
}

/// The counter's lines in `bytes` (the terminal ends each with CR LF) are 0, 1, 2, ... with none
/// missing and none repeated. Returns how many.
pub(crate) fn consecutive(bytes: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(bytes);
    let complete = &text[..text.rfind("\r\n").expect("some whole lines")];
    let mut expected = 0u64;
    for line in complete.split("\r\n") {
        assert_eq!(line, expected.to_string(), "line {expected} of the counter");
        expected += 1;
    }
    expected
}

async fn health(daemon: &Daemon) -> Value {
    let (status, body) = daemon.get("/health").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn total_written(daemon: &Daemon, id: &str) -> u64 {
    daemon.get(&format!("/sessions/{id}")).await.1["total_written"].as_u64().unwrap()
}

/// Waits until `/health` answers as a new process image.
async fn new_image(daemon: &Daemon, before: &Value) -> Value {
    wait_until("the new image answering /health", DEADLINE, || async {
        let response = daemon.client.get(Daemon::url("/health")).send().await.ok()?;
        let body: Value = response.json().await.ok()?;
        (body["boot_id"] != before["boot_id"]).then_some(body)
    })
    .await
}

fn tuicd_cli(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tuicd"))
        .arg("--config-dir")
        .arg(dir)
        .args(args)
        .env_remove("TUIC_INSTANCE")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_in_place_keeps_every_program_every_cursor_and_every_mcp_session() {
    let daemon = Daemon::start().await;
    let before = health(&daemon).await;

    let flood = create_id(&daemon, json!({"shell": "python3", "args": ["-u", "-c", COUNTER]})).await;
    let cat = create_id(&daemon, json!({"args": ["-c", "echo up; exec cat"]})).await;
    let script = "printf 'ready\\n'; read x; printf 'got %s\\n' \"$x\"; exit 3";
    let asker = create_id(&daemon, json!({"shell": "/bin/sh", "args": ["-c", script]})).await;
    write(&daemon, &cat, "before\n").await;
    wait_text(&daemon, &cat, "before\nbefore").await;
    wait_text(&daemon, &asker, "ready").await;

    let mcp = rpc(
        &daemon,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "grok-shell-0.3", "version": "1"}}),
        &[],
    )
    .await
    .session()
    .unwrap();

    let stop = Arc::new(AtomicU64::new(0));
    let followers: Vec<_> = (0..2)
        .map(|_| {
            let progress = Arc::new(AtomicU64::new(0));
            let task = tokio::spawn(follow(daemon.socket.clone(), flood.clone(), stop.clone(), progress.clone()));
            (task, progress)
        })
        .collect();
    let past = |cursor: u64| {
        let progresses: Vec<_> = followers.iter().map(|(_, p)| p.clone()).collect();
        async move {
            wait_until(&format!("both stream clients past cursor {cursor}"), DEADLINE, || async {
                progresses.iter().all(|p| p.load(Ordering::SeqCst) > cursor).then_some(())
            })
            .await
        }
    };
    past(50_000).await;

    // The first upgrade through the CLI, the second on SIGUSR2.
    let upgraded = tuicd_cli(daemon.dir.path(), &["upgrade"]);
    let said = String::from_utf8_lossy(&upgraded.stdout);
    assert!(upgraded.status.success(), "tuicd upgrade: {said} {}", String::from_utf8_lossy(&upgraded.stderr));
    assert!(said.contains("upgraded in place"), "{said}");
    let first = health(&daemon).await;
    assert_ne!(first["boot_id"], before["boot_id"]);
    assert_eq!(first["pid"], before["pid"], "the same process, re-executed");
    assert_eq!(first["session_count"], json!(3), "{first}");
    past(total_written(&daemon, &flood).await + 50_000).await;

    let status = std::process::Command::new("kill").args(["-USR2", &daemon.pid().to_string()]).status().unwrap();
    assert!(status.success());
    let second = new_image(&daemon, &first).await;
    assert_eq!(second["pid"], before["pid"]);
    assert_eq!(second["session_count"], json!(3), "{second}");
    let end = total_written(&daemon, &flood).await + 50_000;
    stop.store(end, Ordering::SeqCst);
    let mut seen = Vec::new();
    for (task, _) in followers {
        let followed = task.await.unwrap();
        assert!(followed.connections >= 3, "each upgrade closes the stream: {} connections", followed.connections);
        seen.push(followed.bytes);
    }
    let lines = consecutive(&seen[0]);
    consecutive(&seen[1]);
    let shorter = seen[0].len().min(seen[1].len());
    assert!(seen[0][..shorter] == seen[1][..shorter], "the two clients got different bytes");
    assert!(shorter as u64 >= end, "both clients read to the end ({shorter} of {end} bytes, {lines} lines)");

    // Input still reaches programs, and the one that was the daemon's child exits with its code.
    write(&daemon, &cat, "after\n").await;
    wait_text(&daemon, &cat, "after\nafter").await;
    write(&daemon, &asker, "fine\n").await;
    wait_text(&daemon, &asker, "got fine").await;
    let exited = wait_until("the asker's exit", DEADLINE, || async {
        let (_, info) = daemon.get(&format!("/sessions/{asker}")).await;
        (info["exited"] == json!(true)).then_some(info)
    })
    .await;
    assert_eq!(exited["exit_code"], json!(3), "{exited}");

    // The MCP session is still the grok shell's: its collapsed surface.
    let listed = rpc(&daemon, "tools/list", json!({}), &[("mcp-session-id", mcp.as_str())]).await;
    let names: Vec<_> = listed.body["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect();
    assert_eq!(names, [json!("search_tools"), json!("get_tool_schema"), json!("call_tool"), json!("progress")]);

    // `/events` ids continue: the creations before the upgrades replay after them.
    let response = daemon.client.get(Daemon::url("/events")).header("last-event-id", "0").send().await.unwrap();
    let events =
        read_events(response, |events| events.iter().filter(|(_, kind, _)| kind == "session-created").count() >= 3)
            .await;
    let created: Vec<_> = events
        .iter()
        .filter(|(_, kind, _)| kind == "session-created")
        .map(|(_, _, data)| data["session_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(created, [flood, cat, asker]);
    let ids: Vec<u64> = events.iter().map(|(id, _, _)| *id).collect();
    assert!(ids.windows(2).all(|w| w[1] > w[0]), "ids only grow: {ids:?}");
    let log = daemon.log();
    assert_eq!(log.matches("upgraded in place: sessions taken over").count(), 2, "{log}");
}

#[tokio::test]
async fn a_binary_that_cannot_read_the_snapshot_is_refused_and_the_daemon_serves_on() {
    let bin = tempfile::tempdir().unwrap();
    let exe = bin.path().join("tuicd");
    std::fs::copy(env!("CARGO_BIN_EXE_tuicd"), &exe).unwrap();
    let daemon = Daemon::builder().binary(exe.clone()).start().await;
    let before = health(&daemon).await;
    let cat = create_id(&daemon, json!({"args": ["-c", "echo up; exec cat"]})).await;

    // An older tuicd that reads another snapshot format, put where the binary was (as a package
    // manager would: a new file renamed over the old).
    let older = bin.path().join("tuicd.new");
    std::fs::write(
        &older,
        "#!/bin/sh\nif [ \"$1\" = handover-check ]; then cat >/dev/null; \
         echo 'tuicd: snapshot format 1, but this tuicd reads format 0 only' >&2; exit 1; fi\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&older, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::rename(&older, &exe).unwrap();

    let (status, body) = daemon.post("/daemon/upgrade", json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("cannot take over") && error.contains("reads format 0 only"), "{error}");
    let refused = tuicd_cli(daemon.dir.path(), &["upgrade"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("reads format 0 only"));

    // Not a tuicd at all: refused the same way.
    std::fs::write(bin.path().join("other"), "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(bin.path().join("other"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::rename(bin.path().join("other"), &exe).unwrap();
    let (status, body) = daemon.post("/daemon/upgrade", json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    // The old daemon serves on, with its session.
    let after = health(&daemon).await;
    assert_eq!(after["boot_id"], before["boot_id"], "still the old image");
    write(&daemon, &cat, "still here\n").await;
    wait_text(&daemon, &cat, "still here\nstill here").await;
    let (status, _) = daemon.post("/sessions", json!({"shell": "/bin/sh"})).await;
    assert_eq!(status, StatusCode::CREATED, "sessions are still created");
}

/// The agent engine's view is not handed over: it is learnt again from the ring the new image
/// replays and the output that follows. Three fake agents mid-turn across an upgrade are seen
/// working, then finish, are confirmed idle and take their next prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_mid_turn_across_an_upgrade_finish_their_turn_and_take_the_next_prompt() {
    use crate::mcp_client::{call, ok};
    let daemon = Daemon::start().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let body =
            json!({"shell": crate::agents::fake_agent(), "args": [], "agent_type": "claude", "cwd": daemon.dir.path()});
        let (status, created) = daemon.post("/sessions", body).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        ids.push(created["session_id"].as_str().unwrap().to_owned());
    }
    let status = |id: String| {
        let daemon = &daemon;
        async move { ok(daemon, "session", json!({"action": "status", "session_id": id})).await }
    };
    for id in &ids {
        wait_until("the fake agent confirmed idle", DEADLINE, || async {
            (status(id.clone()).await["state"]["idle_confirmed"] == json!(true)).then_some(())
        })
        .await;
        let (failed, receipt) =
            call(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "gate job"})).await;
        assert!(!failed && receipt["submitted"] == json!(true), "{receipt}");
    }
    for id in &ids {
        wait_until("the agent working", DEADLINE, || async {
            (status(id.clone()).await["agent_state"] == json!("working")).then_some(())
        })
        .await;
    }

    let upgraded = tuicd_cli(daemon.dir.path(), &["upgrade"]);
    assert!(upgraded.status.success(), "{}", String::from_utf8_lossy(&upgraded.stderr));
    for id in &ids {
        let seen = wait_until("the agent seen working again", DEADLINE, || async {
            let s = status(id.clone()).await;
            (s["agent_state"] == json!("working")).then_some(s)
        })
        .await;
        assert_ne!(seen["state"]["idle_confirmed"], json!(true), "mid-turn is not idle: {seen}");
    }

    std::fs::write(daemon.dir.path().join("gate.open"), "").unwrap();
    for id in &ids {
        let waited = ok(&daemon, "session", json!({"action": "wait", "session_id": id, "timeout_ms": 15000})).await;
        assert_eq!(waited["met"], json!(true), "{waited}");
        let (failed, receipt) =
            call(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "second job"})).await;
        assert!(!failed && receipt["submitted"] == json!(true), "the agent refused its next prompt: {receipt}");
        crate::mcp_client::wait_session_output(&daemon, id, "done: second job").await;
    }
}
