//! `/sessions` REST through the real daemon with real shells on real PTYs.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{DEADLINE, Daemon, wait_until};
use crate::session_util::{create, create_id, wait_exited, wait_text, write};

#[tokio::test]
async fn a_session_is_created_listed_written_read_and_closed() {
    let daemon = Daemon::start().await;
    let created = create(&daemon, json!({"display_name": "build"})).await;
    let id = created["session_id"].as_str().unwrap();
    assert_eq!(created["alias"], "sh-1");
    let (_, list) = daemon.get("/sessions").await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["display_name"], "build");
    write(&daemon, id, "echo \"$TUIC_SESSION\"\n").await;
    wait_text(&daemon, id, created["tuic_session"].as_str().unwrap()).await;
    let (_, health) = daemon.get("/health").await;
    assert_eq!(health["session_count"], 1);
    let (_, family) = daemon.get(&format!("/sessions/{id}/shell-family")).await;
    assert_eq!(family["shell_family"], "posix");

    let (status, closed) = daemon.request(Method::DELETE, &format!("/sessions/{id}"), None).await;
    assert_eq!(status, StatusCode::OK, "{closed}");
    let (_, list) = daemon.get("/sessions").await;
    assert_eq!(list, json!([]));
    // The tombstone still answers by every name.
    for name in [id, created["tuic_session"].as_str().unwrap(), "sh-1"] {
        let (status, info) = daemon.get(&format!("/sessions/{name}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(info["exited"], true);
    }
}

#[tokio::test]
async fn a_tombstone_keeps_output_and_exit_code_and_refuses_input() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    write(&daemon, &id, "echo goodbye-world; exit 7\n").await;
    let info = wait_exited(&daemon, &id).await;
    assert_eq!(info["exit_code"], 7);
    let (status, out) = daemon.get(&format!("/sessions/{id}/output?format=text")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(out["data"].as_str().unwrap().contains("goodbye-world"), "{out}");
    assert_eq!((out["exited"].clone(), out["exit_code"].clone()), (json!(true), json!(7)));
    let (status, err) = daemon.post(&format!("/sessions/{id}/write"), json!({"data": "x"})).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(err["error"].as_str().unwrap().contains("has exited with code 7"), "{err}");
    let (status, _) = daemon.post(&format!("/sessions/{id}/resize"), json!({"rows": 5, "cols": 5})).await;
    assert_eq!(status, StatusCode::GONE);
}

#[tokio::test]
async fn bad_input_is_refused_clearly_and_changes_nothing() {
    let daemon = Daemon::builder().config(json!({"max_sessions": 1})).start().await;
    let cases = [
        (json!({"rows": 0}), "rows: 0 is out of range; allowed 1..=500"),
        (json!({"cols": 501}), "cols: 501 is out of range"),
        (json!({"cwd": "/etc/hostname"}), "cwd: '/etc/hostname' is not a directory"),
        (json!({"cwd": "relative/dir"}), "not an absolute path"),
        (json!({"shell": "/no/such/shell"}), "shell: '/no/such/shell' does not exist"),
        (json!({"shell": "no-such-shell-xyz"}), "was not found in PATH"),
        (json!({"session_id": "../etc"}), "session_id:"),
        (json!({"rows": "tall"}), "rows:"),
    ];
    for (body, expected) in cases {
        let mut full = json!({"shell": "/bin/sh"});
        crate::harness::merge(&mut full, body.clone());
        let (status, err) = daemon.post("/sessions", full).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {err}");
        assert!(err["error"].as_str().unwrap().contains(expected), "{body}: {err}");
    }
    let id = create_id(&daemon, json!({})).await;
    let (status, err) = daemon.post("/sessions", json!({"shell": "/bin/sh"})).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{err}");
    assert_eq!(err["code"], "session_limit");
    assert_eq!(daemon.get("/sessions").await.1.as_array().unwrap().len(), 1);

    for (method, path, body) in [
        (Method::GET, "/sessions/nope/output", None),
        (Method::POST, "/sessions/nope/write", Some(json!({"data": "x"}))),
        (Method::POST, "/sessions/nope/resize", Some(json!({"rows": 5, "cols": 5}))),
        (Method::DELETE, "/sessions/nope", None),
        (Method::GET, "/sessions/nope/stream", None),
    ] {
        let (status, err) = daemon.request(method.clone(), path, body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {err}");
        assert!(err["error"].as_str().unwrap().contains("'nope'"), "{err}");
    }
    let (status, err) = daemon.post(&format!("/sessions/{id}/resize"), json!({"rows": 501, "cols": 80})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(err["error"].as_str().unwrap().starts_with("rows: 501"), "{err}");
    let (status, err) = daemon.get(&format!("/sessions/{id}/output?format=html")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(err["error"].as_str().unwrap().contains("raw, text, log"), "{err}");
    let (_, metrics) = daemon.get("/metrics").await;
    assert_eq!(metrics["total_spawned"], 1);
    assert!(metrics["failed_spawns"].as_u64().unwrap() >= 1);
    // No orphaned child: only the one live session's shell is a child of the daemon.
    assert_eq!(children_of(daemon.pid()).len(), 1);
}

#[tokio::test]
async fn raw_cursors_never_go_backwards_and_deltas_never_repeat_or_skip() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    write(&daemon, &id, "i=0; while [ $i -lt 2000 ]; do echo row-$i; i=$((i+1)); done; echo END-$((1+1))MARK\n").await;
    let state = std::rc::Rc::new(std::cell::RefCell::new((0u64, String::new())));
    wait_until("the loop's end marker arrives through deltas", DEADLINE, || {
        let (daemon, id, state) = (&daemon, &id, state.clone());
        async move {
            let cursor = state.borrow().0;
            let (_, out) = daemon.get(&format!("/sessions/{id}/output?since_cursor={cursor}&limit=1000")).await;
            let next = out["cursor"].as_u64().unwrap();
            assert!(next >= cursor, "cursor went backwards: {next} < {cursor}");
            assert_eq!(next - cursor, out["data_length"].as_u64().unwrap(), "ASCII: cursor advances by the data");
            let mut state = state.borrow_mut();
            state.1.push_str(out["data"].as_str().unwrap());
            state.0 = next;
            (state.1.contains("END-2MARK\r\n") && next == out["total_written"].as_u64().unwrap()).then_some(())
        }
    })
    .await;
    let collected = state.borrow().1.clone();
    let (_, all) = daemon.get(&format!("/sessions/{id}/output?since_cursor=0&limit=10000000")).await;
    assert_eq!(collected, all["data"].as_str().unwrap());
    for i in 0..2000 {
        assert_eq!(collected.matches(&format!("row-{i}\r\n")).count(), 1, "row-{i} exactly once");
    }
}

#[tokio::test]
async fn utf8_split_across_reads_is_never_broken() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    // The first half of '€' (e2 82 ac) is written, then the child waits for input.
    write(&daemon, &id, "stty -echo; printf 'A\\342'; read x; printf '\\202\\254Z\\n'\n").await;
    let before = wait_until("the first half is in the ring", DEADLINE, || async {
        let (_, out) = daemon.get(&format!("/sessions/{id}")).await;
        let (_, raw) = daemon.get(&format!("/sessions/{id}/output?since_cursor=0&limit=100000")).await;
        let data = raw["data"].as_str().unwrap().to_owned();
        (data.ends_with('A') && out["total_written"].as_u64() > raw["cursor"].as_u64()).then_some(raw)
    })
    .await;
    // The delta stops before the incomplete character.
    assert!(!before["data"].as_str().unwrap().contains('\u{FFFD}'));
    let cursor = before["cursor"].as_u64().unwrap();
    write(&daemon, &id, "\n").await;
    wait_text(&daemon, &id, "A€Z").await;
    let (_, after) = daemon.get(&format!("/sessions/{id}/output?since_cursor={cursor}")).await;
    assert!(after["data"].as_str().unwrap().starts_with("€Z"), "{after}");
}

#[tokio::test]
async fn alternate_screen_programs_show_on_screen_but_stay_out_of_the_log() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({"rows": 5, "cols": 40})).await;
    // Octal escapes keep the markers out of the echoed command line.
    let script = r"stty -echo; printf 'main-\061\n'; printf '\033[?1049hALT-\123CREEN\n1\n2'; read x; printf '\033[?1049lback-\155ain\n'";
    write(&daemon, &id, &format!("{script}\n")).await;
    let screen = wait_text(&daemon, &id, "ALT-SCREEN").await;
    assert!(!screen.contains("main-1"), "the alternate screen hides the main one: {screen}");
    write(&daemon, &id, "\n").await;
    let text = wait_text(&daemon, &id, "back-main").await;
    assert!(text.contains("main-1"), "{text}");
    let (_, log) = daemon.get(&format!("/sessions/{id}/output?format=log")).await;
    let lines: Vec<&str> = log["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(!lines.iter().any(|l| l.contains("ALT-SCREEN")), "{log}");
}

#[tokio::test]
async fn a_write_larger_than_the_pty_buffer_waits_for_the_child_and_arrives_whole() {
    let daemon = Daemon::start().await;
    let script = "stty raw -echo; echo ready; head -c 300000 | wc -c";
    let id = create_id(&daemon, json!({"shell": "/bin/sh", "args": ["-c", script]})).await;
    wait_text(&daemon, &id, "ready").await;
    // Far more than the PTY's input buffer holds: the writer meets EAGAIN and must be woken for
    // write readiness (its only registration) as the child reads.
    write(&daemon, &id, &"x".repeat(300_000)).await;
    wait_text(&daemon, &id, "300000").await;
    let info = wait_exited(&daemon, &id).await;
    assert_eq!(info["exit_code"], 0, "{info}");
}

#[tokio::test]
async fn resize_reaches_the_child() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({"rows": 24, "cols": 80})).await;
    write(&daemon, &id, "echo cols-$(tput cols)-lines-$(tput lines)\n").await;
    wait_text(&daemon, &id, "cols-80-lines-24").await;
    let (status, _) = daemon.post(&format!("/sessions/{id}/resize"), json!({"rows": 30, "cols": 123})).await;
    assert_eq!(status, StatusCode::OK);
    write(&daemon, &id, "echo cols-$(tput cols)-lines-$(tput lines)\n").await;
    wait_text(&daemon, &id, "cols-123-lines-30").await;
    let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
    assert_eq!((info["rows"].clone(), info["cols"].clone()), (json!(30), json!(123)));
}

#[tokio::test]
async fn restored_aliases_are_reserved_only_when_free_and_well_formed() {
    let daemon = Daemon::start().await;
    let alias = |v: Value| v["alias"].as_str().unwrap().to_owned();
    assert_eq!(alias(create(&daemon, json!({"alias": "sh-5"})).await), "sh-5");
    // Taken by a live session: a fresh one, past the restored counter.
    assert_eq!(alias(create(&daemon, json!({"alias": "sh-5"})).await), "sh-6");
    assert_eq!(alias(create(&daemon, json!({"alias": "not an alias"})).await), "sh-7");
    assert_eq!(alias(create(&daemon, json!({"alias": "tu-3"})).await), "tu-3");
    // A repository directory gives its own prefix and counter.
    let repo = daemon.dir.path().join("tui-commander");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let created = create(&daemon, json!({"cwd": repo.display().to_string()})).await;
    assert_eq!(alias(created.clone()), "tc-1");
    let (status, out) = daemon.get("/sessions/tc-1/output").await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let (_, info) = daemon.get("/sessions/tc-1").await;
    assert_eq!(info["session_id"], created["session_id"]);
}

#[tokio::test]
async fn a_client_chosen_id_is_honoured_once() {
    let daemon = Daemon::start().await;
    let first = create_id(&daemon, json!({"session_id": "tab-1"})).await;
    assert_eq!(first, "tab-1");
    let second = create_id(&daemon, json!({"session_id": "tab-1"})).await;
    assert_ne!(second, "tab-1", "a duplicated tab gets a fresh id");
}

#[tokio::test]
async fn pause_stops_reading_and_resume_delivers_everything() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    wait_until("the prompt", DEADLINE, || async {
        let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
        (info["total_written"].as_u64() > Some(0)).then_some(())
    })
    .await;
    let (status, _) = daemon.post(&format!("/sessions/{id}/pause"), json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
    assert_eq!(info["paused"], true);
    write(&daemon, &id, "echo resumed-$((40+2))\n").await;
    let (status, _) = daemon.post(&format!("/sessions/{id}/resume"), json!({})).await;
    assert_eq!(status, StatusCode::OK);
    wait_text(&daemon, &id, "resumed-42").await;
    let (_, metrics) = daemon.get("/metrics").await;
    assert_eq!(metrics["pauses_triggered"], 1);
}

/// Pids whose parent is `pid` (any thread of it), from /proc.
fn children_of(pid: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // Fields after the parenthesised command: state, ppid, ...
        let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
        if after.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            children.push(child);
        }
    }
    children
}
