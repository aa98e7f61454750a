//! The upstream proxy with real MCP servers: `server-everything` and `server-filesystem` as stdio
//! upstreams, their tools listed with prefixes, called and passed through, filtered, their
//! progress delivered to the caller, and the tool list following the upstreams.

use serde_json::{Value, json};

use crate::harness::{DEADLINE, wait_until};
use crate::mcp_client::{open_stream, post_raw, read_until};
use crate::upstream_util::*;

#[tokio::test]
async fn real_servers_are_listed_with_prefixes_and_their_results_pass_through_exactly() {
    let (_root, root) = scratch_dir();
    std::fs::write(root.join("hello.txt"), "hello from the filesystem upstream").unwrap();
    let daemon = with_upstreams(&[everything("everything"), filesystem("fs", &root)]).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "everything", "ready").await;
    wait_status(&daemon, "fs", "ready").await;

    let names = listed_names(&daemon, &session).await;
    for expected in ["session", "everything__echo", "everything__get-sum", "fs__read_text_file", "fs__list_directory"] {
        assert!(names.contains(&expected.to_owned()), "{expected} listed: {names:?}");
    }
    let listing = request(&daemon, &session, 4, "tools/list", json!({})).await;
    let echo = listing["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "everything__echo").unwrap();
    assert_eq!(echo["description"], "Echoes back the input string", "the upstream's description is kept");
    assert_eq!(echo["inputSchema"]["properties"]["message"]["type"], "string", "{echo}");

    let proxied = call_tool(&daemon, &session, "everything__echo", json!({"message": "hi there"})).await;
    assert_eq!(proxied["result"], direct_everything_call("echo", json!({"message": "hi there"})).await);
    let sum = call_tool(&daemon, &session, "everything__get-sum", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum["result"], direct_everything_call("get-sum", json!({"a": 2, "b": 3})).await);
    assert!(sum["result"]["content"][0]["text"].as_str().unwrap().contains('5'), "{sum}");

    let read = call_tool(&daemon, &session, "fs__read_text_file", json!({"path": root.join("hello.txt")})).await;
    let text = read["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("hello from the filesystem upstream"), "{read}");

    let status = upstream(&daemon, "everything").await;
    assert_eq!(status["status"], "ready");
    assert_eq!(status["transport"]["type"], "stdio");
    assert!(status["tools"].as_array().unwrap().contains(&json!("echo")), "original names: {status}");
    assert_eq!(status["metrics"]["call_count"], 2, "{status}");
    assert!(status["metrics"]["last_latency_ms"].is_u64(), "{status}");
}

#[tokio::test]
async fn a_tool_error_and_structured_content_pass_through_untouched() {
    let daemon = with_upstreams(&[everything("everything")]).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "everything", "ready").await;

    let failed = call_tool(&daemon, &session, "everything__get-sum", json!({"a": "x"})).await;
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    assert_eq!(failed["result"], direct_everything_call("get-sum", json!({"a": "x"})).await);

    let structured =
        call_tool(&daemon, &session, "everything__get-structured-content", json!({"location": "New York"})).await;
    let result = &structured["result"];
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(result["structuredContent"], text, "structuredContent kept beside its text: {result}");
    assert!(result.get("isError").is_none(), "no field is added: {result}");
}

#[tokio::test]
async fn progress_reaches_the_caller_with_its_own_token() {
    let daemon = std::sync::Arc::new(with_upstreams(&[everything("everything")]).start().await);
    let session = session(&daemon).await;
    wait_status(&daemon, "everything", "ready").await;
    let mut stream = open_stream(&daemon, &session).await;
    let call = {
        let (daemon, session) = (daemon.clone(), session.clone());
        tokio::spawn(async move {
            let params = json!({"name": "everything__trigger-long-running-operation",
                "arguments": {"duration": 1, "steps": 3}, "_meta": {"progressToken": "caller-token-7"}});
            request(&daemon, &session, 11, "tools/call", params).await
        })
    };
    read_until(&mut stream, r#""progressToken":"caller-token-7""#, "progress with the caller's token").await;
    let done = call.await.unwrap();
    assert!(done["result"]["content"][0]["text"].as_str().unwrap().contains("completed"), "{done}");
}

#[tokio::test]
async fn filters_apply_at_listing_and_at_dispatch_also_through_call_tool() {
    let mut filtered = everything("everything");
    filtered["tool_filter"] = json!({"mode": "allow", "patterns": ["echo", "get-s*"]});
    let daemon = with_upstreams(&[filtered]).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "everything", "ready").await;

    let names = listed_names(&daemon, &session).await;
    let upstream: Vec<&String> = names.iter().filter(|n| n.starts_with("everything__")).collect();
    assert_eq!(upstream, ["everything__echo", "everything__get-structured-content", "everything__get-sum"]);
    let refused = call_tool(&daemon, &session, "everything__get-env", json!({})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("get-env") && message.contains("everything__echo"), "names the valid tools: {message}");
    let unknown = call_tool(&daemon, &session, "nothere__echo", json!({})).await;
    assert!(unknown["error"]["message"].as_str().unwrap().contains("Valid upstreams: everything"), "{unknown}");

    // The collapsed surface: discovery and dispatch re-apply the same filter.
    let (status, _) = daemon.put("/config", json!({"collapse_tools": true})).await;
    assert!(status.is_success());
    let names = listed_names(&daemon, &session).await;
    assert!(!names.iter().any(|n| n.contains("__")), "collapsed lists no upstream tool: {names:?}");
    let found = call_tool(&daemon, &session, "search_tools", json!({"query": "echoes back the input"})).await;
    assert!(found["result"]["content"][0]["text"].as_str().unwrap().contains("everything__echo"), "{found}");
    let schema = call_tool(&daemon, &session, "get_tool_schema", json!({"tool_name": "everything__echo"})).await;
    assert!(schema["result"]["content"][0]["text"].as_str().unwrap().contains("inputSchema"), "{schema}");
    let via_meta = call_tool(
        &daemon,
        &session,
        "call_tool",
        json!({"tool_name": "everything__echo", "arguments": {"message": "m"}}),
    )
    .await;
    assert_eq!(via_meta["result"], direct_everything_call("echo", json!({"message": "m"})).await);
    let hidden = call_tool(&daemon, &session, "call_tool", json!({"tool_name": "everything__get-env"})).await;
    assert_eq!(hidden["result"]["isError"], true, "{hidden}");
    assert!(hidden["result"]["content"][0]["text"].as_str().unwrap().contains("call_tool: Unknown tool"), "{hidden}");
}

#[tokio::test]
async fn list_changed_reaches_every_stream_when_the_upstream_tools_or_the_config_change() {
    let daemon = with_upstreams(&[fake("grows", "grows", None)]).start().await;
    let (first, second) = (session(&daemon).await, session(&daemon).await);
    wait_status(&daemon, "grows", "ready").await;
    assert!(listed_names(&daemon, &first).await.contains(&"grows__first".to_owned()));
    let mut streams = [open_stream(&daemon, &first).await, open_stream(&daemon, &second).await];

    // The upstream's own notifications/tools/list_changed: its tools are fetched again.
    let grown = call_tool(&daemon, &first, "grows__grow", json!({})).await;
    assert!(grown["result"].is_object(), "{grown}");
    for stream in &mut streams {
        read_until(stream, "notifications/tools/list_changed", "list_changed after the upstream grew").await;
    }
    assert!(listed_names(&daemon, &second).await.contains(&"grows__second".to_owned()));

    // A configuration change (re-read on SIGHUP) adds an upstream and leaves the unchanged one be.
    let before = children_running(daemon.pid(), "fake_mcp.py");
    assert_eq!(before.len(), 1, "{:?}", children(daemon.pid()));
    write_upstreams(daemon.dir.path(), &[fake("grows", "grows", None), everything("everything")]);
    let _ = std::process::Command::new("kill").arg("-HUP").arg(daemon.pid().to_string()).status();
    for stream in &mut streams {
        read_until(stream, "notifications/tools/list_changed", "list_changed after the config change").await;
    }
    wait_until("everything listed after the reload", DEADLINE, || async {
        listed_names(&daemon, &second).await.contains(&"everything__echo".to_owned()).then_some(())
    })
    .await;
    assert_eq!(children_running(daemon.pid(), "fake_mcp.py"), before, "the unchanged upstream kept its process");
}

#[tokio::test]
async fn the_first_list_after_boot_waits_for_upstreams_still_connecting() {
    let daemon = with_upstreams(&[fake("grows", "grows", None)]).start().await;
    let session = session(&daemon).await;
    let names = listed_names(&daemon, &session).await;
    assert!(names.contains(&"grows__first".to_owned()), "{names:?}");
}

#[tokio::test]
async fn a_call_whose_client_goes_away_still_runs_to_its_answer_upstream() {
    let daemon = with_upstreams(&[everything("everything")]).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "everything", "ready").await;
    // The client stops waiting after 1 s of a 3 s call and drops its connection, as a client
    // past its own deadline does: tuicd told it the call may still complete, and it does.
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "everything__trigger-long-running-operation", "arguments": {"duration": 3, "steps": 3}}});
    let headers = [("mcp-session-id", session.as_str())];
    let gave_up =
        tokio::time::timeout(std::time::Duration::from_secs(1), post_raw(&daemon, body.to_string(), &headers));
    assert!(gave_up.await.is_err(), "the call lasts longer than the client waits");
    let metrics = wait_until("the abandoned call answered upstream", DEADLINE, || async {
        let metrics = upstream(&daemon, "everything").await["metrics"].clone();
        (metrics["call_count"] == 1).then_some(metrics)
    })
    .await;
    assert_eq!(metrics["error_count"], 0, "not cancelled, not failed: {metrics}");
    assert!(metrics["last_latency_ms"].as_u64().unwrap() >= 3000, "the whole operation ran: {metrics}");
}

#[tokio::test]
async fn each_upstream_tool_states_its_deadline_and_call_tool_the_longest() {
    let mut slow = everything("slow");
    slow["timeout_secs"] = json!(90);
    let daemon = with_upstreams(&[everything("everything"), slow]).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, "everything", "ready").await;
    wait_status(&daemon, "slow", "ready").await;
    let listing = request(&daemon, &session, 4, "tools/list", json!({})).await;
    let tools = listing["result"]["tools"].as_array().unwrap();
    let deadline =
        |name: &str| tools.iter().find(|t| t["name"] == name).map(|t| t["_meta"]["tuic/deadline_ms"].clone());
    assert_eq!(deadline("everything__echo"), Some(json!(35_000)), "timeout_secs 30 plus 5 s");
    assert_eq!(deadline("slow__echo"), Some(json!(95_000)));
    assert_eq!(deadline("session"), Some(Value::Null), "native tools state none");
    daemon.put("/config", json!({"collapse_tools": true})).await;
    let collapsed = request(&daemon, &session, 5, "tools/list", json!({})).await;
    let call_tool = collapsed["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "call_tool").unwrap();
    assert_eq!(call_tool["_meta"]["tuic/deadline_ms"], json!(95_000), "{call_tool}");
}
