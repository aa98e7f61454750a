//! OAuth credentials in a real OS keyring: a private D-Bus session bus and gnome-keyring's
//! Secret Service in a temp dir, read back by `secret-tool` as a third-party client. Tokens
//! land in the keyring (moved there from `credentials.json` too), serve after a restart, and
//! leave with their upstream; without a session bus the 0600 file serves at once and the log
//! says why.

use std::path::Path;
use std::process::Stdio;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use crate::harness::{DEADLINE, Daemon, wait_until};
use crate::mcp_client::{initialize, post_raw};
use crate::oauth_as::{AsOptions, TestAs};
use crate::upstream_oauth::{authorize, browse, oauth_upstream};

/// A session bus and an unlocked gnome-keyring on it, ended (SIGKILL) when dropped.
struct SecretService {
    dir: tempfile::TempDir,
    address: String,
    _bus: Child,
    _keyring: Child,
}

impl SecretService {
    async fn start() -> Self {
        for (tool, package) in [
            ("dbus-daemon", "dbus-daemon"),
            ("dbus-send", "dbus"),
            ("gnome-keyring-daemon", "gnome-keyring"),
            ("secret-tool", "libsecret-tools"),
        ] {
            let found = std::process::Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap();
            assert!(
                found.status.success(),
                "{tool} is missing: the keyring tests need Debian's {package} package (tests/run-all.sh installs it)"
            );
        }
        let dir = tempfile::Builder::new().prefix("tuic-kr").tempdir().unwrap();
        for sub in ["home", "run", "data", "config"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let socket = dir.path().join("run/bus");
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .arg(format!("--address=unix:path={}", socket.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start dbus-daemon");
        let mut line = String::new();
        let stdout = bus.stdout.take().unwrap();
        tokio::time::timeout(DEADLINE, BufReader::new(stdout).read_line(&mut line))
            .await
            .expect("dbus-daemon prints its address")
            .unwrap();
        let address = line.trim().to_owned();
        assert!(address.starts_with("unix:"), "dbus-daemon printed {address:?}");
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--foreground", "--unlock", "--components=secrets"])
            .envs(Self::env_in(dir.path(), &address))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start gnome-keyring-daemon");
        // The password of the login keyring it creates and unlocks, ended by EOF.
        let mut stdin = keyring.stdin.take().unwrap();
        stdin.write_all(b"tuic-test-password").await.unwrap();
        drop(stdin);
        let service = Self { dir, address, _bus: bus, _keyring: keyring };
        wait_until("gnome-keyring owns org.freedesktop.secrets", DEADLINE, || async {
            let out = service
                .command("dbus-send")
                .args(["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus"])
                .args(["org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"])
                .output()
                .await
                .unwrap();
            String::from_utf8_lossy(&out.stdout).contains("boolean true").then_some(())
        })
        .await;
        service
    }

    /// The environment of a client of this bus (a private HOME and XDG dirs, so nothing reaches
    /// the user's own keyring).
    fn env_in(dir: &Path, address: &str) -> Vec<(String, String)> {
        let at = |sub: &str| dir.join(sub).display().to_string();
        vec![
            ("DBUS_SESSION_BUS_ADDRESS".into(), address.to_owned()),
            ("HOME".into(), at("home")),
            ("XDG_RUNTIME_DIR".into(), at("run")),
            ("XDG_DATA_HOME".into(), at("data")),
            ("XDG_CONFIG_HOME".into(), at("config")),
        ]
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.envs(Self::env_in(self.dir.path(), &self.address)).stdin(Stdio::null());
        command
    }

    /// The keyring item of upstream `id`, read by `secret-tool` (a libsecret client).
    async fn lookup(&self, id: &str) -> Option<Value> {
        let account = format!("mcp-upstream:{id}");
        let out = self
            .command("secret-tool")
            .args(["lookup", "service", "tuic", "username", &account])
            .output()
            .await
            .unwrap();
        out.status.success().then(|| serde_json::from_slice(&out.stdout).expect("the item is JSON"))
    }
}

async fn wait_status(daemon: &Daemon, name: &str, status: &str) {
    wait_until(&format!("upstream {name} {status}"), DEADLINE, || async {
        let (_, body) = daemon.get("/mcp/upstream-status").await;
        let entry = body["upstreams"].as_array()?.iter().find(|u| u["name"] == name)?.clone();
        (entry["status"] == status).then_some(())
    })
    .await;
}

async fn whoami(daemon: &Daemon) -> Value {
    let session = initialize(daemon, &[]).await.session().unwrap();
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "docs__whoami", "arguments": {}}});
    post_raw(daemon, body.to_string(), &[("mcp-session-id", session.as_str())]).await.body
}

fn config_dir(servers: Vec<Value>, credentials: Option<Value>) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();
    let file = json!({"servers": servers});
    std::fs::write(dir.path().join("mcp-upstreams.json"), serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    if let Some(credentials) = credentials {
        std::fs::write(dir.path().join("credentials.json"), serde_json::to_vec(&credentials).unwrap()).unwrap();
    }
    dir
}

/// tuicd on `dir` with `TUIC_CREDENTIALS_STORE=mode` and its session bus at `bus`.
async fn daemon_on_bus(dir: tempfile::TempDir, mode: &str, bus: &str) -> Daemon {
    Daemon::builder().dir(dir).env("TUIC_CREDENTIALS_STORE", mode).env("DBUS_SESSION_BUS_ADDRESS", bus).start().await
}

/// The address of a session bus that does not exist, in `dir`.
fn no_bus(dir: &tempfile::TempDir) -> String {
    format!("unix:path={}", dir.path().join("no-such-bus").display())
}

/// `credentials.json` is 0600 and holds, for upstream u1, a token `server` issued.
fn assert_file_holds_an_issued_token(daemon: &Daemon, server: &TestAs) {
    use std::os::unix::fs::PermissionsExt;
    let path = daemon.dir.path().join("credentials.json");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let stored: Value = serde_json::from_str(&file_text(daemon)).unwrap();
    let token = stored["upstreams"]["u1"]["tokens"]["access_token"].as_str().unwrap();
    assert!(server.issued().contains(&token.to_owned()));
}

fn file_text(daemon: &Daemon) -> String {
    std::fs::read_to_string(daemon.dir.path().join("credentials.json")).unwrap_or_default()
}

#[tokio::test]
async fn tokens_live_in_the_keyring_serve_after_a_restart_and_leave_with_their_upstream() {
    let keyring = SecretService::start().await;
    let server = TestAs::start(AsOptions::default()).await;
    let legacy = json!({"upstreams": {"u9": {
        "type": "oauth2", "resource": "http://old.invalid/mcp", "tokens": {"access_token": "legacy-file-token"}
    }}});
    let dir = config_dir(vec![oauth_upstream("u1", "docs", &server.mcp_url, json!({}))], Some(legacy));
    let daemon = daemon_on_bus(dir, "auto", &keyring.address).await;
    wait_status(&daemon, "docs", "needs_auth").await;
    assert!(daemon.log().contains("credential store: the OS keyring"), "{}", daemon.log());

    // What credentials.json held moved into the keyring and out of the file.
    let moved = keyring.lookup("u9").await.expect("the file's entry is in the keyring");
    assert_eq!(moved["type"], "oauth2");
    assert_eq!(moved["tokens"]["access_token"], "legacy-file-token");
    assert!(!file_text(&daemon).contains("legacy-file-token"), "{}", file_text(&daemon));

    let (status, started) = authorize(&daemon, "docs").await;
    assert_eq!(status, StatusCode::OK, "{started}");
    assert_eq!(browse(started["authorization_url"].as_str().unwrap()).await.0, StatusCode::OK);
    wait_status(&daemon, "docs", "ready").await;
    let item = keyring.lookup("u1").await.expect("the token is in the keyring");
    assert_eq!(item["type"], "oauth2", "{item}");
    assert_eq!(item["resource"], json!(server.mcp_url));
    let token = item["tokens"]["access_token"].as_str().unwrap().to_owned();
    assert!(server.issued().contains(&token));
    let (log, file) = (daemon.log(), file_text(&daemon));
    for secret in server.issued() {
        assert!(!file.contains(&secret), "a token in credentials.json: {file}");
        assert!(!log.contains(&secret), "a token in the log");
    }

    // A restart reads the token back from the keyring: no new authorization, the tools answer.
    let daemon = daemon_on_bus(daemon.into_dir().await, "auto", &keyring.address).await;
    wait_status(&daemon, "docs", "ready").await;
    assert_eq!(whoami(&daemon).await["result"]["content"][0]["text"], json!("authorized"));
    assert_eq!(server.counts().1, 1, "one code exchange in all");

    // Removing the upstream deletes its keyring item.
    let (_, base) = daemon.get("/mcp/upstreams").await;
    let (status, answer) = daemon.put("/mcp/upstreams", json!({"base": base, "config": {"servers": []}})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    wait_until("the keyring item of the removed upstream is deleted", DEADLINE, || async {
        keyring.lookup("u1").await.is_none().then_some(())
    })
    .await;
    assert!(keyring.lookup("u9").await.is_some(), "an upstream that was not removed keeps its item");
}

#[tokio::test]
async fn without_a_session_bus_the_0600_file_serves_at_once_and_the_log_says_why() {
    let server = TestAs::start(AsOptions::default()).await;
    let dir = config_dir(vec![oauth_upstream("u1", "docs", &server.mcp_url, json!({}))], None);
    let bus = no_bus(&dir);
    let daemon = daemon_on_bus(dir, "auto", &bus).await;
    let line = wait_until("the store choice is logged", DEADLINE, || async {
        daemon.log().lines().find(|l| l.contains("credential store:")).map(str::to_owned)
    })
    .await;
    assert!(line.contains("the 0600 file, because the OS keyring does not work"), "{line}");
    assert!(line.contains("no Secret Service on the session bus"), "the reason is named: {line}");
    assert!(!line.contains("did not answer within"), "a missing bus fails at once, not by the timeout: {line}");

    wait_status(&daemon, "docs", "needs_auth").await;
    let (status, started) = authorize(&daemon, "docs").await;
    assert_eq!(status, StatusCode::OK, "{started}");
    assert_eq!(browse(started["authorization_url"].as_str().unwrap()).await.0, StatusCode::OK);
    wait_status(&daemon, "docs", "ready").await;
    assert_file_holds_an_issued_token(&daemon, &server);
    assert_eq!(daemon.log().matches("credential store:").count(), 1, "the choice is logged once");
}

#[tokio::test]
async fn keyring_mode_without_a_keyring_refuses_to_store_rather_than_write_the_file() {
    let server = TestAs::start(AsOptions::default()).await;
    let dir = config_dir(vec![oauth_upstream("u1", "docs", &server.mcp_url, json!({}))], None);
    let bus = no_bus(&dir);
    let daemon = daemon_on_bus(dir, "keyring", &bus).await;
    wait_status(&daemon, "docs", "needs_auth").await;
    assert!(
        daemon.log().contains("TUIC_CREDENTIALS_STORE=keyring and the OS keyring does not work"),
        "{}",
        daemon.log()
    );
    // The flow registers a client first: its secret has nowhere to go, so the flow is refused.
    let (status, body) = authorize(&daemon, "docs").await;
    assert_ne!(status, StatusCode::OK, "{body}");
    assert!(body["error"].as_str().unwrap().contains("the OS keyring cannot store credentials"), "{body}");
    assert!(!daemon.dir.path().join("credentials.json").exists(), "nothing is written to the file");
}

#[tokio::test]
async fn a_keyring_that_refuses_a_write_leaves_the_credentials_in_the_0600_file() {
    let keyring = SecretService::start().await;
    let server = TestAs::start(AsOptions::default()).await;
    let dir = config_dir(vec![oauth_upstream("u1", "docs", &server.mcp_url, json!({}))], None);
    let daemon = daemon_on_bus(dir, "auto", &keyring.address).await;
    wait_status(&daemon, "docs", "needs_auth").await;
    assert!(daemon.log().contains("credential store: the OS keyring"), "{}", daemon.log());
    // A person locks the keyring while the daemon runs; unlocking would need a prompt.
    let locked = keyring
        .command("dbus-send")
        .args(["--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets"])
        .args(["org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login"])
        .output()
        .await
        .unwrap();
    assert!(locked.status.success(), "{}", String::from_utf8_lossy(&locked.stderr));

    let (status, started) = authorize(&daemon, "docs").await;
    assert_eq!(status, StatusCode::OK, "{started}");
    assert_eq!(browse(started["authorization_url"].as_str().unwrap()).await.0, StatusCode::OK);
    wait_status(&daemon, "docs", "ready").await;
    assert!(daemon.log().contains("the OS keyring refused the credentials"), "{}", daemon.log());
    assert_file_holds_an_issued_token(&daemon, &server);
}
