//! The `ai_terminal_*` tools through the real daemon and real PTYs: the gate, redacted reads,
//! every write confirmed by a scripted person over REST, declined, or refused at once with nobody
//! to answer, the agent-loop rule, and the destructive-command check.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{ConfirmAnswerer, DEADLINE, Daemon, wait_until};
use crate::mcp_client::{call, fails, ok, rpc};
use crate::session_util::{create_id, wait_text, write};

pub(crate) async fn enabled() -> Daemon {
    Daemon::builder().config(json!({"ai_terminal_mcp_enabled": true})).start().await
}

/// A git repository with one commit on branch `trunk-x`, in the daemon's temp dir.
pub(crate) fn repo(daemon: &Daemon) -> std::path::PathBuf {
    let root = daemon.dir.path().join("repo");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn main() {}\n").unwrap();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=trunk-x"])
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "first"]);
    root
}

pub(crate) async fn shell_in(daemon: &Daemon, cwd: &Path) -> String {
    create_id(daemon, json!({"cwd": cwd})).await
}

pub(crate) async fn error_of(daemon: &Daemon, tool: &str, args: Value) -> (String, Value) {
    let (is_error, value) = call(daemon, tool, args).await;
    assert!(is_error, "{tool} should have failed: {value}");
    (value["error"].as_str().unwrap().to_owned(), value)
}

#[tokio::test]
async fn hidden_and_refused_unless_enabled() {
    let daemon = Daemon::start().await;
    let listed = rpc(&daemon, "tools/list", json!({}), &[]).await;
    let names: Vec<String> = listed.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with("ai_terminal_")), "{names:?}");
    let called =
        rpc(&daemon, "tools/call", json!({"name": "ai_terminal_read_screen", "arguments": {"session_id": "x"}}), &[])
            .await;
    assert_eq!(called.body["error"]["code"], json!(-32602), "{}", called.body);
    assert!(called.body["error"]["message"].as_str().unwrap().contains("ai_terminal_mcp_enabled"), "{}", called.body);

    let daemon = enabled().await;
    let listed = rpc(&daemon, "tools/list", json!({}), &[]).await;
    let count = listed.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"].as_str().unwrap().starts_with("ai_terminal_"))
        .count();
    assert_eq!(count, 13);
}

#[tokio::test]
async fn reads_are_redacted_and_report_state_and_context() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    write(&daemon, &id, "echo key=AKIAIOSFODNN7EXAMPLE done\n").await;
    wait_text(&daemon, &id, "EXAMPLE done").await;
    let screen = ok(&daemon, "ai_terminal_read_screen", json!({"session_id": id, "lines": 10})).await;
    let text = screen["screen"].as_str().unwrap();
    assert!(text.contains("key=[REDACTED:aws_access_key_id] done"), "{text}");
    assert!(!text.contains("AKIAIOSFODNN7EXAMPLE"), "{text}");
    assert_eq!(screen["awaiting_input"], json!(false));

    let cursor = screen["cursor"].as_u64().unwrap();
    write(&daemon, &id, "echo after-cursor\n").await;
    wait_text(&daemon, &id, "after-cursor\n").await;
    let delta = ok(&daemon, "ai_terminal_read_screen", json!({"session_id": id, "since_cursor": cursor})).await;
    assert!(!delta["screen"].as_str().unwrap().contains("EXAMPLE done"), "{delta}");

    let context = ok(&daemon, "ai_terminal_get_context", json!({"session_id": id})).await;
    assert_eq!(context["git_branch"], json!("trunk-x"), "{context}");
    assert_eq!(context["terminal_mode"], json!("normal"));
    let state = ok(&daemon, "ai_terminal_get_state", json!({"session_id": id})).await;
    assert_eq!(state["session_id"], json!(id));
    assert_eq!(state["terminal_mode"], json!("normal"));

    let (error, _) = error_of(&daemon, "ai_terminal_read_screen", json!({"session_id": id, "lines": 501})).await;
    assert!(error.contains("500"), "{error}");
    let (error, _) = error_of(&daemon, "ai_terminal_read_screen", json!({"session_id": "nope"})).await;
    assert!(error.contains("Unknown session"), "{error}");
    let (error, _) = error_of(&daemon, "ai_terminal_get_state", json!({"session_id": id, "extra": 1})).await;
    assert!(error.contains("extra"), "{error}");

    // On the alternate screen nothing scrolls into the log: a delta answers the screen itself.
    let cursor = delta["cursor"].as_u64().unwrap();
    write(&daemon, &id, "printf '\\033[?1049h'; echo full-$((6*7))-screen\n").await;
    wait_text(&daemon, &id, "full-42-screen").await;
    let full = ok(&daemon, "ai_terminal_read_screen", json!({"session_id": id, "since_cursor": cursor})).await;
    assert!(full["screen"].as_str().unwrap().contains("full-42-screen"), "{full}");
    let state = ok(&daemon, "ai_terminal_get_state", json!({"session_id": id})).await;
    assert_eq!(state["terminal_mode"], json!("alternate_screen"));
}

#[tokio::test]
async fn wait_for_a_pattern_or_a_stable_screen() {
    let daemon = enabled().await;
    let id = shell_in(&daemon, daemon.dir.path()).await;
    write(&daemon, &id, "sleep 0.3; echo rea''dy-now\n").await;
    let waited =
        ok(&daemon, "ai_terminal_wait_for", json!({"session_id": id, "pattern": "ready-n[o]w", "timeout_ms": 15000}))
            .await;
    assert_eq!(waited["reason"], json!("matched"), "{waited}");
    assert_eq!(waited["matched"], json!("ready-now"));
    let stable = ok(&daemon, "ai_terminal_wait_for", json!({"session_id": id, "stability_ms": 200})).await;
    assert_eq!(stable["reason"], json!("stable"), "{stable}");
    let missing =
        ok(&daemon, "ai_terminal_wait_for", json!({"session_id": id, "pattern": "never-there", "timeout_ms": 300}))
            .await;
    assert_eq!(missing["reason"], json!("timeout"));
    let (error, _) = error_of(&daemon, "ai_terminal_wait_for", json!({"session_id": id, "pattern": "(unclosed"})).await;
    assert!(error.contains("pattern: not a valid regular expression"), "{error}");
}

#[tokio::test]
async fn send_input_is_typed_only_when_a_person_confirms() {
    let daemon = enabled().await;
    let id = shell_in(&daemon, daemon.dir.path()).await;

    // Nobody to answer: refused at once, nothing typed.
    let started = Instant::now();
    let (error, value) =
        error_of(&daemon, "ai_terminal_send_input", json!({"session_id": id, "text": "echo nobody-$((40+2))"})).await;
    assert!(error.contains("no UI client connected"), "{error}");
    assert_eq!(value["confirmed"], json!(false));
    assert!(started.elapsed() < Duration::from_secs(5), "refused at once, not after a wait");

    // Declined: nothing typed, and the person saw what was asked.
    let declining = ConfirmAnswerer::start(&daemon, false).await;
    let (error, _) =
        error_of(&daemon, "ai_terminal_send_input", json!({"session_id": id, "text": "echo declined-$((40+2))"})).await;
    assert!(error.contains("declined by the user"), "{error}");
    let seen = declining.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["kind"], json!("ai_terminal"));
    assert!(seen[0]["message"].as_str().unwrap().contains("echo declined-$((40+2))"), "{}", seen[0]);
    drop(declining);

    // Confirmed: typed with Enter.
    let _person = ConfirmAnswerer::start(&daemon, true).await;
    let sent =
        ok(&daemon, "ai_terminal_send_input", json!({"session_id": id, "text": "echo confirmed-$((40+2))"})).await;
    assert_eq!(sent["ok"], json!(true));
    let text = wait_text(&daemon, &id, "confirmed-42").await;
    assert!(!text.contains("nobody-42") && !text.contains("declined-42"), "{text}");

    let keyed = ok(&daemon, "ai_terminal_send_key", json!({"session_id": id, "key": "Ctrl+C"})).await;
    assert_eq!(keyed["key"], json!("ctrl+c"));
    let (error, _) = error_of(&daemon, "ai_terminal_send_key", json!({"session_id": id, "key": "hyper"})).await;
    assert!(error.contains("unknown key 'hyper'") && error.contains("ctrl+c"), "{error}");
    let (error, _) = error_of(&daemon, "ai_terminal_send_input", json!({"session_id": id, "text": "  "})).await;
    assert!(error.contains("text: must not be empty"), "{error}");
    let (error, _) = error_of(&daemon, "ai_terminal_send_input", json!({"session_id": id, "text": 5})).await;
    assert!(error.contains("text"), "{error}");
}

#[tokio::test]
async fn run_command_is_checked_confirmed_captured_and_redacted() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    let _person = ConfirmAnswerer::start(&daemon, true).await;

    let ran = ok(
        &daemon,
        "ai_terminal_run_command",
        json!({"session_id": id, "command": "pwd; echo token ghp_0123456789abcdefghijABCDEFGHIJ012345; echo err >&2; exit 3"}),
    )
    .await;
    assert_eq!(ran["exit_code"], json!(3), "{ran}");
    let stdout = ran["stdout"].as_str().unwrap();
    assert!(stdout.contains(root.canonicalize().unwrap().to_str().unwrap()), "{stdout}");
    assert!(stdout.contains("token [REDACTED:github_token]"), "{stdout}");
    assert_eq!(ran["stderr"], json!("err\n"));

    let inside = ok(
        &daemon,
        "ai_terminal_run_command",
        json!({"session_id": id, "command": "mkdir -p build && rm -rf ./build && echo gone"}),
    )
    .await;
    assert_eq!(inside["stdout"], json!("gone\n"), "{inside}");

    // A destructive-looking command is not refused by a list: the person is warned and the
    // Landlock sandbox is the barrier (ai_terminal_sandbox.rs).

    let (error, _) =
        error_of(&daemon, "ai_terminal_run_command", json!({"session_id": id, "command": "ls", "cwd": "/etc"})).await;
    assert!(error.contains("outside the session's repository"), "{error}");
    let (error, _) =
        error_of(&daemon, "ai_terminal_run_command", json!({"session_id": id, "command": "ls", "timeout_ms": 700000}))
            .await;
    assert!(error.contains("timeout_ms"), "{error}");

    // A session outside any repository has no sandbox: nothing runs there.
    let loose = shell_in(&daemon, daemon.dir.path()).await;
    let (error, _) = error_of(&daemon, "ai_terminal_run_command", json!({"session_id": loose, "command": "ls"})).await;
    assert!(error.contains("inside no git repository"), "{error}");

    let started = Instant::now();
    let slow = ok(
        &daemon,
        "ai_terminal_run_command",
        json!({"session_id": id, "command": "sleep 30 & sleep 30", "timeout_ms": 500}),
    )
    .await;
    assert_eq!(slow["timed_out"], json!(true), "{slow}");
    assert!(started.elapsed() < Duration::from_secs(10), "the process group was killed at its deadline");
}

#[tokio::test]
async fn drive_agent_runs_one_turn_and_holds_the_session_meanwhile() {
    let daemon = enabled().await;
    let id = shell_in(&daemon, daemon.dir.path()).await;
    let _person = ConfirmAnswerer::start(&daemon, true).await;

    let driven = ok(
        &daemon,
        "ai_terminal_drive_agent",
        json!({"session_id": id, "command": "echo turn-$((6*7))", "timeout_ms": 15000}),
    )
    .await;
    assert_eq!(driven["reason"], json!("idle"), "{driven}");
    assert!(driven["screen"].as_str().unwrap().contains("turn-42"), "{driven}");

    // While a loop waits on this session, other writes are refused.
    let looping = tokio::spawn({
        let (client, id) = (daemon.client.clone(), id.clone());
        async move {
            let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "ai_terminal_drive_agent",
                "arguments": {"session_id": id, "command": "echo looping", "wait_pattern": "loop-over", "timeout_ms": 20000}}});
            client
                .post(Daemon::url("/mcp"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(body.to_string())
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        }
    });
    wait_text(&daemon, &id, "looping\n").await;
    let refused = wait_until("the loop holds the session", DEADLINE, || async {
        let (is_error, value) =
            call(&daemon, "ai_terminal_send_input", json!({"session_id": id, "text": "echo intruder"})).await;
        (is_error && value["error"].as_str().unwrap().contains("agent loop")).then_some(value)
    })
    .await;
    assert!(refused["error"].as_str().unwrap().contains("nothing was done"), "{refused}");
    write(&daemon, &id, "echo loop-''over\n").await;
    let answer = looping.await.unwrap();
    assert!(answer.contains("matched"), "{answer}");
    let text = wait_text(&daemon, &id, "loop-over").await;
    assert!(!text.contains("intruder"), "{text}");
    assert!(fails(&daemon, "ai_terminal_drive_agent", json!({"session_id": id, "lines": 0})).await.contains("lines"));
}

/// Every writing tool but send_input (tested above) and the file tools (ai_terminal_files.rs):
/// refused at once with nobody to answer, refused when declined, and nothing reaches the PTY.
#[tokio::test]
async fn each_writing_tool_is_refused_without_a_person_and_when_declined() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    let calls = [
        ("ai_terminal_send_key", json!({"session_id": id, "key": "enter"})),
        ("ai_terminal_drive_agent", json!({"session_id": id, "command": "echo driven-$((40+2))", "timeout_ms": 2000})),
        ("ai_terminal_run_command", json!({"session_id": id, "command": "touch ran-here"})),
    ];
    for (tool, args) in &calls {
        let started = Instant::now();
        let (error, value) = error_of(&daemon, tool, args.clone()).await;
        assert!(error.contains("no UI client connected"), "{tool}: {error}");
        assert_eq!(value["confirmed"], json!(false));
        assert!(started.elapsed() < Duration::from_secs(5), "{tool}: refused at once, not after a wait");
    }
    let declining = ConfirmAnswerer::start(&daemon, false).await;
    for (tool, args) in &calls {
        let (error, _) = error_of(&daemon, tool, args.clone()).await;
        assert!(error.contains("declined by the user"), "{tool}: {error}");
    }
    assert_eq!(declining.seen().len(), calls.len(), "each tool asked once");
    assert!(!root.join("ran-here").exists(), "a declined run_command ran nothing");
    let (_, out) = daemon.get(&format!("/sessions/{id}/output?format=text")).await;
    assert!(!out["data"].as_str().unwrap().contains("driven-42"), "{out}");
}
