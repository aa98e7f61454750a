//! People and agents as different principals, met from another host (a second network
//! namespace): tokens made, listed and revoked with `tuicd token`; each scope's reach; an agent's
//! per-session rights; only a person answers a confirmation; the phone link's cookie; revoking
//! ends the token's open stream; a remote caller cannot plant `.git/config`.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::harness::{DEADLINE, Daemon, free_port, quick_hash, wait_until};
use crate::netns::RemoteHost;
use crate::remote_write::curl;

const JSON: &str = "Content-Type: application/json";

/// A WebSocket client with the standard library only: the handshake with a bearer token, one
/// masked text frame, then prints the status line and the close code the server sends (or EOF).
const WS_TYPE: &str = r#"
import base64, os, socket, struct, sys
host, port, path, token, text = sys.argv[1:6]
s = socket.create_connection((host, int(port)), timeout=10)
key = base64.b64encode(os.urandom(16)).decode()
s.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
data = b""
while b"\r\n\r\n" not in data:
    data += s.recv(4096)
head, data = data.split(b"\r\n\r\n", 1)
print(head.split(b"\r\n")[0].decode(), flush=True)
payload, mask = text.encode(), os.urandom(4)
s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
while True:
    while len(data) < 2:
        chunk = s.recv(65536)
        if not chunk:
            print("eof"); sys.exit(0)
        data += chunk
    op, n = data[0] & 0x0f, data[1] & 0x7f
    off = 2
    if n == 126:
        n, off = struct.unpack(">H", data[2:4])[0], 4
    elif n == 127:
        n, off = struct.unpack(">Q", data[2:10])[0], 10
    while len(data) < off + n:
        data += s.recv(65536)
    frame, data = data[off:off + n], data[off + n:]
    if op == 8:
        print("close", struct.unpack(">H", frame[:2])[0], frame[2:].decode()); sys.exit(0)
"#;

/// `tuicd token ARGS` against `daemon`: (exit ok, stdout, stderr).
async fn token_cli(daemon: &Daemon, args: &[&str]) -> (bool, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_tuicd"))
        .arg("--config-dir")
        .arg(daemon.dir.path())
        .arg("token")
        .args(args)
        .env_remove("TUIC_INSTANCE")
        .output()
        .await
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// Makes a token with the CLI and returns it (the one line on stdout).
async fn make_token(daemon: &Daemon, args: &[&str]) -> String {
    let (ok, stdout, stderr) = token_cli(daemon, args).await;
    assert!(ok, "tuicd token {args:?}: {stderr}");
    let token = stdout.trim().to_owned();
    assert!(token.starts_with("tuic_"), "{stdout}");
    token
}

struct Remote {
    host: RemoteHost,
    base: String,
    daemon: Daemon,
    session: String,
    other: String,
}

async fn remote() -> Remote {
    let host = RemoteHost::create();
    let port = free_port();
    let config = json!({"services": {
        "server": {"enabled": true, "port": port, "bind_address": host.host_ip, "allow_insecure_remote": true,
                   "allowed_hosts": [host.host_ip]},
        "auth": {"username": "me", "password_hash": quick_hash("right")}}});
    let daemon = Daemon::builder().config(config).start().await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (status, created) = daemon
            .post("/sessions", json!({"shell": "/bin/sh", "args": ["-c", "while read l; do echo \"got:$l\"; done"]}))
            .await;
        assert_eq!(status, 201, "{created}");
        ids.push(created["session_id"].as_str().unwrap().to_owned());
    }
    let base = format!("http://{}:{port}", host.host_ip);
    Remote { host, base, daemon, other: ids.pop().unwrap(), session: ids.pop().unwrap() }
}

impl Remote {
    async fn call(&self, token: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let auth = format!("Authorization: Bearer {token}");
        let url = format!("{}{path}", self.base);
        let mut args = vec!["-X", method, "-H", &auth, "-H", JSON];
        let body = body.map(|b| b.to_string());
        if let Some(body) = &body {
            args.extend(["--data", body]);
        }
        args.push(&url);
        curl(&self.host, &args).await
    }

    async fn mcp(&self, token: &str, tool: &str, arguments: Value) -> Value {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        let auth = format!("Authorization: Bearer {token}");
        let url = format!("{}/mcp", self.base);
        let body = call.to_string();
        let args =
            ["-H", &auth, "-H", JSON, "-H", "Accept: application/json, text/event-stream", "--data", &body, &url];
        let (code, reply) = curl(&self.host, &args).await;
        assert_eq!(code, 200, "{reply}");
        reply
    }

    async fn wait_for_text(&self, needle: &str) {
        wait_until(needle, DEADLINE, || async {
            let (_, out) = self.daemon.get(&format!("/sessions/{}/output?format=text", self.session)).await;
            out["data"].as_str().is_some_and(|d| d.contains(needle)).then_some(())
        })
        .await;
    }

    async fn output(&self) -> String {
        let (_, out) = self.daemon.get(&format!("/sessions/{}/output?format=text", self.session)).await;
        out["data"].as_str().unwrap_or_default().to_owned()
    }
}

fn refused(answer: &(u16, Value), needle: &str) {
    assert_eq!(answer.0, 403, "{answer:?}");
    let error = answer.1["error"].as_str().unwrap_or_default();
    assert!(error.contains(needle), "expected {needle:?} in {error:?}");
}

#[tokio::test]
async fn each_scope_reaches_what_it_says_from_another_host_and_no_further() {
    let r = remote().await;
    let observe = make_token(&r.daemon, &["create", "--scope", "observe", "--name", "watcher", "--no-qr"]).await;
    let drive = make_token(&r.daemon, &["create", "--scope", "drive", "--name", "phone", "--no-qr"]).await;
    let admin =
        make_token(&r.daemon, &["create", "--scope", "admin", "--name", "laptop", "--ttl", "12h", "--no-qr"]).await;

    // observe: reads, never writes, configures or answers.
    assert_eq!(r.call(&observe, "GET", "/sessions", None).await.0, 200);
    let output = format!("/sessions/{}/output?format=text", r.session);
    assert_eq!(r.call(&observe, "GET", &output, None).await.0, 200);
    let write = format!("/sessions/{}/write", r.session);
    refused(&r.call(&observe, "POST", &write, Some(json!({"data": "watcher\n"}))).await, "scope observe");
    refused(&r.call(&observe, "PUT", "/config", Some(json!({}))).await, "needs admin");
    refused(
        &r.call(&observe, "POST", "/ui/confirm/confirm-none", Some(json!({"confirmed": true}))).await,
        "needs drive",
    );
    let events = r.call(&observe, "GET", "/events?ui=confirm", None).await;
    refused(&events, "needs drive");

    // drive: writes and answers, does not configure.
    assert_eq!(r.call(&drive, "POST", &write, Some(json!({"data": "from-drive\n"}))).await.0, 200);
    r.wait_for_text("got:from-drive").await;
    let answer = r.call(&drive, "POST", "/ui/confirm/confirm-none", Some(json!({"confirmed": true}))).await;
    assert_eq!(
        (answer.0, answer.1["code"].as_str()),
        (404, Some("not_found")),
        "a person with drive may answer: {answer:?}"
    );
    refused(&r.call(&drive, "PUT", "/config", Some(json!({}))).await, "needs admin");
    refused(&r.call(&drive, "GET", "/auth/tokens", None).await, "needs admin");

    // admin: configures and manages tokens, but a remote caller still cannot plant .git/config.
    let (code, listed) = r.call(&admin, "GET", "/auth/tokens", None).await;
    assert_eq!(code, 200, "{listed}");
    let names: Vec<&str> = listed["tokens"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["watcher", "phone", "laptop"]);
    assert!(!listed.to_string().contains(observe.rsplit('_').next().unwrap()), "no secret is listed: {listed}");
    let repo = tempfile::tempdir().unwrap();
    let git = std::process::Command::new("git").args(["init", "-q"]).arg(repo.path()).status().unwrap();
    assert!(git.success());
    let config_path = repo.path().join(".git/config");
    let before = std::fs::read_to_string(&config_path).unwrap();
    let plant = json!({"path": config_path, "content": "[core]\n\tfsmonitor = touch /tmp/pwned-by-remote\n"});
    let planted = r.call(&admin, "POST", "/fs/write-external", Some(plant)).await;
    assert_eq!((planted.0, planted.1["code"].as_str()), (403, Some("loopback_only")), "{planted:?}");
    assert_eq!(std::fs::read_to_string(&config_path).unwrap(), before, ".git/config unchanged");

    // A wrong or made-up token is refused without saying which part was wrong.
    let (code, answer) = r.call("tuic_00000000_nothing", "GET", "/sessions", None).await;
    assert_eq!(code, 401, "{answer}");
    assert!(!r.output().await.contains("watcher"), "the observer typed nothing");
}

#[tokio::test]
async fn an_agents_token_watches_one_session_types_into_another_and_never_answers() {
    let r = remote().await;
    let watch = format!("{}=observe", r.session);
    let mine = format!("{}=drive", r.other);
    let agent = make_token(
        &r.daemon,
        &["create", "--agent", "--scope", "drive", "--session", &watch, "--session", &mine, "--no-qr"],
    )
    .await;

    // It sees only its two sessions.
    let (code, listed) = r.call(&agent, "GET", "/sessions", None).await;
    assert_eq!(code, 200);
    let mut ids: Vec<&str> = listed.as_array().unwrap().iter().filter_map(|s| s["session_id"].as_str()).collect();
    ids.sort_unstable();
    let mut expected = [r.session.as_str(), r.other.as_str()];
    expected.sort_unstable();
    assert_eq!(ids, expected, "{listed}");

    // Watching is not typing: REST write and the WebSocket's input are refused on the watched one.
    refused(
        &r.call(&agent, "POST", &format!("/sessions/{}/write", r.session), Some(json!({"data": "agent\n"}))).await,
        "scope observe",
    );
    assert_eq!(
        r.call(&agent, "POST", &format!("/sessions/{}/write", r.other), Some(json!({"data": "mine\n"}))).await.0,
        200
    );
    refused(&r.call(&agent, "GET", "/events", None).await, "reaches only session(s)");
    let port = r.base.rsplit(':').next().unwrap().to_owned();
    let path = format!("/sessions/{}/stream", r.session);
    let args = ["-c", WS_TYPE, &r.host.host_ip, &port, &path, &agent, "typed-by-watcher\n"];
    let out = r.host.exec("python3", &args, Duration::from_secs(15)).await;
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.starts_with("HTTP/1.1 101"), "{said} {}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("close 1008 this token observes the session"), "{said}");

    // MCP: reads the watched session; its confirmations are a person's.
    let read = r.mcp(&agent, "session", json!({"action": "output", "session_id": r.session})).await;
    assert_ne!(read["result"]["isError"], json!(true), "{read}");
    let typed =
        r.mcp(&agent, "session", json!({"action": "resize", "session_id": r.session, "rows": 30, "cols": 100})).await;
    let error = typed["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(typed["result"]["isError"] == json!(true) && error.contains("scope observe"), "{typed}");
    let anywhere = make_token(&r.daemon, &["create", "--agent", "--scope", "drive", "--no-qr"]).await;
    let answer = r.call(&anywhere, "POST", "/ui/confirm/confirm-none", Some(json!({"confirmed": true}))).await;
    refused(&answer, "answered by a person");
    refused(&r.call(&anywhere, "GET", "/events?ui=confirm", None).await, "answered by a person");

    // An agent's token is never admin.
    let (ok, _, stderr) = token_cli(&r.daemon, &["create", "--agent", "--scope", "admin", "--no-qr"]).await;
    assert!(!ok && stderr.contains("never admin"), "{stderr}");
    // Sessions that do not exist are named.
    let (ok, _, stderr) = token_cli(&r.daemon, &["create", "--scope", "observe", "--session", "nope", "--no-qr"]).await;
    assert!(!ok && stderr.contains("no live session \"nope\""), "{stderr}");
    let output = r.output().await;
    assert!(
        !output.contains("got:agent") && !output.contains("typed-by-watcher"),
        "nothing reached the watched session"
    );
}

#[tokio::test]
async fn the_phone_link_signs_in_with_a_cookie_and_revoking_ends_the_open_stream() {
    let r = remote().await;
    let (ok, stdout, stderr) = token_cli(&r.daemon, &["create", "--scope", "drive", "--name", "phone"]).await;
    assert!(ok, "{stderr}");
    let link = stderr.lines().map(str::trim).find(|l| l.starts_with("http://")).unwrap_or_else(|| panic!("{stderr}"));
    let token = stdout.trim();
    assert_eq!(link, format!("{}/mobile?token={token}", r.base));
    assert!(stderr.contains('█') || stderr.contains('▀'), "a QR code is drawn: {stderr}");

    // The link answers 303 to /mobile with an HttpOnly, SameSite=Strict cookie; the cookie then
    // carries the page's requests.
    let out =
        r.host.exec("curl", &["-sS", "-m", "10", "-D", "-", "-o", "/dev/null", link], Duration::from_secs(15)).await;
    let head = String::from_utf8_lossy(&out.stdout).to_lowercase();
    assert!(head.starts_with("http/1.1 303"), "{head}");
    assert!(head.contains("location: /mobile\r\n"), "{head}");
    let cookie_line = head.lines().find(|l| l.starts_with("set-cookie:")).unwrap_or_else(|| panic!("{head}"));
    assert!(cookie_line.contains("httponly") && cookie_line.contains("samesite=strict"), "{cookie_line}");
    let cookie = format!("Cookie: tui-session={token}");
    let (code, _) = curl(&r.host, &["-H", &cookie, &format!("{}/sessions", r.base)]).await;
    assert_eq!(code, 200);

    // An event stream the token opened ends when the token is revoked; then it is refused.
    let mut stream = tokio::process::Command::new("ip")
        .args(["netns", "exec", &r.host.name, "curl", "-sS", "-N", "-H", &cookie])
        .arg(format!("{}/events", r.base))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(stream.stdout.take().unwrap()).lines();
    tokio::time::timeout(DEADLINE, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("retry:") || line.starts_with(':') || line.starts_with("data:") {
                break;
            }
        }
    })
    .await
    .expect("the stream opened");
    let (ok, listed, _) = token_cli(&r.daemon, &["list"]).await;
    assert!(ok && listed.contains("phone") && !listed.contains(token.rsplit('_').next().unwrap()), "{listed}");
    let id = token.split('_').nth(1).unwrap();
    let (ok, said, stderr) = token_cli(&r.daemon, &["revoke", id]).await;
    assert!(ok, "{said} {stderr}");
    let ended = tokio::time::timeout(DEADLINE, stream.wait()).await;
    assert!(ended.is_ok(), "the open stream ended when its token was revoked");
    let (code, _) = curl(&r.host, &["-H", &cookie, &format!("{}/sessions", r.base)]).await;
    assert_eq!(code, 401);
    let (ok, _, stderr) = token_cli(&r.daemon, &["revoke", id]).await;
    assert!(!ok && stderr.contains("no token"), "{stderr}");
}
