//! The foundation as users meet it: socket lifecycle, status, limits, config, auth, TLS,
//! shutdown.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use base64::Engine;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::*;

fn tuicd() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_tuicd"))
}

#[tokio::test]
async fn health_answers_on_a_private_socket() {
    let daemon = Daemon::start().await;
    let mode = std::fs::metadata(&daemon.socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "socket mode {mode:o}");
    let (status, health) = daemon.get("/health").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(health["ok"], json!(true));
    assert_eq!(health["session_count"], json!(0));
    assert_eq!(health["protocol_version"], json!("2025-11-25"));
    assert_eq!(health["socket_path"], json!(daemon.socket.display().to_string()));
    assert!(health["uptime_secs"].is_u64());
    let (status, version) = daemon.get("/api/version").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(version["name"], json!("tuicd"));
}

#[tokio::test]
async fn a_stale_socket_file_is_reclaimed() {
    let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();
    let path = dir.path().join("mcp.sock");
    // A crashed daemon leaves its socket file behind with nobody listening.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let daemon = Daemon::builder().dir(dir).start().await;
    assert_eq!(daemon.get("/health").await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_second_daemon_is_refused_and_the_first_keeps_serving() {
    let daemon = Daemon::start().await;
    let output = tuicd().arg("--config-dir").arg(daemon.dir.path()).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("already serving"), "{stderr}");
    assert_eq!(daemon.get("/health").await.0, StatusCode::OK);
}

#[tokio::test]
async fn status_asks_the_daemon_and_fails_when_none_answers() {
    let mut daemon = Daemon::start().await;
    let output = tuicd().arg("--config-dir").arg(daemon.dir.path()).arg("status").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let health: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(health["ok"], json!(true));
    assert!(daemon.stop_with(SIGTERM).await.success());
    let output = tuicd().arg("--config-dir").arg(daemon.dir.path()).arg("status").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    // A stale socket file must not read as running either.
    drop(std::os::unix::net::UnixListener::bind(&daemon.socket).unwrap());
    let output = tuicd().arg("--config-dir").arg(daemon.dir.path()).arg("status").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
}

#[tokio::test]
async fn a_named_instance_uses_a_short_socket_path() {
    let name = "n".repeat(300);
    let daemon = Daemon::builder().arg("--instance").arg(name.clone()).spawn();
    let client_dir = daemon.dir.path().to_owned();
    let path = wait_until("the instance reports its socket", START_DEADLINE, || async {
        let output =
            tuicd().arg("--config-dir").arg(&client_dir).args(["--instance", &name, "status"]).output().ok()?;
        let health: Value = serde_json::from_slice(&output.stdout).ok()?;
        health["socket_path"].as_str().map(String::from)
    })
    .await;
    assert!(path.len() < 104, "{path}");
    assert!(!daemon.socket.exists(), "a named instance does not take the default socket");
}

#[tokio::test]
async fn a_broken_config_file_stops_start_up_and_is_left_untouched() {
    let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();
    let text = "{\n  \"collapse_tools\": false,\n  \"services\": {\"server\": {\n    \"port\": \"high\"\n  }}\n}\n";
    std::fs::write(dir.path().join("config.json"), text).unwrap();
    let output = tuicd().arg("--config-dir").arg(dir.path()).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("config.json") && stderr.contains("line 4") && stderr.contains("services.server.port"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("config.json")).unwrap(), text);

    std::fs::write(dir.path().join("config.json"), "{\"colapse_tools\": true}").unwrap();
    let output = tuicd().arg("--config-dir").arg(dir.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && stderr.contains("colapse_tools"), "{stderr}");
}

#[tokio::test]
async fn a_config_dir_or_file_others_can_write_stops_start_up_naming_the_path_and_the_fix() {
    let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(&config, "{}").unwrap();
    // A daemon that serves instead of refusing is killed at the deadline, and the test fails.
    let start = || async {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tuicd"));
        command.arg("--config-dir").arg(dir.path()).kill_on_drop(true);
        let output = tokio::time::timeout(START_DEADLINE, command.output()).await;
        output.expect("tuicd refuses at once instead of serving").unwrap()
    };
    for mode in [0o777, 0o770] {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        let output = start().await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "started with the config dir at {mode:o}: {stderr}");
        assert!(stderr.contains(&dir.path().display().to_string()) && stderr.contains("chmod 700"), "{stderr}");
        assert!(!dir.path().join("mcp.sock").exists(), "nothing was served");
    }
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o666)).unwrap();
    let output = start().await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "started with config.json at 666: {stderr}");
    assert!(stderr.contains(&config.display().to_string()) && stderr.contains("chmod 600"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "{}", "the file is left untouched");
    // The same files, made private, start.
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let daemon = Daemon::builder().dir(dir).start().await;
    assert_eq!(daemon.get("/health").await.0, StatusCode::OK);
}

#[tokio::test]
async fn unknown_routes_wrong_methods_and_bad_bodies_get_clear_errors() {
    let daemon = Daemon::start().await;
    let (status, body) = daemon.get("/no/such/route").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["code"], json!("not_found"));
    assert!(body["error"].as_str().unwrap().contains("/no/such/route"));

    let response = daemon.client.delete(Daemon::url("/health")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()["allow"], "GET");

    let response = daemon.client.put(Daemon::url("/config")).body("{\"collapse_tools\": tru").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], json!("invalid_json"));

    let (status, body) = daemon.put("/config", json!({"collapse_tools": "yes"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("collapse_tools"), "{body}");

    let (status, body) = daemon.put("/config", json!({"services": {"server": {"prot": 1}}})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("prot"), "{body}");

    let (status, body) = daemon.post("/auth/hash-password", json!({"password": 5})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("password"), "{body}");
    // None of that changed anything or wrote a file.
    assert!(!daemon.dir.path().join("config.json").exists());
}

#[tokio::test]
async fn put_config_merges_a_partial_body_and_never_shows_secrets() {
    let daemon = Daemon::start().await;
    let hash = quick_hash("s3cret");
    let (status, _) = daemon
        .put(
            "/config",
            json!({"collapse_tools": true, "services": {"auth": {"password_hash": hash, "username": "me"}}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, shown) = daemon.put("/config", json!({"services": {"server": {"port": 7001}}})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shown["collapse_tools"], json!(true), "an omitted field keeps its value");
    assert_eq!(shown["services"]["auth"]["username"], json!("me"));
    assert_eq!(shown["services"]["server"]["port"], json!(7001));

    let (_, config) = daemon.get("/config").await;
    let text = config.to_string();
    assert!(!text.contains("$2b$") && !text.contains("password_hash\""), "{text}");
    assert_eq!(config["services"]["auth"]["password_hash_exists"], json!(true));

    // The file holds the hash (0600), and a refused update leaves it byte for byte.
    let path = daemon.dir.path().join("config.json");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let before = std::fs::read(&path).unwrap();
    let (status, _) = daemon.put("/config", json!({"max_sessions": 0})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // A read-modify-write round trip of the redacted shape is accepted and keeps the secret.
    let (status, _) = daemon.put("/config", config).await;
    assert_eq!(status, StatusCode::OK);
    let saved: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(saved["services"]["auth"]["password_hash"], json!(hash));
}

#[tokio::test]
async fn hash_password_route_and_command_produce_verifiable_hashes() {
    let daemon = Daemon::start().await;
    let (status, body) = daemon.post("/auth/hash-password", json!({"password": "pw"})).await;
    assert_eq!(status, StatusCode::OK);
    assert!(bcrypt::verify("pw", body["hash"].as_str().unwrap()).unwrap());
    let (status, body) = daemon.post("/auth/hash-password", json!({"password": ""})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("empty"));

    let mut child = tuicd()
        .args(["hash-password", "--cost", "4"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"from stdin\n").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let hash = String::from_utf8(output.stdout).unwrap();
    assert!(bcrypt::verify("from stdin", hash.trim()).unwrap());
}

#[tokio::test]
async fn a_password_longer_than_bcrypt_reads_is_refused_by_the_route_and_the_command() {
    let daemon = Daemon::start().await;
    let long = "p".repeat(73);
    let (status, body) = daemon.post("/auth/hash-password", json!({"password": long})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("72 bytes"), "{body}");

    let command = |password: String| {
        let mut child = tuicd()
            .args(["hash-password", "--cost", "4"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(format!("{password}\n").as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let output = command(long.clone());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "a 73-byte password was hashed: {}", String::from_utf8_lossy(&output.stdout));
    assert!(output.stdout.is_empty() && stderr.contains("73 bytes") && stderr.contains("72 bytes"), "{stderr}");
    let exact = command("p".repeat(72));
    assert!(exact.status.success());
    assert!(bcrypt::verify("p".repeat(72), String::from_utf8(exact.stdout).unwrap().trim()).unwrap());
}

#[tokio::test]
async fn oversize_bodies_get_413_with_and_without_content_length() {
    let daemon = Daemon::start().await;
    let big = vec![b' '; 2 * 1024 * 1024 + 1];
    let head =
        format!("PUT /config HTTP/1.1\r\nHost: tuic\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", big.len());
    let response = upload_raw(&daemon, head, &big).await;
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(response.contains("payload_too_large"), "{response}");

    let mut chunked = Vec::new();
    for chunk in big.chunks(64 * 1024) {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head =
        "PUT /config HTTP/1.1\r\nHost: tuic\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_owned();
    let response = upload_raw(&daemon, head, &chunked).await;
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(response.contains("payload_too_large"), "{response}");
    assert!(!daemon.dir.path().join("config.json").exists(), "nothing was saved");
}

#[tokio::test]
async fn a_stalled_request_times_out_but_a_stream_outlives_the_timeout() {
    let timeout = Duration::from_millis(400);
    let daemon = Daemon::builder().env("TUIC_REQUEST_TIMEOUT_MS", timeout.as_millis().to_string()).start().await;

    // A body that never finishes arriving holds the handler past the deadline: 408.
    let response = daemon
        .raw(b"PUT /config HTTP/1.1\r\nHost: tuic\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
        .await;
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");

    // The event stream's headers come back at once; it must keep delivering after the deadline.
    let mut events = daemon.client.get(Daemon::url("/events")).send().await.unwrap();
    assert_eq!(events.status(), StatusCode::OK);
    tokio::time::sleep(timeout * 3).await; // the property under test is elapsed time itself
    daemon.put("/config", json!({"collapse_tools": true})).await;
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !seen.contains("config-changed") {
        let chunk = tokio::time::timeout_at(deadline, events.chunk()).await.expect("event arrives").unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk.expect("stream still open")));
    }
}

#[tokio::test]
async fn events_replay_from_last_event_id_and_filter_by_type() {
    let daemon = Daemon::start().await;
    for value in [true, false, true] {
        daemon.put("/config", json!({"collapse_tools": value})).await;
    }
    let mut events = daemon
        .client
        .get(Daemon::url("/events?types=config-changed"))
        .header("Last-Event-ID", "1")
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    while seen.matches("event: config-changed").count() < 2 {
        let chunk = tokio::time::timeout(DEADLINE, events.chunk()).await.expect("replay arrives").unwrap().unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("id: 2\n") && seen.contains("id: 3\n") && !seen.contains("id: 1\n"), "{seen}");

    let (status, body) = daemon
        .client
        .get(Daemon::url("/events"))
        .header("Last-Event-ID", "abc")
        .send()
        .await
        .map(|r| (r.status(), r))
        .unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.text().await.unwrap().contains("Last-Event-ID"));
}

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

async fn tcp_daemon(port: u16, extra: Value) -> Daemon {
    let mut config = json!({"services": {"server": {"enabled": true, "port": port},
        "auth": {"username": "me", "password_hash": quick_hash("right")}}});
    crate::harness::merge(&mut config, extra);
    Daemon::builder().config(config).start().await
}

#[tokio::test]
async fn remote_access_needs_basic_auth_and_limits_failures() {
    let port = free_port();
    let daemon = tcp_daemon(port, json!({})).await;
    let client = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}/health");

    let response = client.get(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response.headers()["www-authenticate"].to_str().unwrap().starts_with("Basic"));

    let ok = client.get(&url).header("Authorization", basic("me", "right")).send().await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);

    for _ in 0..5 {
        let r = client.get(&url).header("Authorization", basic("me", "wrong")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    }
    let limited = client.get(&url).header("Authorization", basic("me", "right")).send().await.unwrap();
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(limited.headers().contains_key("retry-after"));
    // The IPC socket is not behind the limiter.
    assert_eq!(daemon.get("/health").await.0, StatusCode::OK);
}

#[tokio::test]
async fn remote_access_serves_https_when_tls_is_configured() {
    let port = free_port();
    let certs = tempfile::tempdir().unwrap();
    let (cert, key) = make_cert(certs.path());
    let _daemon = tcp_daemon(port, json!({"services": {"tls": {"cert_path": cert, "key_path": key}}})).await;
    let pem = std::fs::read(&cert).unwrap();
    let client =
        reqwest::Client::builder().tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()]).build().unwrap();
    let response = client
        .get(format!("https://localhost:{port}/health"))
        .header("Authorization", basic("me", "right"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // Plain HTTP to the TLS port gets no HTTP answer.
    let plain = reqwest::Client::new().get(format!("http://127.0.0.1:{port}/health")).send().await;
    assert!(plain.map(|r| r.status() != StatusCode::OK).unwrap_or(true));
}

#[tokio::test]
async fn tcp_port_override_and_the_next_port_when_taken() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let daemon = Daemon::builder()
        .config(
            json!({"services": {"server": {"enabled": true, "port": 1}, "auth": {"password_hash": quick_hash("p")}}}),
        )
        .env("TUIC_PORT", port.to_string())
        .start()
        .await;
    let (_, health) = daemon.get("/health").await;
    assert_eq!(health["tcp_address"], json!(format!("127.0.0.1:{}", port + 1)), "{}", daemon.log());
    // The override is not persisted.
    let (_, config) = daemon.get("/config").await;
    assert_eq!(config["services"]["server"]["port"], json!(1));
}

#[tokio::test]
async fn turning_remote_access_on_and_off_restarts_only_the_tcp_listener() {
    let daemon = Daemon::start().await;
    let port = free_port();
    let (_, health) = daemon.get("/health").await;
    assert!(health.get("tcp_address").is_none());
    let (status, _) = daemon
        .put("/config", json!({"services": {"server": {"enabled": true, "port": port}, "auth": {"password_hash": quick_hash("p")}}}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let url = format!("http://127.0.0.1:{port}/health");
    let r = reqwest::Client::new().get(&url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "the TCP listener now runs behind auth");

    let (status, _) = daemon.put("/config", json!({"services": {"server": {"enabled": false}}})).await;
    assert_eq!(status, StatusCode::OK);
    assert!(reqwest::Client::new().get(&url).send().await.is_err(), "the TCP port is closed");
    assert_eq!(daemon.get("/health").await.0, StatusCode::OK, "IPC kept serving throughout");
    let log = daemon.log();
    assert!(log.contains("TCP listener stopped") && log.contains("IPC listener unaffected"), "{log}");

    // A TLS setting pointing at nothing is refused and changes nothing.
    let (status, body) = daemon
        .put(
            "/config",
            json!({"services": {"tls": {"cert_path": "/nonexistent/c.pem", "key_path": "/nonexistent/k.pem"}}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("cert_path"), "{body}");

    // A key other users can read is refused, naming the fix.
    let certs = tempfile::tempdir().unwrap();
    let (cert, key) = make_cert(certs.path());
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let (status, body) =
        daemon.put("/config", json!({"services": {"tls": {"cert_path": cert, "key_path": key}}})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("key_path") && error.contains("chmod 600"), "{body}");
}

#[tokio::test]
async fn sigterm_drains_in_flight_requests_and_removes_the_socket() {
    let mut daemon = Daemon::start().await;
    let mut stream = tokio::net::UnixStream::connect(&daemon.socket).await.unwrap();
    // A first request on the same keep-alive connection proves the daemon accepted it and is
    // reading from it, so the second one below is in flight inside the daemon, not in a backlog.
    stream.write_all(b"GET /health HTTP/1.1\r\nHost: tuic\r\n\r\n").await.unwrap();
    let mut first = vec![0u8; 4096];
    let n = tokio::time::timeout(DEADLINE, stream.read(&mut first)).await.unwrap().unwrap();
    assert!(first[..n].starts_with(b"HTTP/1.1 200"));
    let body = br#"{"collapse_tools": true}"#;
    let head = format!("PUT /config HTTP/1.1\r\nHost: tuic\r\nContent-Length: {}\r\n\r\n", body.len());
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body[..5]).await.unwrap();
    // The request is in flight; now the signal.
    let pid = daemon.pid();
    std::process::Command::new("kill").arg("-TERM").arg(pid.to_string()).status().unwrap();
    let socket = daemon.socket.clone();
    wait_until("the socket file is removed", DEADLINE, || async { (!socket.exists()).then_some(()) }).await;
    stream.write_all(&body[5..]).await.unwrap();
    let mut response = vec![0u8; 4096];
    let n = tokio::time::timeout(DEADLINE, stream.read(&mut response)).await.unwrap().unwrap();
    let response = String::from_utf8_lossy(&response[..n]);
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    drop(stream);
    let status = daemon.wait_exit().await;
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_remote_callers_tuic_session_header_speaks_for_no_local_agent() {
    let port = free_port();
    let daemon = tcp_daemon(port, json!({})).await;
    let (_, created) = daemon.post("/sessions", json!({"shell": "/bin/sh"})).await;
    let tuic = created["tuic_session"].as_str().unwrap().to_owned();
    let report = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "progress", "arguments": {"type": "done", "text": "impersonated"}}});
    let answer: Value = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .header("Authorization", basic("me", "right"))
        .header("Accept", "application/json, text/event-stream")
        .header("x-tuic-session", &tuic)
        .json(&report)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    assert!(text.contains("no tuic identity"), "over TCP the header names nobody: {text}");
    // On the socket the same header is the terminal's own identity.
    let (is_error, recorded) = crate::mcp_client::call_as(
        &daemon,
        "progress",
        json!({"type": "done", "text": "from the terminal"}),
        &[("x-tuic-session", &tuic)],
    )
    .await;
    assert!(!is_error, "{recorded}");
}
