//! Browser-facing rules, as a web page (or an attacker's page) meets them: the Origin allow-list
//! on every route and on the WebSocket upgrade, CORS only for listed origins, the Host check on
//! TCP and on the socket (an SSH tunnel hands a browser to it), and the non-simple header on
//! remote mutations.

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::{DEADLINE, Daemon, free_port, quick_hash};
use crate::session_util::create_id;

const EVIL: &str = "http://evil.example";
/// me:right
const BASIC: &str = "Basic bWU6cmlnaHQ=";

async fn with_origin(daemon: &Daemon, method: reqwest::Method, path: &str, origin: &str) -> reqwest::Response {
    let mut req = daemon.client.request(method.clone(), Daemon::url(path)).header("origin", origin);
    if method == reqwest::Method::POST {
        req = req.json(&json!({"shell": "/bin/sh", "cwd": "/"}));
    }
    req.send().await.unwrap()
}

async fn session_count(daemon: &Daemon) -> usize {
    daemon.get("/sessions").await.1.as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn a_foreign_origin_is_refused_on_every_route_and_changes_nothing() {
    let daemon = Daemon::start().await;
    let created = with_origin(&daemon, reqwest::Method::POST, "/sessions", EVIL).await;
    assert_eq!(created.status(), StatusCode::FORBIDDEN);
    assert!(created.headers().get("access-control-allow-origin").is_none());
    let body: Value = created.json().await.unwrap();
    assert_eq!(body["code"], json!("forbidden"), "{body}");
    assert!(body["error"].as_str().unwrap().contains("services.server.allowed_origins"), "{body}");
    assert_eq!(session_count(&daemon).await, 0, "the refused create made no session");
    for path in ["/health", "/sessions", "/config", "/events"] {
        let r = with_origin(&daemon, reqwest::Method::GET, path, EVIL).await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{path}");
    }
    let preflight = daemon
        .client
        .request(reqwest::Method::OPTIONS, Daemon::url("/sessions"))
        .header("origin", EVIL)
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), StatusCode::FORBIDDEN);
    assert!(preflight.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn same_origin_and_originless_requests_pass_without_cors_headers() {
    let daemon = Daemon::start().await;
    // reqwest sends `Host: tuic` for http://tuic/..., so this is the page's own origin.
    let created = with_origin(&daemon, reqwest::Method::POST, "/sessions", "http://tuic").await;
    assert_eq!(created.status(), StatusCode::CREATED);
    assert!(created.headers().get("access-control-allow-origin").is_none());
    let plain = daemon.client.get(Daemon::url("/health")).send().await.unwrap();
    assert_eq!(plain.status(), StatusCode::OK);
    assert!(plain.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn a_listed_origin_gets_cors_headers_and_its_preflight_answered() {
    let config = json!({"services": {"server": {"allowed_origins": ["https://app.example"]}}});
    let daemon = Daemon::builder().config(config).start().await;
    let preflight = daemon
        .client
        .request(reqwest::Method::OPTIONS, Daemon::url("/sessions"))
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), StatusCode::NO_CONTENT);
    assert_eq!(preflight.headers()["access-control-allow-origin"], "https://app.example");
    assert_eq!(preflight.headers()["access-control-allow-headers"], "content-type");
    let health = with_origin(&daemon, reqwest::Method::GET, "/health", "https://app.example").await;
    assert_eq!(health.status(), StatusCode::OK);
    assert_eq!(health.headers()["access-control-allow-origin"], "https://app.example");
    assert_eq!(with_origin(&daemon, reqwest::Method::GET, "/health", EVIL).await.status(), StatusCode::FORBIDDEN);
    // A malformed entry is refused with its key named, and changes nothing.
    let (status, body) =
        daemon.put("/config", json!({"services": {"server": {"allowed_origins": ["app.example"]}}})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("services.server.allowed_origins"), "{body}");
    let (_, config) = daemon.get("/config").await;
    assert_eq!(config["services"]["server"]["allowed_origins"], json!(["https://app.example"]));
}

/// Sends one raw HTTP/1.1 request on `stream` and returns the status line.
async fn status_line<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    mut stream: S,
    request: String,
) -> String {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = vec![0u8; 4096];
    let n = tokio::time::timeout(DEADLINE, stream.read(&mut out)).await.expect("an answer in time").unwrap();
    String::from_utf8_lossy(&out[..n]).lines().next().unwrap_or_default().to_owned()
}

fn upgrade(id: &str, host: &str, origin: &str, extra: &str) -> String {
    format!(
        "GET /sessions/{id}/stream HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nConnection: Upgrade\r\n\
         Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
    )
}

#[tokio::test]
async fn a_foreign_origin_cannot_open_a_session_stream() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let connect = || tokio::net::UnixStream::connect(&daemon.socket);
    let foreign = status_line(connect().await.unwrap(), upgrade(&id, "tuic", EVIL, "")).await;
    assert!(foreign.starts_with("HTTP/1.1 403"), "{foreign}");
    let own = status_line(connect().await.unwrap(), upgrade(&id, "tuic", "http://tuic", "")).await;
    assert!(own.starts_with("HTTP/1.1 101"), "{own}");
}

#[tokio::test]
async fn remote_access_refuses_rebinding_hosts_and_form_posts() {
    let port = free_port();
    let config = json!({"services": {"server": {"enabled": true, "port": port, "allowed_hosts": ["tuic.lan"]},
        "auth": {"username": "me", "password_hash": quick_hash("right")}}});
    let daemon = Daemon::builder().config(config).start().await;
    let tcp = || tokio::net::TcpStream::connect(("127.0.0.1", port));
    let get = |host: &str| format!("GET /health HTTP/1.1\r\nHost: {host}\r\nAuthorization: {BASIC}\r\n\r\n");
    let rebound = status_line(tcp().await.unwrap(), get(&format!("evil.example:{port}"))).await;
    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
    for host in [format!("tuic.lan:{port}"), format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let line = status_line(tcp().await.unwrap(), get(&host)).await;
        assert!(line.starts_with("HTTP/1.1 200"), "{host}: {line}");
    }
    let log = daemon.log();
    assert!(log.contains("services.server.allowed_hosts"), "the refusal names the setting:\n{log}");

    let client = reqwest::Client::new();
    let url = |path: &str| format!("http://127.0.0.1:{port}{path}");
    let body = r#"{"shell": "/bin/sh", "cwd": "/"}"#;
    for form in ["text/plain", "application/x-www-form-urlencoded"] {
        let r = client.post(url("/sessions")).header("authorization", BASIC).header("content-type", form).body(body);
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{form}");
        let text = r.text().await.unwrap();
        assert!(text.contains("X-Requested-With"), "{text}");
    }
    assert_eq!(session_count(&daemon).await, 0, "no form post made a session");
    let created =
        client.post(url("/sessions")).header("authorization", BASIC).header("content-type", "application/json");
    let created: Value = created.body(body).send().await.unwrap().json().await.unwrap();
    let id = created["session_id"].as_str().expect("a JSON create over TCP works").to_owned();
    let bare = client.delete(url(&format!("/sessions/{id}"))).header("authorization", BASIC).send().await.unwrap();
    assert_eq!(bare.status(), StatusCode::FORBIDDEN);
    let marked = client.delete(url(&format!("/sessions/{id}"))).header("authorization", BASIC);
    let marked = marked.header("x-requested-with", "fetch").send().await.unwrap();
    assert_eq!(marked.status(), StatusCode::OK);
}

/// What `ssh -L PORT:<config dir>/mcp.sock` does: a loopback TCP port whose every connection is
/// copied both ways to the daemon's socket. Returns the port.
async fn tunnel_to(socket: std::path::PathBuf) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let socket = socket.clone();
            tokio::spawn(async move {
                let mut unix = tokio::net::UnixStream::connect(&socket).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut tcp, &mut unix).await;
            });
        }
    });
    port
}

#[tokio::test]
async fn a_rebound_page_through_an_ssh_tunnel_is_refused_on_the_socket() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let port = tunnel_to(daemon.socket.clone()).await;
    let tcp = || tokio::net::TcpStream::connect(("127.0.0.1", port));
    let evil = format!("evil.example:{port}");
    let page = format!("http://{evil}");
    let post = |host: &str, origin: Option<&str>, path: &str, method: &str, body: &str| {
        let origin = origin.map(|o| format!("Origin: {o}\r\n")).unwrap_or_default();
        format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let create = r#"{"shell": "/bin/sh", "cwd": "/"}"#;
    let config = r#"{"services": {"server": {"allowed_origins": ["http://evil.example"]}}}"#;
    for origin in [None, Some(page.as_str())] {
        let created = status_line(tcp().await.unwrap(), post(&evil, origin, "/sessions", "POST", create)).await;
        assert!(created.starts_with("HTTP/1.1 403"), "{origin:?}: {created}");
        let put = status_line(tcp().await.unwrap(), post(&evil, origin, "/config", "PUT", config)).await;
        assert!(put.starts_with("HTTP/1.1 403"), "{origin:?}: {put}");
    }
    let stream = status_line(tcp().await.unwrap(), upgrade(&id, &evil, &page, "")).await;
    assert!(stream.starts_with("HTTP/1.1 403"), "{stream}");
    let mut answer = String::new();
    let mut conn = tcp().await.unwrap();
    conn.write_all(post(&evil, None, "/sessions", "POST", create).as_bytes()).await.unwrap();
    let _ = tokio::time::timeout(DEADLINE, conn.read_to_string(&mut answer)).await;
    assert!(answer.contains(&format!("Host '{evil}'")), "the refusal names the Host:\n{answer}");
    assert_eq!(session_count(&daemon).await, 1, "no rebound request made a session");
    let (_, config_now) = daemon.get("/config").await;
    assert_eq!(config_now["services"]["server"]["allowed_origins"], json!([]), "no rebound request changed config");

    // The tunnel's own user, whose browser says localhost, still works.
    let local = format!("localhost:{port}");
    let created = status_line(tcp().await.unwrap(), post(&local, None, "/sessions", "POST", create)).await;
    assert!(created.starts_with("HTTP/1.1 201"), "{created}");
    let own = status_line(tcp().await.unwrap(), upgrade(&id, &local, &format!("http://{local}"), "")).await;
    assert!(own.starts_with("HTTP/1.1 101"), "{own}");
    let put = post(&format!("127.0.0.1:{port}"), None, "/config", "PUT", r#"{"services": {}}"#);
    let put = status_line(tcp().await.unwrap(), put).await;
    assert!(put.starts_with("HTTP/1.1 200"), "{put}");
}
