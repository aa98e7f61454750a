//! OAuth 2.1 for HTTP upstreams against a local authorization server (`oauth_as.rs`): the flow
//! with a scripted browser step, dynamic client registration, a pre-registered confidential
//! client, a late redirect, cancel, two concurrent flows, an off-domain authorization server,
//! and the token kept out of the config, every answer and the log.

use std::os::unix::fs::PermissionsExt;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{DEADLINE, Daemon, DaemonBuilder, read_events, wait_until};
use crate::oauth_as::{AsOptions, TestAs};

/// An OAuth upstream entry of `mcp-upstreams.json` for `url`.
pub(crate) fn oauth_upstream(id: &str, name: &str, url: &str, auth: Value) -> Value {
    let mut auth = auth;
    auth["type"] = json!("oauth2");
    json!({"id": id, "name": name, "transport": {"type": "http", "url": url}, "auth": auth})
}

/// A daemon whose config dir holds `mcp-upstreams.json` with `servers`.
pub(crate) fn with_upstreams(servers: Vec<Value>) -> DaemonBuilder {
    let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();
    let file = json!({"servers": servers});
    std::fs::write(dir.path().join("mcp-upstreams.json"), serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    Daemon::builder().dir(dir)
}

/// The scripted browser: follows the authorization URL (the test AS approves at once) to the
/// redirect, then loads the redirect on the daemon's callback port. Returns its status and page.
pub(crate) async fn browse(authorization_url: &str) -> (StatusCode, String) {
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let approval = browser.get(authorization_url).send().await.unwrap();
    assert_eq!(approval.status(), StatusCode::FOUND, "the AS approves: {:?}", approval.text().await);
    let location = approval.headers()["location"].to_str().unwrap().to_owned();
    let page = browser.get(&location).send().await.unwrap();
    (page.status(), page.text().await.unwrap())
}

pub(crate) async fn authorize(daemon: &Daemon, name: &str) -> (StatusCode, Value) {
    daemon.post(&format!("/mcp/upstreams/{name}/authorize"), json!({})).await
}

fn credentials(daemon: &Daemon) -> Value {
    serde_json::from_slice(&std::fs::read(daemon.dir.path().join("credentials.json")).unwrap()).unwrap()
}

#[tokio::test]
async fn authorizing_registers_a_client_and_stores_the_token_outside_config_answers_and_log() {
    let server = TestAs::start(AsOptions::default()).await;
    let daemon = with_upstreams(vec![oauth_upstream("u1", "docs", &server.mcp_url, json!({}))])
        .env("RUST_LOG", "debug")
        .start()
        .await;
    let events = daemon.client.get(Daemon::url("/events?types=mcp-oauth-start")).send().await.unwrap();

    let (status, started) = authorize(&daemon, "docs").await;
    assert_eq!(status, StatusCode::OK, "{started}");
    let url = started["authorization_url"].as_str().unwrap().to_owned();
    assert!(url.starts_with(&format!("{}/authorize?", server.issuer)), "{url}");
    assert_eq!(started["as_origin"], json!(server.issuer));
    assert_eq!(started["cross_domain_as"], json!(false));
    let seen = read_events(events, |e| !e.is_empty()).await;
    assert_eq!(
        seen[0].2,
        json!({"name": "docs", "authorization_url": url, "as_origin": server.issuer, "cross_domain_as": false})
    );

    let (status, page) = browse(&url).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("authorized"), "{page}");
    let query = server.last_authorize();
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["resource"], server.mcp_url);
    assert_eq!(query["scope"], "mcp:tools", "the challenge's scope is asked for");
    let (registrations, exchanges, _, _) = server.counts();
    assert_eq!((registrations, exchanges), (1, 1));

    // The token sits in the 0600 credential file, nowhere else.
    let path = daemon.dir.path().join("credentials.json");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let stored = credentials(&daemon);
    let token = stored["upstreams"]["u1"]["tokens"]["access_token"].as_str().unwrap().to_owned();
    assert!(server.issued().contains(&token));
    let config = std::fs::read_to_string(daemon.dir.path().join("mcp-upstreams.json")).unwrap();
    let file: Value = serde_json::from_str(&config).unwrap();
    assert_eq!(file["servers"][0]["auth"]["client_id"], json!("dcr-1"), "the registered client_id is recorded");
    let mut answers = vec![started.to_string()];
    for route in ["/config", "/mcp/upstreams", "/mcp/upstream-status", "/ui/confirms"] {
        answers.push(daemon.get(route).await.1.to_string());
    }
    // A second flow reuses the registered client.
    let (_, again) = authorize(&daemon, "docs").await;
    answers.push(again.to_string());
    assert_eq!(server.counts().0, 1, "the registration is reused");
    let log = daemon.log();
    for secret in server.issued() {
        assert!(!config.contains(&secret), "a token in mcp-upstreams.json");
        assert!(!log.contains(&secret), "a token in the log");
        for answer in &answers {
            assert!(!answer.contains(&secret), "a token in an answer: {answer}");
        }
    }
}

#[tokio::test]
async fn a_preregistered_confidential_client_authenticates_as_the_server_asks() {
    for methods in [vec!["client_secret_post"], vec!["client_secret_basic"]] {
        let options = AsOptions {
            registration: false,
            client: Some(("pre", "s3cret")),
            auth_methods: methods,
            ..Default::default()
        };
        let server = TestAs::start(options).await;
        let auth = json!({"client_id": "pre", "client_secret": "s3cret", "scopes": ["mcp:tools", "extra"]});
        let daemon = with_upstreams(vec![oauth_upstream("u1", "pre", &server.mcp_url, auth)]).start().await;
        let (status, started) = authorize(&daemon, "pre").await;
        assert_eq!(status, StatusCode::OK, "{started}");
        let (status, page) = browse(started["authorization_url"].as_str().unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert_eq!(server.last_authorize()["scope"], "mcp:tools extra", "configured scopes win");
        assert_eq!(server.counts().1, 1);
    }
}

#[tokio::test]
async fn an_off_domain_authorization_server_is_flagged_not_refused() {
    let server = TestAs::start(AsOptions { as_host: "127.0.0.2", ..Default::default() }).await;
    let daemon = with_upstreams(vec![oauth_upstream("u1", "far", &server.mcp_url, json!({}))]).start().await;
    let (status, started) = authorize(&daemon, "far").await;
    assert_eq!(status, StatusCode::OK, "{started}");
    assert_eq!(started["cross_domain_as"], json!(true));
    assert!(started["as_origin"].as_str().unwrap().starts_with("http://127.0.0.2:"), "{started}");
    let (status, _) = browse(started["authorization_url"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn two_upstreams_authorize_at_once_sharing_nothing() {
    let a = TestAs::start(AsOptions::default()).await;
    let b = TestAs::start(AsOptions::default()).await;
    let daemon = with_upstreams(vec![
        oauth_upstream("ua", "alpha", &a.mcp_url, json!({})),
        oauth_upstream("ub", "beta", &b.mcp_url, json!({})),
    ])
    .start()
    .await;
    let (sa, (sb, started_b)) = tokio::join!(authorize(&daemon, "alpha"), authorize(&daemon, "beta"));
    let (sa, started_a) = sa;
    assert_eq!((sa, sb), (StatusCode::OK, StatusCode::OK));
    // The second one finishes first; neither waits for the other.
    assert_eq!(browse(started_b["authorization_url"].as_str().unwrap()).await.0, StatusCode::OK);
    assert_eq!(browse(started_a["authorization_url"].as_str().unwrap()).await.0, StatusCode::OK);
    let stored = credentials(&daemon);
    let ta = stored["upstreams"]["ua"]["tokens"]["access_token"].as_str().unwrap();
    let tb = stored["upstreams"]["ub"]["tokens"]["access_token"].as_str().unwrap();
    assert!(a.issued().contains(&ta.to_owned()) && b.issued().contains(&tb.to_owned()));
}

#[tokio::test]
async fn a_cancelled_flow_is_gone_and_its_redirect_says_so() {
    let server = TestAs::start(AsOptions::default()).await;
    let daemon = with_upstreams(vec![oauth_upstream("u1", "docs", &server.mcp_url, json!({}))]).start().await;
    let (_, started) = authorize(&daemon, "docs").await;
    let (status, body) = daemon.post("/mcp/upstreams/docs/authorize/cancel", json!({})).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"ok": true})));
    let (status, body) = daemon.post("/mcp/upstreams/docs/authorize/cancel", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["error"].as_str().unwrap().contains("no authorization"), "{body}");
    let (status, page) = browse(started["authorization_url"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(page.contains("cancelled") && page.contains("Authorize"), "{page}");
    assert_eq!(server.counts().1, 0, "no code was exchanged");
}

#[tokio::test]
async fn a_redirect_after_the_flow_expired_gets_a_page_naming_the_reason() {
    let server = TestAs::start(AsOptions::default()).await;
    let daemon = with_upstreams(vec![oauth_upstream("u1", "docs", &server.mcp_url, json!({}))])
        .env("TUIC_OAUTH_FLOW_TIMEOUT_MS", "1000")
        .start()
        .await;
    let (_, started) = authorize(&daemon, "docs").await;
    wait_until("the sweep ends the flow", DEADLINE, || async {
        daemon.log().contains("authorization expired without a redirect").then_some(())
    })
    .await;
    let (status, _) = daemon.post("/mcp/upstreams/docs/authorize/cancel", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing is left to cancel");
    let (status, page) = browse(started["authorization_url"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(page.contains("expired"), "{page}");
    assert!(page.contains("tuicd upstream authorize"), "the page names the retry step: {page}");
}

#[tokio::test]
async fn authorize_refuses_what_it_cannot_authorize_by_name() {
    let server = TestAs::start(AsOptions::default()).await;
    let stdio = json!({"id": "s1", "name": "local", "transport": {"type": "stdio", "command": "true"}});
    let daemon = with_upstreams(vec![stdio, oauth_upstream("u1", "docs", &server.mcp_url, json!({}))]).start().await;
    let (status, body) = authorize(&daemon, "nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["error"].as_str().unwrap().contains("\"nope\""), "{body}");
    let (status, body) = authorize(&daemon, "local").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("oauth2"), "{body}");
    let (status, body) = daemon.post("/mcp/oauth/callback", json!({"url": "not a url"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().starts_with("url:"), "{body}");
}
