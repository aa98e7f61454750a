//! The stdio transport: a child process speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! One reader task matches responses to requests by id (notifications are routed, never taken
//! for an answer), one writer task owns stdin, one task writes stderr to the upstream's own log
//! file and samples it into the daemon's log (`source = "upstream"`, so `debug action=logs` shows
//! them). The child runs in its own process
//! group, which `close` and `Drop` kill whole.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};

use super::config::{Transport, UpstreamServer};
use super::wire::{ConnectCtx, Handshake, RequestOpts, UpstreamError};
use crate::jsonl::{Outgoing, line_of, write_loop};
use crate::limits::{UPSTREAM_NOTIFY_QUEUE, UPSTREAM_STDIO_SHUTDOWN};
use crate::lock::Recover;

/// The daemon's environment variables an upstream inherits; everything else it gets from its
/// entry's `env`. Credentials in the daemon's environment are not handed to third-party servers.
pub(crate) const ENV_ALLOWLIST: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TERM",
    "TMPDIR",
    "SHELL",
    "NODE_PATH",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
];
/// Prefixes of inherited variables (the locale family).
const ENV_ALLOWED_PREFIXES: &[&str] = &["LC_"];

/// The MCP revision tuicd asks its upstreams for.
pub(crate) const CLIENT_PROTOCOL_VERSION: &str = "2025-06-18";

type Pending = Arc<Mutex<HashMap<u64, Waiting>>>;

/// A request waiting for its answer, and where the messages related to it go
/// ([`RequestOpts::related`]): stdio names no request in a message, so a log or a request from
/// the process is related to the one request with somewhere to send them, when there is one
/// only, as the reader reads it (deciding later would race the answers read after it).
#[derive(Debug)]
struct Waiting {
    answer: oneshot::Sender<Result<Value, UpstreamError>>,
    related: Option<mpsc::Sender<Value>>,
}

/// A live stdio upstream.
#[derive(Debug)]
pub(crate) struct StdioClient {
    name: String,
    writer: mpsc::Sender<Outgoing>,
    pending: Pending,
    next_id: AtomicU64,
    child: tokio::sync::Mutex<Child>,
    pgid: Option<rustix::process::Pid>,
    /// Its last stderr lines, for the error that names its exit.
    tail: Arc<crate::child_stderr::Tail>,
}

impl StdioClient {
    /// Spawns the process and runs initialize → notifications/initialized.
    pub(crate) async fn connect(server: &UpstreamServer, ctx: ConnectCtx) -> Result<(Self, Handshake), UpstreamError> {
        let Transport::Stdio { command, args, env, cwd } = &server.transport else {
            return Err(UpstreamError::Protocol(format!("upstream {} is not a stdio upstream", server.name)));
        };
        let mut cmd = Command::new(expand_tilde(command));
        cmd.args(args.iter().map(|a| expand_tilde(a)))
            .env_clear()
            .envs(allowed_env())
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = cwd {
            cmd.current_dir(expand_tilde(cwd));
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| UpstreamError::Io(format!("cannot start upstream {} ({command}): {e}", server.name)))?;
        let pgid = child.id().and_then(|id| rustix::process::Pid::from_raw(id as i32));
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            return Err(UpstreamError::Io("the child's pipes were not created".into()));
        };
        let (writer, outgoing) = mpsc::channel(UPSTREAM_NOTIFY_QUEUE);
        let pending: Pending = Arc::default();
        tokio::spawn(write_loop(stdin, outgoing));
        tokio::spawn(read::read_loop(
            ctx.name.clone(),
            BufReader::new(stdout),
            pending.clone(),
            writer.clone(),
            ctx.notifications,
        ));
        let tail = Arc::new(crate::child_stderr::Tail::default());
        tokio::spawn(crate::child_stderr::stderr_loop(
            "upstream",
            ctx.name.clone(),
            stderr,
            ctx.stderr_log.clone(),
            tail.clone(),
        ));
        let client = Self {
            name: server.name.clone(),
            writer,
            pending,
            next_id: AtomicU64::new(1),
            child: tokio::sync::Mutex::new(child),
            pgid,
            tail,
        };
        let timeout = std::time::Duration::from_secs(server.timeout_secs.max(1));
        let handshake = client.initialize(timeout).await;
        match handshake {
            Ok(handshake) => Ok((client, handshake)),
            Err(e) => {
                client.close().await;
                Err(e)
            }
        }
    }

    async fn initialize(&self, timeout: std::time::Duration) -> Result<Handshake, UpstreamError> {
        let params = json!({
            "protocolVersion": CLIENT_PROTOCOL_VERSION,
            "capabilities": super::wire::client_capabilities(),
            "clientInfo": {"name": "tuicd", "version": env!("CARGO_PKG_VERSION")},
        });
        let result = self.request("initialize", params, RequestOpts::within(timeout)).await?;
        self.notify("notifications/initialized", json!({})).await?;
        Ok(handshake_of(&result))
    }

    /// One request; see the module docs. Dropping the future or passing `opts.timeout` sends
    /// `notifications/cancelled` upstream.
    pub(crate) async fn request(&self, method: &str, params: Value, opts: RequestOpts) -> Result<Value, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.locked().insert(id, Waiting { answer: tx, related: opts.related });
        let mut guard = InFlight { id, pending: &self.pending, writer: &self.writer, done: false };
        let line = line_of(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        if self.writer.send(Outgoing::Line(line)).await.is_err() {
            guard.done = true;
            self.pending.locked().remove(&id);
            return Err(UpstreamError::Closed(format!("upstream {} is not running", self.name)));
        }
        let answer = match tokio::time::timeout(opts.timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => {
                Err(UpstreamError::Closed(format!("upstream {} exited before answering {method}", self.name)))
            }
            Err(_) => return Err(UpstreamError::Timeout(opts.timeout)),
        };
        guard.done = true;
        answer
    }

    pub(crate) async fn notify(&self, method: &str, params: Value) -> Result<(), UpstreamError> {
        let line = line_of(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
        self.writer
            .send(Outgoing::Line(line))
            .await
            .map_err(|_| UpstreamError::Closed(format!("upstream {} is not running", self.name)))
    }

    /// Sends the answer to a request the process sent.
    pub(crate) async fn respond(&self, answer: &Value) -> Result<(), UpstreamError> {
        self.writer
            .send(Outgoing::Line(line_of(answer)))
            .await
            .map_err(|_| UpstreamError::Closed(format!("upstream {} is not running", self.name)))
    }

    /// Closes stdin, gives the process `UPSTREAM_STDIO_SHUTDOWN` to exit, then kills its group.
    pub(crate) async fn close(&self) {
        let _ = self.writer.try_send(Outgoing::Close);
        let mut child = self.child.lock().await;
        if tokio::time::timeout(UPSTREAM_STDIO_SHUTDOWN, child.wait()).await.is_err() {
            tracing::warn!(source = "upstream", upstream = %self.name, "did not exit after stdin closed; killing its process group");
        }
        self.kill_group();
        let _ = child.start_kill();
        let _ = child.wait().await;
    }

    /// Its last stderr lines (waiting a moment for stderr to close after an exit).
    pub(crate) async fn stderr_tail(&self) -> Option<String> {
        self.tail.text(crate::limits::UPSTREAM_STDERR_CLOSE_WAIT).await
    }

    /// The process id, for diagnostics and tests.
    pub(crate) fn pid(&self) -> Option<i32> {
        self.pgid.map(|p| p.as_raw_nonzero().get())
    }

    fn kill_group(&self) {
        if let Some(pgid) = self.pgid {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        // Grandchildren (npx → node) share the group; `kill_on_drop` alone reaches only the child.
        self.kill_group();
    }
}

/// A request waiting for its answer; dropped unanswered, it withdraws and cancels upstream.
struct InFlight<'a> {
    id: u64,
    pending: &'a Pending,
    writer: &'a mpsc::Sender<Outgoing>,
    done: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if self.pending.locked().remove(&self.id).is_some() {
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": self.id, "reason": "the tuicd client cancelled or timed out"}});
            let _ = self.writer.try_send(Outgoing::Line(line_of(&cancel)));
        }
    }
}

pub(crate) fn handshake_of(result: &Value) -> Handshake {
    Handshake {
        protocol_version: result.get("protocolVersion").and_then(Value::as_str).unwrap_or_default().to_owned(),
        server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
        capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
        instructions: result.get("instructions").and_then(Value::as_str).map(str::to_owned),
    }
}

fn allowed_env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| ENV_ALLOWLIST.contains(&k.as_str()) || ENV_ALLOWED_PREFIXES.iter().any(|p| k.starts_with(p)))
        .collect()
}

/// `~` and `~/...` become the home directory; anything else is returned as it is.
pub(crate) fn expand_tilde(path: &str) -> String {
    let home = || std::env::var("HOME").ok().filter(|h| !h.is_empty());
    match path.strip_prefix('~') {
        Some("") => home().unwrap_or_else(|| path.to_owned()),
        Some(rest) if rest.starts_with('/') => home().map_or_else(|| path.to_owned(), |h| format!("{h}{rest}")),
        _ => path.to_owned(),
    }
}

mod read;
#[cfg(test)]
mod tests;
