//! Scope step-up for OAuth upstreams: a 403 `insufficient_scope` moves the upstream to
//! `needs_auth` and the next authorization asks for the granted scope plus the one the challenge
//! names; a scope the server keeps refusing ends in `failed` after at most three authorizations;
//! a plain 403 starts no authorization at all. An upstream whose `initialize` is open is asked
//! for its tools to learn the scope its 401 challenge names.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{DEADLINE, Daemon, wait_until};
use crate::mcp_client::{initialize, post_raw};
use crate::oauth_as::{AsOptions, TestAs};
use crate::upstream_oauth::{authorize, browse, oauth_upstream, with_upstreams};

async fn wait_status(daemon: &Daemon, status: &str) -> Value {
    wait_until(&format!("upstream docs {status}"), DEADLINE, || async {
        let (_, body) = daemon.get("/mcp/upstream-status").await;
        let entry = body["upstreams"].as_array()?.iter().find(|u| u["name"] == "docs")?.clone();
        (entry["status"] == status).then_some(entry)
    })
    .await
}

/// The person's part: waits for `needs_auth`, starts an authorization, approves it in the
/// browser and waits for `ready`. Returns the scope the authorization asked for.
async fn authorize_once(daemon: &Daemon, server: &TestAs) -> String {
    wait_status(daemon, "needs_auth").await;
    let (status, started) = authorize(daemon, "docs").await;
    assert_eq!(status, StatusCode::OK, "{started}");
    assert_eq!(browse(started["authorization_url"].as_str().unwrap()).await.0, StatusCode::OK);
    wait_status(daemon, "ready").await;
    server.last_authorize().get("scope").cloned().unwrap_or_default()
}

async fn whoami(daemon: &Daemon, session: &str) -> Value {
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "docs__whoami", "arguments": {}}});
    post_raw(daemon, body.to_string(), &[("mcp-session-id", session)]).await.body
}

async fn daemon_for(server: &TestAs) -> Daemon {
    with_upstreams(vec![oauth_upstream("u1", "docs", &server.mcp_url, json!({}))]).start().await
}

#[tokio::test]
async fn a_403_insufficient_scope_asks_for_the_union_and_the_retried_call_succeeds() {
    let options = AsOptions { scope_for: vec![("tools/call", "mcp:tools mcp:write")], ..Default::default() };
    let server = TestAs::start(options).await;
    let daemon = daemon_for(&server).await;
    assert_eq!(authorize_once(&daemon, &server).await, "mcp:tools", "the 401 challenge's scope first");
    let session = initialize(&daemon, &[]).await.session().unwrap();

    let answer = whoami(&daemon, &session).await;
    assert_eq!(answer["error"]["code"], json!(-32001), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("\"mcp:tools mcp:write\"") && message.contains("insufficient_scope"), "{message}");
    let status = wait_status(&daemon, "needs_auth").await;
    assert!(status["last_error"].as_str().unwrap().contains("insufficient_scope"), "{status}");

    assert_eq!(authorize_once(&daemon, &server).await, "mcp:tools mcp:write", "granted plus challenged");
    let answer = whoami(&daemon, &session).await;
    assert_eq!(answer["result"]["content"][0]["text"], json!("authorized"), "{answer}");
    assert_eq!(server.authorizations(), 2);
}

#[tokio::test]
async fn a_scope_the_server_keeps_refusing_ends_in_failed_after_at_most_three_authorizations() {
    let options = AsOptions {
        scope_for: vec![("tools/call", "mcp:tools mcp:admin")],
        withheld: Some("mcp:admin"),
        ..Default::default()
    };
    let server = TestAs::start(options).await;
    let daemon = daemon_for(&server).await;
    let mut answers = Vec::new();
    for _ in 0..4 {
        authorize_once(&daemon, &server).await;
        let session = initialize(&daemon, &[]).await.session().unwrap();
        let answer = whoami(&daemon, &session).await;
        answers.push(answer.clone());
        if answer["error"]["code"] != json!(-32001) {
            break;
        }
    }
    assert!(server.authorizations() <= 3, "{} authorizations: {answers:?}", server.authorizations());
    let last = answers.last().unwrap();
    assert_eq!(last["result"]["isError"], json!(true), "the last call names the failure: {answers:?}");
    let status = wait_status(&daemon, "failed").await;
    let reason = status["last_error"].as_str().unwrap();
    assert!(reason.contains("insufficient_scope") && reason.contains("mcp:admin"), "{reason}");
}

#[tokio::test]
async fn a_plain_403_starts_no_authorization() {
    let server = TestAs::start(AsOptions { forbidden: Some("tools/call"), ..Default::default() }).await;
    let daemon = daemon_for(&server).await;
    authorize_once(&daemon, &server).await;
    let session = initialize(&daemon, &[]).await.session().unwrap();
    let answer = whoami(&daemon, &session).await;
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("403"), "{answer}");
    assert_eq!(wait_status(&daemon, "ready").await["status"], "ready");
    assert_eq!(server.authorizations(), 1);
}

#[tokio::test]
async fn an_upstream_whose_initialize_is_open_is_probed_at_tools_list_for_its_scope() {
    let options =
        AsOptions { open_initialize: true, scopes_supported: &["mcp:tools", "mcp:other"], ..Default::default() };
    let server = TestAs::start(options).await;
    let daemon = daemon_for(&server).await;
    assert_eq!(authorize_once(&daemon, &server).await, "mcp:tools", "the challenge's scope, not every supported one");
}
