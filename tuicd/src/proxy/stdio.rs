//! The stdio transport: a child process speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! One reader task matches responses to requests by id (notifications are routed, never taken
//! for an answer), one writer task owns stdin, one task turns stderr lines into tracing events
//! (`source = "upstream"`, so `debug action=logs` shows them). The child runs in its own process
//! group, which `close` and `Drop` kill whole.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, oneshot};

use super::config::{Transport, UpstreamServer};
use super::wire::{ConnectCtx, Handshake, RequestOpts, UpstreamError};
use crate::limits::{UPSTREAM_MESSAGE_MAX_BYTES, UPSTREAM_NOTIFY_QUEUE, UPSTREAM_STDIO_SHUTDOWN};
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

/// The longest stderr line kept in a log event.
const STDERR_LINE_MAX: usize = 4096;

/// The MCP revision tuicd asks its upstreams for.
pub(crate) const CLIENT_PROTOCOL_VERSION: &str = "2025-06-18";

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, UpstreamError>>>>>;

enum Outgoing {
    Line(Vec<u8>),
    /// Close stdin: the polite way to ask a stdio server to exit.
    Close,
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
}

impl std::fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outgoing::Line(_) => "Line",
            Outgoing::Close => "Close",
        })
    }
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
        tokio::spawn(read_loop(
            ctx.name.clone(),
            BufReader::new(stdout),
            pending.clone(),
            writer.clone(),
            ctx.notifications,
        ));
        tokio::spawn(stderr_loop(ctx.name.clone(), stderr));
        let client = Self {
            name: server.name.clone(),
            writer,
            pending,
            next_id: AtomicU64::new(1),
            child: tokio::sync::Mutex::new(child),
            pgid,
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
            "capabilities": {},
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
        self.pending.locked().insert(id, tx);
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

fn line_of(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).unwrap_or_default();
    line.push(b'\n');
    line
}

pub(crate) fn handshake_of(result: &Value) -> Handshake {
    Handshake {
        protocol_version: result.get("protocolVersion").and_then(Value::as_str).unwrap_or_default().to_owned(),
        server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
        capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
        instructions: result.get("instructions").and_then(Value::as_str).map(str::to_owned),
    }
}

async fn write_loop(mut stdin: ChildStdin, mut outgoing: mpsc::Receiver<Outgoing>) {
    while let Some(message) = outgoing.recv().await {
        match message {
            Outgoing::Line(line) => {
                if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                    return;
                }
            }
            Outgoing::Close => return,
        }
    }
}

/// Reads stdout until it closes, then fails every request still waiting. Dropping `notifications`
/// at the end tells the registry the connection is gone.
async fn read_loop<R: AsyncRead + Unpin>(
    name: String,
    mut stdout: BufReader<R>,
    pending: Pending,
    writer: mpsc::Sender<Outgoing>,
    notifications: mpsc::Sender<Value>,
) {
    let mut dropped: u64 = 0;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match read_line_bounded(&mut stdout, &mut buf, UPSTREAM_MESSAGE_MAX_BYTES).await {
            Ok(Line::Eof) => break,
            Ok(Line::TooLong(total)) => {
                let id = leading_id(&buf);
                tracing::warn!(source = "upstream", upstream = %name, bytes = total, id = ?id,
                    "refused a message over UPSTREAM_MESSAGE_MAX_BYTES ({UPSTREAM_MESSAGE_MAX_BYTES} bytes)");
                if let Some(tx) = id.and_then(|id| pending.locked().remove(&id)) {
                    let _ = tx.send(Err(UpstreamError::Protocol(format!(
                        "upstream {name} answered with a message of {total} bytes, over the limit of {UPSTREAM_MESSAGE_MAX_BYTES}"
                    ))));
                }
            }
            Ok(Line::Complete) => dispatch_line(&name, &buf, &pending, &writer, &notifications, &mut dropped),
            Err(e) => {
                tracing::warn!(source = "upstream", upstream = %name, error = %e, "reading stdout failed");
                break;
            }
        }
    }
    let waiting: Vec<_> = pending.locked().drain().collect();
    for (_, tx) in waiting {
        let _ = tx.send(Err(UpstreamError::Closed(format!("upstream {name} exited (its stdout closed)"))));
    }
    tracing::info!(source = "upstream", upstream = %name, dropped_notifications = dropped, "stdout closed");
}

fn dispatch_line(
    name: &str,
    line: &[u8],
    pending: &Pending,
    writer: &mpsc::Sender<Outgoing>,
    notifications: &mpsc::Sender<Value>,
    dropped: &mut u64,
) {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let message: Value = match serde_json::from_slice(text) {
        Ok(message) => message,
        Err(e) => {
            let shown = String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
            tracing::warn!(source = "upstream", upstream = %name, error = %e, line = %shown, "stdout line is not JSON; skipped");
            return;
        }
    };
    let method = message.get("method").and_then(Value::as_str);
    match (message.get("id"), method) {
        // A request from the server (ping, roots/list, sampling): answered here so it never waits.
        (Some(id), Some(method)) => {
            let reply = match method {
                "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
                    "message": format!("tuicd does not offer {method} to upstreams")}}),
            };
            let _ = writer.try_send(Outgoing::Line(line_of(&reply)));
        }
        (Some(id), None) => {
            let Some(tx) = id.as_u64().and_then(|id| pending.locked().remove(&id)) else {
                tracing::debug!(source = "upstream", upstream = %name, id = %id, "answer to no request in flight; skipped");
                return;
            };
            let _ = tx.send(answer_of(message));
        }
        (None, Some(_)) => {
            if notifications.try_send(message).is_err() {
                *dropped += 1;
                if dropped.is_power_of_two() {
                    tracing::warn!(source = "upstream", upstream = %name, dropped = *dropped, "notification queue full; dropping");
                }
            }
        }
        (None, None) => {
            tracing::warn!(source = "upstream", upstream = %name, "stdout message has neither id nor method; skipped");
        }
    }
}

/// A JSON-RPC response as the transport answers it: its `result`, or its error.
pub(crate) fn answer_of(mut message: Value) -> Result<Value, UpstreamError> {
    if let Some(error) = message.get_mut("error").map(Value::take) {
        return Err(UpstreamError::Rpc {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
            message: error.get("message").and_then(Value::as_str).unwrap_or("(no message)").to_owned(),
            data: error.get("data").cloned(),
        });
    }
    match message.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(UpstreamError::Protocol("a response with neither result nor error".into())),
    }
}

enum Line {
    Complete,
    TooLong(usize),
    Eof,
}

/// Reads one line into `buf`, keeping at most `max` bytes; a longer line is consumed to its end
/// (its first bytes kept, to name its id) and reported with its length.
async fn read_line_bounded<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    let mut total = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if total == 0 {
                Line::Eof
            } else if total > max {
                Line::TooLong(total)
            } else {
                Line::Complete
            });
        }
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..=at], true),
            None => (available, false),
        };
        let used = chunk.len();
        if total + used <= max {
            buf.extend_from_slice(chunk);
        } else if buf.len() < 256 {
            let room = 256 - buf.len();
            buf.extend_from_slice(&chunk[..room.min(used)]);
        }
        total += used;
        reader.consume(used);
        if found {
            return Ok(if total > max { Line::TooLong(total) } else { Line::Complete });
        }
    }
}

/// The numeric `"id"` near the start of a message, read without parsing the whole of it.
fn leading_id(prefix: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(&prefix[..prefix.len().min(256)]).into_owned();
    let at = text.find("\"id\"")? + 4;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

async fn stderr_loop(name: String, stderr: tokio::process::ChildStderr) {
    let mut lines = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match read_line_bounded(&mut lines, &mut buf, STDERR_LINE_MAX).await {
            Ok(Line::Eof) | Err(_) => return,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end();
                if !line.is_empty() {
                    tracing::info!(source = "upstream", upstream = %name, stream = "stderr", "{line}");
                }
            }
        }
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

#[cfg(test)]
mod tests;
