//! The /mcp endpoint as MCP clients meet it: handshake, sessions, status codes, JSON-RPC errors,
//! the GET notification stream and the config gate. (Real third-party clients are exercised by
//! tests/interop; these probe what that suite does not.)

use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::*;
use crate::mcp_client::*;

#[tokio::test]
async fn initialize_negotiates_the_seed_revisions_and_declares_the_capabilities() {
    let daemon = Daemon::start().await;
    for (asked, answered) in [
        ("2026-07-28", "2026-07-28"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let reply = rpc(&daemon, "initialize", json!({"protocolVersion": asked, "capabilities": {}}), &[]).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.body["result"]["protocolVersion"], json!(answered), "asked {asked}");
    }
    let reply = initialize(&daemon, &[]).await;
    let result = &reply.body["result"];
    assert_eq!(result["capabilities"]["tools"]["listChanged"], json!(true));
    assert!(result["capabilities"]["experimental"]["claude/channel"].is_object());
    assert_eq!(result["serverInfo"]["name"], json!("tuicd"));
    assert!(result["instructions"].as_str().unwrap().contains("session"));
    assert!(reply.session().is_some_and(|s| s.len() == 36), "{:?}", reply.headers);
    let no_version = rpc(&daemon, "initialize", json!({}), &[]).await;
    assert_eq!(no_version.body["result"]["protocolVersion"], json!("2025-11-25"));
}

#[tokio::test]
async fn every_initialize_is_logged_as_fresh_resumed_or_reconnected() {
    let daemon = Daemon::start().await;
    let session = initialize(&daemon, &[]).await.session().unwrap();
    let again = initialize(&daemon, &[("mcp-session-id", &session)]).await;
    assert_eq!(again.session().as_deref(), Some(session.as_str()), "a held id is resumed");
    let stale = "0b7c8f0e-0000-4000-8000-000000000000";
    let minted = initialize(&daemon, &[("mcp-session-id", stale)]).await.session().unwrap();
    assert_ne!(minted, stale);
    wait_until("three initialize records", DEADLINE, || async {
        let log = daemon.log();
        let fresh = log.contains("event=\"fresh\"") || log.contains("event=fresh");
        let resumed = log.contains("resumed");
        let reconnected = log.contains("reconnected") && log.contains(&format!("presented_session=\"{stale}\""));
        (fresh && resumed && reconnected && log.contains("mcp_initialize")).then_some(())
    })
    .await;
}

#[tokio::test]
async fn notifications_and_client_responses_get_202_with_no_body() {
    let daemon = Daemon::start().await;
    let note = post_raw(&daemon, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &[]).await;
    assert_eq!(note.status, StatusCode::ACCEPTED);
    assert_eq!(note.body, Value::Null);
    let response = post_raw(&daemon, r#"{"jsonrpc":"2.0","id":"s1","result":{}}"#, &[]).await;
    assert_eq!(response.status, StatusCode::ACCEPTED);
}

#[tokio::test]
async fn bad_messages_get_the_json_rpc_error_codes() {
    let daemon = Daemon::start().await;
    let parse = post_raw(&daemon, "{not json", &[]).await;
    assert_eq!(parse.status, StatusCode::BAD_REQUEST);
    assert_eq!(parse.body["error"]["code"], json!(-32700));
    assert_eq!(parse.body["id"], Value::Null);
    let invalid = post_raw(&daemon, r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, &[]).await;
    assert_eq!(invalid.body["error"]["code"], json!(-32600));
    let batch = post_raw(&daemon, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, &[]).await;
    assert_eq!(batch.body["error"]["code"], json!(-32600));
    let unknown = rpc(&daemon, "resources/list", json!({}), &[]).await;
    assert_eq!(unknown.status, StatusCode::OK);
    assert_eq!(unknown.body["error"]["code"], json!(-32601));
    // The 2026-07-28 probe (Python SDK 2.x auto mode) is method-not-found, so the client falls back.
    let discover = rpc(&daemon, "server/discover", json!({}), &[("mcp-protocol-version", "2026-07-28")]).await;
    assert_eq!(discover.body["error"]["code"], json!(-32601));
    let no_name = rpc(&daemon, "tools/call", json!({"arguments": {}}), &[]).await;
    assert_eq!(no_name.body["error"]["code"], json!(-32602));
    let bad_args = rpc(&daemon, "tools/call", json!({"name": "session", "arguments": [1]}), &[]).await;
    assert_eq!(bad_args.body["error"]["code"], json!(-32602));
    let no_tool = rpc(&daemon, "tools/call", json!({"name": "nope"}), &[]).await;
    assert_eq!(no_tool.body["error"]["code"], json!(-32602));
    assert!(no_tool.body["error"]["message"].as_str().unwrap().contains("Valid tools: session"));
    assert_eq!(rpc(&daemon, "ping", json!({}), &[]).await.body["result"], json!({}));
}

#[tokio::test]
async fn a_foreign_origin_is_403_and_an_unsupported_protocol_version_is_400() {
    let daemon = Daemon::start().await;
    let evil = rpc(&daemon, "ping", json!({}), &[("origin", "http://evil.example.com")]).await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    assert!(evil.body["error"]["message"].as_str().unwrap().contains("allowed_origins"));
    let local = rpc(&daemon, "ping", json!({}), &[("origin", "http://tuic")]).await;
    assert_eq!(local.status, StatusCode::OK);
    let old = rpc(&daemon, "ping", json!({}), &[("mcp-protocol-version", "1999-01-01")]).await;
    assert_eq!(old.status, StatusCode::BAD_REQUEST);
    assert!(old.body["error"]["message"].as_str().unwrap().contains("2025-11-25"));
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let reply = rpc(&daemon, "ping", json!({}), &[("mcp-protocol-version", version)]).await;
        assert_eq!(reply.status, StatusCode::OK, "{version}");
    }
}

#[tokio::test]
async fn tools_call_needs_no_session_and_a_stale_id_recovers() {
    let daemon = Daemon::start().await;
    assert!(ok(&daemon, "session", json!({"action": "list"})).await.is_array());
    let stale = "5d1c5a0e-1111-4000-8000-000000000000";
    let (is_error, listed) = call_as(&daemon, "session", json!({"action": "list"}), &[("mcp-session-id", stale)]).await;
    assert!(!is_error && listed.is_array());
    let bad = rpc(&daemon, "ping", json!({}), &[("mcp-session-id", "has space")]).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn get_needs_the_session_header_and_delete_ends_the_session() {
    let daemon = Daemon::start().await;
    let get = daemon.client.get(Daemon::url("/mcp")).header("accept", "text/event-stream").send().await.unwrap();
    assert_eq!(get.status(), StatusCode::UNAUTHORIZED);
    let session = initialize(&daemon, &[]).await.session().unwrap();
    let deleted = daemon.client.delete(Daemon::url("/mcp")).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::OK);
    let after = initialize(&daemon, &[("mcp-session-id", &session)]).await;
    assert_ne!(after.session().unwrap(), session, "a deleted id is not resumed");
}

#[tokio::test]
async fn the_get_stream_announces_tools_list_changed_after_a_config_change() {
    let daemon = Daemon::start().await;
    let session = initialize(&daemon, &[]).await.session().unwrap();
    let mut body = open_stream(&daemon, &session).await;
    let all = ["session", "agent", "task", "progress", "repo", "ui", "plugin_dev_guide", "config", "debug"];
    let (status, _) = daemon.put("/config", json!({"disabled_native_tools": all})).await;
    assert_eq!(status, StatusCode::OK);
    read_until(&mut body, "notifications/tools/list_changed", "list_changed arrives").await;
    let listed = rpc(&daemon, "tools/list", json!({}), &[]).await;
    assert_eq!(listed.body["result"]["tools"], json!([]));
    let refused = rpc(&daemon, "tools/call", json!({"name": "session", "arguments": {"action": "list"}}), &[]).await;
    assert!(refused.body["error"]["message"].as_str().unwrap().contains("disabled by configuration"));
}

#[tokio::test]
async fn switching_the_endpoint_off_answers_503_and_leaves_the_rest_of_the_api_up() {
    let daemon = Daemon::builder().config(json!({"mcp_server_enabled": false})).start().await;
    let reply = initialize(&daemon, &[]).await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(reply.body["error"].as_str().unwrap().contains("mcp_server_enabled"));
    assert_eq!(daemon.get("/health").await.0, StatusCode::OK);
    daemon.put("/config", json!({"mcp_server_enabled": true})).await;
    assert_eq!(initialize(&daemon, &[]).await.status, StatusCode::OK);
}

#[tokio::test]
async fn tools_list_shows_the_session_tool_with_a_flat_derived_schema() {
    let daemon = Daemon::start().await;
    let listed = rpc(&daemon, "tools/list", json!({}), &[]).await;
    let tools = listed.body["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["session", "agent", "task", "progress", "repo", "ui", "plugin_dev_guide"],
        "config and debug are hidden by default"
    );
    let schema = &tools[0]["inputSchema"];
    assert_eq!(schema["type"], json!("object"));
    assert_eq!(schema["required"], json!(["action"]));
    assert!(schema["properties"]["action"]["enum"].as_array().unwrap().contains(&json!("process_stats")));
    let bad_cursor = rpc(&daemon, "tools/list", json!({"cursor": "x"}), &[]).await;
    assert_eq!(bad_cursor.body["error"]["code"], json!(-32602));
}

#[tokio::test]
async fn a_reconnecting_get_supersedes_the_old_stream_without_losing_its_own() {
    let daemon = Daemon::start().await;
    let session = initialize(&daemon, &[]).await.session().unwrap();
    let open = || open_stream(&daemon, &session);
    let mut old = open().await;
    let mut new = open().await;
    // The superseded stream ends; its teardown must not take the new stream's sender with it.
    let ended = tokio::time::timeout(DEADLINE, async { while let Some(Ok(_)) = old.next().await {} }).await;
    assert!(ended.is_ok(), "the superseded stream did not end");
    daemon.put("/config", json!({"disabled_native_tools": ["session"]})).await;
    read_until(&mut new, "notifications/tools/list_changed", "the new stream still delivers").await;
}
