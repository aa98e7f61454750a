//! Remote access as a person on another host meets it: from a second network namespace, with Basic
//! Auth over TCP. A person may write to a session (REST and the WebSocket); creating and closing
//! sessions, and the MCP tool actions of a remote agent, stay loopback-only.

use std::time::Duration;

use base64::Engine;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{DEADLINE, Daemon, free_port, quick_hash, wait_until};
use crate::netns::RemoteHost;

const CURL_TIMEOUT: Duration = Duration::from_secs(15);

/// A WebSocket client with the standard library only (nothing else is installed in the
/// namespace): the handshake with Basic credentials, one masked text frame, then the output read
/// until `expect` arrives. Prints the status line; exits 1 if `expect` never comes.
const WS_CLIENT: &str = r#"
import base64, os, socket, sys
host, port, path, auth, text, expect = sys.argv[1:7]
s = socket.create_connection((host, int(port)), timeout=10)
key = base64.b64encode(os.urandom(16)).decode()
s.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: {auth}\r\n\r\n").encode())
data = b""
while b"\r\n\r\n" not in data:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.split(b"\r\n")[0].decode(), flush=True)
payload, mask = text.encode(), os.urandom(4)
s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
while expect.encode() not in data:
    chunk = s.recv(65536)
    if not chunk:
        sys.exit(1)
    data += chunk
"#;

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

/// curl inside the namespace; returns the status and the JSON body.
pub(crate) async fn curl(host: &RemoteHost, args: &[&str]) -> (u16, Value) {
    let mut all = vec!["-sS", "-m", "10", "-w", "\n%{http_code}"];
    all.extend_from_slice(args);
    let out = host.exec("curl", &all, CURL_TIMEOUT).await;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    let code = code.trim().parse().unwrap_or_else(|_| panic!("curl: {text} {}", String::from_utf8_lossy(&out.stderr)));
    (code, serde_json::from_str(body).unwrap_or(Value::Null))
}

async fn wait_for_text(daemon: &Daemon, id: &str, needle: &str) {
    wait_until(needle, DEADLINE, || async {
        let (_, out) = daemon.get(&format!("/sessions/{id}/output?format=text")).await;
        out["data"].as_str().is_some_and(|d| d.contains(needle)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_person_on_another_host_writes_to_a_session_but_remote_agents_and_lifecycle_stay_local() {
    let host = RemoteHost::create();
    let port = free_port();
    let config = json!({"services": {
        "server": {"enabled": true, "port": port, "bind_address": host.host_ip, "allow_insecure_remote": true},
        "auth": {"username": "me", "password_hash": quick_hash("right")}}});
    let daemon = Daemon::builder().config(config).start().await;
    let (status, created) = daemon
        .post("/sessions", json!({"shell": "/bin/sh", "args": ["-c", "while read l; do echo \"got:$l\"; done"]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["session_id"].as_str().unwrap().to_owned();
    let base = format!("http://{}:{port}", host.host_ip);
    let json_header = "Content-Type: application/json";

    // The person's quick reply, as the phone page sends it.
    let write = format!("{base}/sessions/{id}/write");
    let body = json!({"data": "from-phone\n"}).to_string();
    let (code, answer) = curl(&host, &["-u", "me:right", "-H", json_header, "--data", &body, &write]).await;
    assert_eq!(code, 200, "a remote person's write: {answer}\n{}", daemon.log());
    assert_eq!(answer, json!({"ok": true}));
    wait_for_text(&daemon, &id, "got:from-phone").await;

    // Keys typed into the WebSocket reach the PTY too, and its output comes back.
    let auth = basic("me", "right");
    let path = format!("/sessions/{id}/stream");
    let port_arg = port.to_string();
    let args = ["-c", WS_CLIENT, &host.host_ip, &port_arg, &path, &auth, "typed-in-ws\n", "got:typed-in-ws"];
    let out = host.exec("python3", &args, CURL_TIMEOUT).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("HTTP/1.1 101"), "upgrade: {stdout} {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the remote WebSocket never saw its own input echoed: {stdout}");

    // Confirms are the person's to answer from there too: an unknown id is not found, not refused.
    let answer = format!("{base}/ui/confirm/confirm-none");
    let (code, refused) =
        curl(&host, &["-u", "me:right", "-H", json_header, "--data", r#"{"confirmed":true}"#, &answer]).await;
    assert_eq!((code, refused["code"].as_str()), (404, Some("not_found")), "{refused}");

    // A wrong password writes nothing.
    let body = json!({"data": "intruder\n"}).to_string();
    let (code, _) = curl(&host, &["-u", "me:wrong", "-H", json_header, "--data", &body, &write]).await;
    assert_eq!(code, 401);

    // Lifecycle stays loopback-only: the peer really is remote.
    let (code, refused) =
        curl(&host, &["-u", "me:right", "-H", json_header, "--data", "{}", &format!("{base}/sessions")]).await;
    assert_eq!((code, refused["code"].as_str()), (403, Some("loopback_only")), "{refused}");
    let (code, refused) = curl(
        &host,
        &["-u", "me:right", "-H", "X-Requested-With: test", "-X", "DELETE", &format!("{base}/sessions/{id}")],
    )
    .await;
    assert_eq!((code, refused["code"].as_str()), (403, Some("loopback_only")), "{refused}");

    // A remote agent's MCP input is still refused, before any byte is written.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "session",
        "arguments": {"action": "input", "session_id": id, "input": "from-agent", "special_key": "enter"}}});
    let (code, reply) = curl(
        &host,
        &[
            "-u",
            "me:right",
            "-H",
            json_header,
            "-H",
            "Accept: application/json, text/event-stream",
            "--data",
            &call.to_string(),
            &format!("{base}/mcp"),
        ],
    )
    .await;
    assert_eq!(code, 200, "{reply}");
    assert_eq!(reply["result"]["isError"], json!(true), "{reply}");
    let error = reply["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(error.contains("loopback"), "{error}");

    let (_, out) = daemon.get(&format!("/sessions/{id}/output?format=text")).await;
    let text = out["data"].as_str().unwrap_or_default();
    assert!(!text.contains("intruder") && !text.contains("from-agent"), "{text}");
}
