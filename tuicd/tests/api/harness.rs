//! Starting the real daemon in a temp dir, talking to it, and waiting on conditions with
//! deadlines (never fixed sleeps).

#![allow(dead_code)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Once;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::Value;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

/// Generous: a cold debug binary on a loaded 2-core CI machine.
pub(crate) const START_DEADLINE: Duration = Duration::from_secs(30);
pub(crate) const DEADLINE: Duration = Duration::from_secs(20);

pub(crate) fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Polls `check` until it returns `Some`, or panics naming `what` after `deadline`.
pub(crate) async fn wait_until<T, F, Fut>(what: &str, deadline: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(start.elapsed() < deadline, "timed out after {deadline:?} waiting for: {what}");
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

pub(crate) struct DaemonBuilder {
    dir: Option<TempDir>,
    config: Option<Value>,
    env: Vec<(String, String)>,
    args: Vec<String>,
    binary: Option<PathBuf>,
}

impl DaemonBuilder {
    /// Runs this binary instead of the one cargo built (a copy the test may replace).
    pub(crate) fn binary(mut self, path: PathBuf) -> Self {
        self.binary = Some(path);
        self
    }

    pub(crate) fn config(mut self, config: Value) -> Self {
        self.config = Some(config);
        self
    }

    pub(crate) fn env(mut self, key: &str, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub(crate) fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Reuses a config dir (e.g. to restart a daemon on the same files).
    pub(crate) fn dir(mut self, dir: TempDir) -> Self {
        self.dir = Some(dir);
        self
    }

    /// Spawns the daemon without waiting for it.
    pub(crate) fn spawn(self) -> Daemon {
        install_crypto();
        let dir = self.dir.unwrap_or_else(|| tempfile::Builder::new().prefix("tuic").tempdir().unwrap());
        if let Some(config) = &self.config {
            std::fs::write(dir.path().join("config.json"), serde_json::to_vec_pretty(config).unwrap()).unwrap();
        }
        let log_path = dir.path().join("tuicd.log");
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path).unwrap();
        let mut command = Command::new(self.binary.unwrap_or_else(|| env!("CARGO_BIN_EXE_tuicd").into()));
        command
            .arg("--config-dir")
            .arg(dir.path())
            .args(&self.args)
            .env_remove("TUIC_PORT")
            .env_remove("TUIC_INSTANCE")
            .env_remove("TUIC_SESSION")
            .env_remove("NOTIFY_SOCKET")
            .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()))
            // Test daemons never reach the user's own keyring; the keyring tests ask for it.
            .env("TUIC_CREDENTIALS_STORE", "file")
            // Tests kill their daemons: a keeper would keep every session's program running on.
            // The crash-recovery tests turn it back on.
            .env("TUIC_KEEPER", "off")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true);
        let child = command.spawn().expect("spawn tuicd");
        let socket = dir.path().join("mcp.sock");
        let client = reqwest::Client::builder().unix_socket(socket.clone()).build().unwrap();
        Daemon { dir, socket, child: Some(child), client, log_path }
    }

    /// Spawns the daemon and waits until `/health` answers.
    pub(crate) async fn start(self) -> Daemon {
        let mut daemon = self.spawn();
        daemon.wait_ready().await;
        daemon
    }
}

pub(crate) struct Daemon {
    pub dir: TempDir,
    pub socket: PathBuf,
    child: Option<Child>,
    /// HTTP over the daemon's Unix socket; URLs are `http://tuic/<path>`.
    pub client: reqwest::Client,
    pub log_path: PathBuf,
}

impl Daemon {
    pub(crate) fn builder() -> DaemonBuilder {
        DaemonBuilder { dir: None, config: None, env: Vec::new(), args: Vec::new(), binary: None }
    }

    pub(crate) async fn start() -> Daemon {
        Self::builder().start().await
    }

    pub(crate) fn url(path: &str) -> String {
        format!("http://tuic{path}")
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().and_then(Child::id).expect("daemon is running")
    }

    pub(crate) async fn wait_ready(&mut self) {
        let start = Instant::now();
        loop {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!("tuicd exited during start-up ({status}):\n{}", self.log());
            }
            if let Ok(r) = self.client.get(Self::url("/health")).send().await
                && r.status() == StatusCode::OK
            {
                return;
            }
            assert!(start.elapsed() < START_DEADLINE, "tuicd not ready after {START_DEADLINE:?}:\n{}", self.log());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Any request over the socket; returns status and the JSON body (`Null` when not JSON).
    pub(crate) async fn request(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut req = self.client.request(method, Self::url(path));
        if let Some(body) = body {
            req = req.json(&body);
        }
        let response = req.send().await.expect("request reaches tuicd");
        let status = response.status();
        let bytes = response.bytes().await.unwrap_or_default();
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    pub(crate) async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.request(Method::GET, path, None).await
    }

    pub(crate) async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.request(Method::POST, path, Some(body)).await
    }

    pub(crate) async fn put(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.request(Method::PUT, path, Some(body)).await
    }

    /// Raw bytes over a fresh socket connection; returns everything read until close.
    pub(crate) async fn raw(&self, request: &[u8]) -> String {
        let mut stream = tokio::net::UnixStream::connect(&self.socket).await.unwrap();
        stream.write_all(request).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(DEADLINE, stream.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Sends a signal and waits for the process to exit.
    pub(crate) async fn stop_with(&mut self, signal: i32) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("daemon is running");
        let pid = child.id().expect("pid");
        let _ = std::process::Command::new("kill").arg(format!("-{signal}")).arg(pid.to_string()).status();
        tokio::time::timeout(DEADLINE, child.wait()).await.expect("tuicd exits after the signal").unwrap()
    }

    /// Waits for a daemon that is expected to exit on its own.
    pub(crate) async fn wait_exit(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("daemon is running");
        tokio::time::timeout(START_DEADLINE, child.wait()).await.expect("tuicd exits").unwrap()
    }

    /// Stops the daemon and hands back its config dir, for a restart on the same files.
    pub(crate) async fn into_dir(mut self) -> TempDir {
        if self.child.is_some() {
            self.stop_with(15).await;
        }
        let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();

        std::mem::replace(&mut self.dir, dir)
    }
}

/// Sends `head`, then as much of `body` as the daemon reads before it answers (it may answer
/// 413 and close before the upload ends), then reads the answer.
pub(crate) async fn upload_raw(daemon: &Daemon, head: String, body: &[u8]) -> String {
    let mut stream = tokio::net::UnixStream::connect(&daemon.socket).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    for chunk in body.chunks(64 * 1024) {
        if stream.write_all(chunk).await.is_err() {
            break;
        }
    }
    let mut out = Vec::new();
    let _ = tokio::time::timeout(DEADLINE, stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) const SIGTERM: i32 = 15;
pub(crate) const SIGINT: i32 = 2;

/// A TCP port that was free a moment ago.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A self-signed certificate for `localhost` / 127.0.0.1, made with the openssl CLI.
pub(crate) fn make_cert(dir: &Path) -> (PathBuf, PathBuf) {
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    let status = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
        .args(["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl is installed (the test command installs it)");
    assert!(status.success());
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    (cert, key)
}

/// bcrypt hash at the lowest cost, so tests stay fast.
pub(crate) fn quick_hash(password: &str) -> String {
    bcrypt::hash(password, 4).unwrap()
}

/// Deep-merges `patch` into `base` (objects key by key): the daemon's own rule.
pub(crate) use tuicd::deep_merge as merge;

/// Reads SSE messages as (id, event, data) until `stop` says enough.
pub(crate) async fn read_events(
    response: reqwest::Response,
    stop: impl Fn(&[(u64, String, Value)]) -> bool,
) -> Vec<(u64, String, Value)> {
    use futures_util::StreamExt;
    let mut body = response.bytes_stream();
    let mut buffer = String::new();
    let mut events = Vec::new();
    while !stop(&events) {
        let chunk = tokio::time::timeout(DEADLINE, body.next()).await.expect("an event in time").unwrap().unwrap();
        buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        while let Some(end) = buffer.find("\n\n") {
            let message: String = buffer.drain(..end + 2).collect();
            let (mut id, mut kind, mut data) = (None, None, String::new());
            for line in message.lines() {
                if let Some(v) = line.strip_prefix("id: ") {
                    id = v.parse().ok();
                }
                if let Some(v) = line.strip_prefix("event: ") {
                    kind = Some(v.to_owned());
                }
                if let Some(v) = line.strip_prefix("data: ") {
                    data.push_str(v);
                }
            }
            if let (Some(id), Some(kind)) = (id, kind) {
                events.push((id, kind, serde_json::from_str(&data).unwrap_or(Value::Null)));
            }
        }
    }
    events
}

/// A scripted person at a UI client: holds `GET /events?ui=confirm` open and answers every
/// `ui-confirm-requested` it sees with `answer` over `POST /ui/confirm/:id`.
pub(crate) struct ConfirmAnswerer {
    seen: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl ConfirmAnswerer {
    /// Returns once the daemon counts it as an answerer (the stream's head has arrived).
    pub(crate) async fn start(daemon: &Daemon, answer: bool) -> Self {
        use futures_util::StreamExt;
        let response = daemon
            .client
            .get(Daemon::url("/events?ui=confirm&types=ui-confirm-requested"))
            .send()
            .await
            .expect("the events stream opens");
        assert_eq!(response.status(), StatusCode::OK);
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let client = daemon.client.clone();
        let task = tokio::spawn({
            let seen = seen.clone();
            async move {
                let mut body = response.bytes_stream();
                let mut buffer = String::new();
                while let Some(Ok(chunk)) = body.next().await {
                    buffer.push_str(&String::from_utf8_lossy(&chunk));
                    while let Some(end) = buffer.find("\n\n") {
                        let message: String = buffer.drain(..end + 2).collect();
                        let Some(data) = message.lines().find_map(|l| l.strip_prefix("data: ")) else { continue };
                        let Ok(request) = serde_json::from_str::<Value>(data) else { continue };
                        let Some(id) = request["id"].as_str().map(str::to_owned) else { continue };
                        let _ = client
                            .post(Daemon::url(&format!("/ui/confirm/{id}")))
                            .json(&serde_json::json!({"confirmed": answer}))
                            .send()
                            .await;
                        seen.lock().unwrap().push(request);
                    }
                }
            }
        });
        Self { seen, task }
    }

    /// The confirmation requests answered so far, in order.
    pub(crate) fn seen(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for ConfirmAnswerer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
