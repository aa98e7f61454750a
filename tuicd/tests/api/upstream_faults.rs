//! Upstream faults: a process killed mid-call, one that hangs, one that floods notifications,
//! one whose tool names are malicious, one whose tools/list has no tools; and one shared process
//! per upstream however many agents are connected.

use serde_json::json;

use crate::harness::{DEADLINE, wait_until};
use crate::mcp_client::ok;
use crate::upstream_util::*;

#[tokio::test]
async fn killing_an_upstream_mid_call_fails_the_call_clearly_and_the_upstream_restarts() {
    let daemon = std::sync::Arc::new(with_upstreams(&[everything("everything")]).start().await);
    let session = session(&daemon).await;
    wait_status(&daemon, "everything", "ready").await;
    let [pid] = children_running(daemon.pid(), "server-everything")[..] else {
        panic!("one upstream process: {:?}", children(daemon.pid()));
    };
    let call = {
        let (daemon, session) = (daemon.clone(), session.clone());
        tokio::spawn(async move {
            let args = json!({"duration": 30, "steps": 30});
            call_tool(&daemon, &session, "everything__trigger-long-running-operation", args).await
        })
    };
    wait_until("the long call in flight", DEADLINE, || async {
        (upstream(&daemon, "everything").await["metrics"]["call_count"] == 0 && !call.is_finished()).then_some(())
    })
    .await;
    let _ = std::process::Command::new("kill").arg("-9").arg(pid.to_string()).status();
    let failed = tokio::time::timeout(DEADLINE, call).await.expect("the call ends when its upstream dies").unwrap();
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    let text = failed["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("everything") && text.contains("exited"), "says what happened: {text}");

    ok(&daemon, "session", json!({"action": "list"})).await;
    let now = wait_until("a new upstream process", DEADLINE, || async {
        let now = children_running(daemon.pid(), "server-everything");
        (now.len() == 1 && now[0] != pid).then_some(now)
    })
    .await;
    let restarted = wait_status(&daemon, "everything", "ready").await;
    assert!(restarted.get("last_error").is_none(), "recovered, the error is cleared: {restarted}");
    assert_eq!(children_running(daemon.pid(), "server-everything"), now);
    let echo = call_tool(&daemon, &session, "everything__echo", json!({"message": "back"})).await;
    assert!(echo["result"]["content"][0]["text"].as_str().unwrap().contains("back"), "{echo}");
}

#[tokio::test]
async fn a_hung_upstream_meets_its_deadline_and_opens_the_breaker() {
    let (_scratch, scratch) = scratch_dir();
    let flag = scratch.join("hang");
    let mut hanging = fake("hangs", "hang", Some(&flag));
    hanging["timeout_secs"] = json!(1);
    let daemon = with_upstreams(&[hanging]).env("TUIC_UPSTREAM_HEALTH_INTERVAL_MS", "200").start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "hangs", "ready").await;

    let started = std::time::Instant::now();
    let slow = call_tool(&daemon, &session, "hangs__sleep", json!({})).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "the deadline held");
    assert_eq!(slow["result"]["isError"], true, "{slow}");
    assert!(slow["result"]["content"][0]["text"].as_str().unwrap().contains("no answer within 1s"), "{slow}");

    std::fs::write(&flag, "").unwrap();
    let open = wait_status(&daemon, "hangs", "circuit_open").await;
    assert!(open["last_error"].as_str().unwrap().contains("tools/list"), "{open}");
    let refused = call_tool(&daemon, &session, "hangs__quick", json!({})).await;
    let text = refused["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("circuit_open"), "a call names the state: {refused}");
    ok(&daemon, "session", json!({"action": "list"})).await;
}

#[tokio::test]
async fn a_flood_of_notifications_stays_bounded_and_the_upstream_still_answers() {
    let daemon = with_upstreams(&[fake("flood", "flood", None)]).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "flood", "ready").await;
    let before = rss_kib(daemon.pid());
    let flooded = call_tool(&daemon, &session, "flood__flood", json!({})).await;
    assert_eq!(flooded["result"]["content"][0]["text"], "flood done", "{flooded}");
    let answered = call_tool(&daemon, &session, "flood__ping_tool", json!({})).await;
    assert_eq!(answered["result"]["content"][0]["text"], "ping_tool done", "{answered}");
    let grown = rss_kib(daemon.pid()).saturating_sub(before);
    // 50,000 notifications of ~150 bytes: a daemon that kept them would hold well over 7 MB.
    assert!(grown < 32 * 1024, "resident memory grew {grown} KiB");
}

#[tokio::test]
async fn malicious_tool_names_are_skipped_and_logged_and_native_tools_stay_native() {
    let daemon = with_upstreams(&[fake("mal", "malicious", None)]).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "mal", "ready").await;
    let names = listed_names(&daemon, &session).await;
    let upstream: Vec<&String> = names.iter().filter(|n| n.starts_with("mal__")).collect();
    assert_eq!(upstream, ["mal__session", "mal__call_tool", "mal__a__b", "mal__fine"], "{names:?}");
    assert_eq!(names.iter().filter(|n| *n == "session").count(), 1);
    let log = daemon.log();
    for skipped in ["bad name!", "x/y", &"z".repeat(130)] {
        assert!(
            log.contains(&format!("tool={skipped}")) || log.contains(&format!("tool=\"{skipped}\"")),
            "{skipped} logged"
        );
    }
    assert!(log.contains("lists this name twice"), "the duplicate is logged");
    let native = call_tool(&daemon, &session, "session", json!({"action": "list"})).await;
    assert_eq!(native["result"]["content"][0]["text"], "[]", "the native session tool answered: {native}");
    let proxied = call_tool(&daemon, &session, "mal__session", json!({})).await;
    assert_eq!(proxied["result"]["content"][0]["text"], "session done");
    // Routed by the pair it was listed with: the "__" inside the tool's own name is just a character.
    let inner = call_tool(&daemon, &session, "mal__a__b", json!({})).await;
    assert_eq!(inner["result"]["content"][0]["text"], "a__b done", "{inner}");
    let refused = call_tool(&daemon, &session, "mal__x/y", json!({})).await;
    assert_eq!(refused["error"]["code"], -32602, "a skipped name cannot be called: {refused}");
}

#[tokio::test]
async fn a_tools_list_without_tools_is_a_logged_warning_not_a_silent_zero() {
    let daemon = with_upstreams(&[fake("empty", "notools", None)]).start().await;
    let status = wait_status(&daemon, "empty", "ready").await;
    assert_eq!(status["tool_count"], 0);
    wait_until("the warning in the log", DEADLINE, || async {
        let log = daemon.log();
        log.lines()
            .any(|l| l.contains("WARN") && l.contains("empty") && l.contains("without result.tools"))
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn twenty_agents_with_three_upstreams_share_three_processes() {
    let (_root, root) = scratch_dir();
    let servers = [everything("everything"), filesystem("fs", &root), everything("again")];
    let daemon = std::sync::Arc::new(with_upstreams(&servers).start().await);
    for name in ["everything", "fs", "again"] {
        wait_status(&daemon, name, "ready").await;
    }
    let mut agents = Vec::new();
    for n in 0..20 {
        let daemon = daemon.clone();
        agents.push(tokio::spawn(async move {
            let session = session(&daemon).await;
            assert!(listed_names(&daemon, &session).await.contains(&"again__echo".to_owned()));
            let echo = call_tool(&daemon, &session, "everything__echo", json!({"message": format!("agent {n}")})).await;
            assert!(echo["result"]["content"][0]["text"].as_str().unwrap().contains(&format!("agent {n}")), "{echo}");
        }));
    }
    for agent in agents {
        agent.await.unwrap();
    }
    let upstreams: Vec<_> =
        children(daemon.pid()).into_iter().filter(|(_, cmd)| cmd.contains("@modelcontextprotocol")).collect();
    assert_eq!(upstreams.len(), 3, "{upstreams:?}");
}

#[tokio::test]
async fn a_client_cancellation_ends_the_upstream_call_and_reaches_the_upstream() {
    let mut sleeper = fake("sleeper", "hang", None);
    sleeper["timeout_secs"] = json!(120);
    let builder = with_upstreams(&[sleeper]).config(json!({"disabled_native_tools": []}));
    let daemon = std::sync::Arc::new(builder.start().await);
    let session = session(&daemon).await;
    wait_status(&daemon, "sleeper", "ready").await;
    let mut stream = crate::mcp_client::open_stream(&daemon, &session).await;
    let call = {
        let (daemon, session) = (daemon.clone(), session.clone());
        tokio::spawn(async move {
            let params = json!({"name": "sleeper__sleep", "arguments": {}});
            request(&daemon, &session, 41, "tools/call", params).await
        })
    };
    // The upstream's log message during the call reaches the caller's stream.
    crate::mcp_client::read_until(&mut stream, "sleeping now", "the upstream's log message").await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 41}});
    let accepted = crate::mcp_client::post_raw(&daemon, cancel.to_string(), &[("mcp-session-id", &session)]).await;
    assert_eq!(accepted.status, 202);
    let ended = tokio::time::timeout(DEADLINE, call).await.expect("the cancelled call ends").unwrap();
    assert!(ended["result"]["content"][0]["text"].as_str().unwrap().contains("cancelled by the client"), "{ended}");
    // The fake prints what it was told on stderr, which `debug action=logs` shows as the upstream's.
    wait_until("the upstream told of the cancellation", DEADLINE, || async {
        let logs = ok(&daemon, "debug", json!({"action": "logs", "source": "upstream", "limit": 1000})).await;
        logs.to_string().contains("cancelled request").then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_client_that_went_away_can_still_cancel_its_upstream_call_by_its_request_id() {
    let mut sleeper = fake("sleeper", "hang", None);
    sleeper["timeout_secs"] = json!(120);
    let daemon = with_upstreams(&[sleeper]).config(json!({"disabled_native_tools": []})).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "sleeper", "ready").await;
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "sleeper__sleep", "arguments": {}}});
    let gone = daemon
        .client
        .post(crate::harness::Daemon::url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .timeout(std::time::Duration::from_millis(300))
        .body(body.to_string())
        .send()
        .await;
    assert!(gone.is_err(), "the client gave up before the answer: {:?}", gone.map(|r| r.status()));
    // Going away cancels nothing (the client was told the call may still complete, see
    // upstream_proxy.rs); the call stays in flight under its request id, which the client's
    // `notifications/cancelled` still ends.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}});
    let accepted = crate::mcp_client::post_raw(&daemon, cancel.to_string(), &[("mcp-session-id", &session)]).await;
    assert_eq!(accepted.status, 202);
    let logs = wait_until("the upstream told of the cancellation", DEADLINE, || async {
        let logs = ok(&daemon, "debug", json!({"action": "logs", "source": "upstream", "limit": 1000})).await;
        logs.to_string().contains("cancelled request").then_some(logs)
    })
    .await;
    assert_eq!(logs.to_string().matches("cancelled request").count(), 1, "cancelled once: {logs}");
}

#[tokio::test]
async fn a_burst_of_list_changed_costs_at_most_one_refetch_in_flight_and_one_queued() {
    let daemon = with_upstreams(&[fake("chatty", "chatty", None)]).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "chatty", "ready").await;
    let lists =
        |answer: serde_json::Value| answer["result"]["content"][0]["text"].as_str().unwrap().parse::<u32>().unwrap();
    let before = lists(call_tool(&daemon, &session, "chatty__lists", json!({})).await);
    let burst = call_tool(&daemon, &session, "chatty__burst", json!({})).await;
    assert_eq!(burst["result"]["content"][0]["text"], "burst done", "{burst}");
    // The re-fetches are requests to the same process, answered in order: once one is seen, a
    // daemon that re-fetched per notification would have hundreds on the way (at least the 256
    // the notification queue holds). Coalesced, a queued re-fetch runs again only while the burst
    // is still being read, so a few run, however many notifications come.
    let after = wait_until("a re-fetch after the burst", DEADLINE, || async {
        let after = lists(call_tool(&daemon, &session, "chatty__lists", json!({})).await);
        (after > before).then_some(after)
    })
    .await;
    let settled = lists(call_tool(&daemon, &session, "chatty__lists", json!({})).await);
    assert!(settled - before <= 16, "500 notifications: {before} -> {after} -> {settled} tools/list");
}

#[tokio::test]
async fn a_crash_names_its_last_stderr_lines_which_go_to_a_bounded_file_not_the_daemons_log() {
    let daemon = with_upstreams(&[fake("crashy", "crashy", None)]).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "crashy", "ready").await;
    let crashed = call_tool(&daemon, &session, "crashy__crash", json!({})).await;
    assert_eq!(crashed["result"]["isError"], true, "{crashed}");
    let down = wait_until("the crash's error", DEADLINE, || async {
        let status = upstream(&daemon, "crashy").await;
        status["last_error"].as_str().is_some_and(|e| e.contains("exited or disconnected")).then_some(status)
    })
    .await;
    let error = down["last_error"].as_str().unwrap();
    assert!(error.contains("Traceback (most recent call last)") && error.contains("RuntimeError: boom"), "{error}");
    let file = daemon.dir.path().join("logs/upstreams/crashy.log");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains("chatter line 0\n") && written.contains("chatter line 199\nTraceback"), "every line");
    let log = daemon.log();
    // The crash's own warning quotes the last lines; the stderr lines themselves are sampled.
    let sampled = log.lines().filter(|l| l.contains("chatter line") && !l.contains("exited or disconnected")).count();
    assert!(sampled <= 1, "{sampled} of 200 stderr lines in the daemon's log");
    // Respawned (after the 5 s gap) and ready again, the crash's error is gone.
    wait_until("the respawned upstream ready without the error", DEADLINE, || async {
        let status = upstream(&daemon, "crashy").await;
        (status["status"] == "ready" && status.get("last_error").is_none()).then_some(())
    })
    .await;
    assert_eq!(children_running(daemon.pid(), "fake_mcp.py").len(), 1, "one process again");
}
