//! OAuth upstreams in the live registry: an authorized upstream becomes ready and its tools
//! answer; an expired token is refreshed once for a burst of calls; a token still refused after
//! its refresh moves the upstream to `needs_auth`; an upstream that needs authorization asks a
//! person once through the confirm flow and starts the flow on approval.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{ConfirmAnswerer, DEADLINE, Daemon, read_events, wait_until};
use crate::mcp_client::{initialize, post_raw};
use crate::oauth_as::{AsOptions, TestAs};
use crate::upstream_oauth::{authorize, browse, oauth_upstream, with_upstreams};

async fn wait_status(daemon: &Daemon, name: &str, status: &str) -> Value {
    wait_until(&format!("upstream {name} {status}"), DEADLINE, || async {
        let (_, body) = daemon.get("/mcp/upstream-status").await;
        let entry = body["upstreams"].as_array()?.iter().find(|u| u["name"] == name)?.clone();
        (entry["status"] == status).then_some(entry)
    })
    .await
}

async fn whoami(daemon: &Daemon, session: &str) -> Value {
    whoami_as(daemon, session, 1).await
}

/// `docs__whoami` with JSON-RPC id `id` (calls in flight at once need distinct ids).
async fn whoami_as(daemon: &Daemon, session: &str, id: u64) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "docs__whoami", "arguments": {}}});
    post_raw(daemon, body.to_string(), &[("mcp-session-id", session)]).await.body
}

/// A daemon with upstream `docs` behind `server`, authorized and ready; with an MCP session.
async fn authorized(server: &TestAs) -> (Daemon, String) {
    let daemon = with_upstreams(vec![oauth_upstream("u1", "docs", &server.mcp_url, json!({}))]).start().await;
    wait_status(&daemon, "docs", "needs_auth").await;
    let (status, started) = authorize(&daemon, "docs").await;
    assert_eq!(status, StatusCode::OK, "{started}");
    wait_status(&daemon, "docs", "authenticating").await;
    assert_eq!(browse(started["authorization_url"].as_str().unwrap()).await.0, StatusCode::OK);
    wait_status(&daemon, "docs", "ready").await;
    let session = initialize(&daemon, &[]).await.session().unwrap();
    (daemon, session)
}

#[tokio::test]
async fn an_authorized_upstream_becomes_ready_and_its_tools_answer() {
    let server = TestAs::start(AsOptions::default()).await;
    let (daemon, session) = authorized(&server).await;
    let answer = whoami(&daemon, &session).await;
    assert_eq!(answer["result"]["content"][0]["text"], json!("authorized"), "{answer}");
}

#[tokio::test]
async fn an_expired_token_is_refreshed_once_for_a_burst_of_calls() {
    let server = TestAs::start(AsOptions { token_lifetime: Some(Duration::from_secs(4)), ..Default::default() }).await;
    let (daemon, session) = authorized(&server).await;
    wait_until("the issued tokens expire at the server", DEADLINE, || async { server.all_expired().then_some(()) })
        .await;
    let before = server.counts().2;
    let answers = futures_util::future::join_all((1..=4).map(|id| whoami_as(&daemon, &session, id))).await;
    for answer in &answers {
        assert_eq!(answer["result"]["content"][0]["text"], json!("authorized"), "{answer}");
    }
    assert_eq!(server.counts().2, before + 1, "one refresh serves every waiting call");
    assert_eq!(wait_status(&daemon, "docs", "ready").await["status"], "ready");
}

#[tokio::test]
async fn a_token_inside_its_expiry_margin_is_refreshed_before_use_without_a_401() {
    // A 20 s token has a 10 s margin (half its lifetime, below the 60 s one).
    let server = TestAs::start(AsOptions { token_lifetime: Some(Duration::from_secs(20)), ..Default::default() }).await;
    let (daemon, session) = authorized(&server).await;
    let (before, refused_before) = (server.counts().2, server.refused_mcp_requests());
    // At most 8 s left: inside the margin, with time for the call before the server refuses it.
    wait_until("the token is inside its margin", DEADLINE, || async {
        server.all_within(Duration::from_secs(8)).then_some(())
    })
    .await;
    assert!(!server.all_expired(), "the token must still be valid at the server for this test");
    let answer = whoami(&daemon, &session).await;
    assert_eq!(answer["result"]["content"][0]["text"], json!("authorized"), "{answer}");
    assert_eq!(server.counts().2, before + 1, "refreshed before use");
    assert_eq!(server.refused_mcp_requests(), refused_before, "no request spent a 401 on the stale token");
}

#[tokio::test]
async fn a_token_refused_after_its_refresh_moves_the_upstream_to_needs_auth() {
    let server = TestAs::start(AsOptions::default()).await;
    let (daemon, session) = authorized(&server).await;
    server.reject_all(true);
    let before = server.counts().2;
    let answer = whoami(&daemon, &session).await;
    assert!(answer.get("error").is_some() || answer["result"]["isError"] == json!(true), "{answer}");
    wait_status(&daemon, "docs", "needs_auth").await;
    assert_eq!(server.counts().2, before + 1, "refreshed once, then given up");
    // A new authorization brings it back.
    server.reject_all(false);
    let (_, started) = authorize(&daemon, "docs").await;
    assert_eq!(browse(started["authorization_url"].as_str().unwrap()).await.0, StatusCode::OK);
    wait_status(&daemon, "docs", "ready").await;
    let answer = whoami(&daemon, &session).await;
    assert_eq!(answer["result"]["content"][0]["text"], json!("authorized"), "{answer}");
}

#[tokio::test]
async fn an_upstream_needing_authorization_asks_a_person_once_and_starts_on_approval() {
    let server = TestAs::start(AsOptions { as_host: "127.0.0.2", ..Default::default() }).await;
    let daemon = Daemon::start().await;
    let answerer = ConfirmAnswerer::start(&daemon, true).await;
    let events = daemon.client.get(Daemon::url("/events?types=mcp-oauth-start")).send().await.unwrap();
    let config = json!({"servers": [oauth_upstream("u1", "docs", &server.mcp_url, json!({}))]});
    let (status, body) = daemon.put("/mcp/upstreams", json!({"base": {"servers": []}, "config": config})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let seen = read_events(events, |e| !e.is_empty()).await;
    assert_eq!(seen[0].2["name"], json!("docs"));
    let url = seen[0].2["authorization_url"].as_str().unwrap().to_owned();
    let asked = answerer.seen();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["kind"], json!("oauth_consent"));
    let message = asked[0]["message"].as_str().unwrap();
    assert!(message.contains(&server.issuer), "the consent names the AS origin: {message}");
    assert!(message.contains("another domain"), "an off-domain AS is a warning: {message}");
    assert_eq!(browse(&url).await.0, StatusCode::OK);
    wait_status(&daemon, "docs", "ready").await;
    assert_eq!(answerer.seen().len(), 1, "asked once");
}

#[tokio::test]
async fn the_cli_prints_the_url_and_waits_until_the_upstream_is_ready() {
    let server = TestAs::start(AsOptions::default()).await;
    let daemon = with_upstreams(vec![oauth_upstream("u1", "docs", &server.mcp_url, json!({}))]).start().await;
    wait_status(&daemon, "docs", "needs_auth").await;
    let mut cli = tokio::process::Command::new(env!("CARGO_BIN_EXE_tuicd"))
        .arg("--config-dir")
        .arg(daemon.dir.path())
        .args(["upstream", "authorize", "docs"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(cli.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(DEADLINE, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the CLI prints the URL");
            if line.trim().starts_with(&format!("{}/authorize?", server.issuer)) {
                return line.trim().to_owned();
            }
        }
    })
    .await
    .expect("the URL in time");
    assert_eq!(browse(&url).await.0, StatusCode::OK);
    let status = tokio::time::timeout(DEADLINE, cli.wait()).await.expect("the CLI ends").unwrap();
    let mut rest = String::new();
    while let Ok(Some(line)) = lines.next_line().await {
        rest.push_str(&line);
        rest.push('\n');
    }
    let mut stderr = String::new();
    cli.stderr.take().unwrap().read_to_string(&mut stderr).await.unwrap();
    assert!(status.success(), "{rest}{stderr}");
    assert!(rest.contains("Authorized: upstream \"docs\" is ready (1 tools)"), "{rest}");
}
