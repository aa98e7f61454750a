//! `/mobile`, the phone page: served by the daemon itself, every file from its own origin, and
//! behind the same Basic Auth as the API over TCP. The page's behaviour in a real browser is
//! tested by `tests/mobile/` (headless Chromium).

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{Daemon, free_port, quick_hash};

async fn fetch(daemon: &Daemon, path: &str) -> (StatusCode, String, String) {
    let response = daemon.client.get(Daemon::url(path)).send().await.unwrap();
    let status = response.status();
    let kind = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (status, kind, response.text().await.unwrap())
}

#[tokio::test]
async fn the_phone_page_and_its_shell_are_served_from_the_daemon() {
    let daemon = Daemon::start().await;
    let (status, kind, page) = fetch(&daemon, "/mobile").await;
    assert_eq!(status, StatusCode::OK);
    assert!(kind.starts_with("text/html"), "{kind}");
    let mut total = page.len();
    for (file, expected) in [
        ("text.js", "text/javascript"),
        ("confirm.js", "text/javascript"),
        ("upstreams.js", "text/javascript"),
        ("app.js", "text/javascript"),
        ("style.css", "text/css"),
        ("manifest.webmanifest", "application/manifest+json"),
        ("sw.js", "text/javascript"),
        ("icon.svg", "image/svg+xml"),
    ] {
        assert!(page.contains(&format!("/mobile/{file}")) || file == "sw.js", "the page links {file}");
        let (status, kind, body) = fetch(&daemon, &format!("/mobile/{file}")).await;
        assert_eq!(status, StatusCode::OK, "{file}");
        assert!(kind.starts_with(expected), "{file}: {kind}");
        total += body.len();
    }
    assert!(total <= 150 * 1024, "page weight {total} bytes");
    let manifest: serde_json::Value =
        serde_json::from_str(&fetch(&daemon, "/mobile/manifest.webmanifest").await.2).unwrap();
    assert_eq!(manifest["start_url"], json!("/mobile"));
    let worker = daemon.client.get(Daemon::url("/mobile/sw.js")).send().await.unwrap();
    assert_eq!(worker.headers()["service-worker-allowed"], "/mobile");

    let (status, _, body) = fetch(&daemon, "/mobile/nope.js").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("/mobile/nope.js"), "{body}");
}

#[tokio::test]
async fn over_tcp_the_page_asks_for_the_same_credentials_as_the_api() {
    let port = free_port();
    let config = json!({"services": {"server": {"enabled": true, "port": port},
        "auth": {"username": "me", "password_hash": quick_hash("right")}}});
    let _daemon = Daemon::builder().config(config).start().await;
    let url = format!("http://127.0.0.1:{port}/mobile");
    let refused = reqwest::get(&url).await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(refused.headers()["www-authenticate"].to_str().unwrap().starts_with("Basic"));
    let page = reqwest::Client::new().get(&url).basic_auth("me", Some("right")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("/mobile/app.js"));
}
