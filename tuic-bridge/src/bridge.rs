//! The bridge proper: stdin requests forwarded to tuicd, answers and server notifications
//! written to stdout, liveness pings, and offline answers while tuicd (or its endpoint) is away.
//!
//! State lives behind one std `Mutex`, held only to read or swap a few fields, never across
//! `.await`.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::deadline;
use crate::http::{self, TransportError};
use crate::limits::{
    CALL_DEADLINE, EARLY_NOTIFICATION_QUEUE, OFFLINE_AFTER_FAILURES, STDOUT_QUEUE, STREAM_OPEN_DEADLINE,
};

/// The revision used when neither the request nor the handshake names one.
const FALLBACK_VERSION: &str = "2025-11-25";
const NEGOTIABLE_VERSIONS: [&str; 5] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

#[derive(Debug)]
pub(crate) struct Settings {
    pub socket: PathBuf,
    /// `$TUIC_SESSION`: the PTY this bridge runs in, sent as `x-tuic-session`.
    pub tuic_session: Option<String>,
    pub ping_interval: Duration,
}

/// Why tuicd cannot be used right now.
#[derive(Debug, Clone, PartialEq)]
enum Failure {
    /// Nothing listens on the socket.
    Down(String),
    /// The daemon answers but `/mcp` is unavailable (switched off, or refusing).
    EndpointOff(String),
    /// A single call failed (malformed answer, broken connection); says nothing about liveness.
    Call(String),
    /// A call got no answer within its deadline. `sent`: tuicd received the request and may still
    /// carry it out, so a blind retry may do it twice.
    Deadline { secs: u64, sent: bool },
}

impl Failure {
    fn message(&self) -> String {
        match self {
            Failure::Down(socket) => format!(
                "tuicd is not running (nothing listens on {socket}); start it with `tuicd` and the bridge reconnects by itself"
            ),
            Failure::EndpointOff(why) => format!("tuicd is running but its MCP endpoint is unavailable: {why}"),
            Failure::Call(why) => why.clone(),
            Failure::Deadline { secs, sent: true } => format!(
                "tuicd did not answer within {secs} s; it received the request and may still complete it: check its effect (session output or status) before retrying, or it may happen twice"
            ),
            Failure::Deadline { secs, sent: false } => {
                format!("tuicd did not accept the request within {secs} s; it never received it, so retrying is safe")
            }
        }
    }

    /// For a deadline hit: whether tuicd may still complete the call.
    fn may_still_complete(&self) -> Option<bool> {
        match self {
            Failure::Deadline { sent, .. } => Some(*sent),
            _ => None,
        }
    }
}

#[derive(Debug, Default)]
struct State {
    session_id: Option<String>,
    version: Option<String>,
    /// The downstream client's last `initialize` params, replayed after tuicd restarts.
    client_init: Option<Value>,
    /// The client's initialize has been answered: notifications may now be sent to it.
    client_ready: bool,
    offline: Option<Failure>,
    failures: u32,
    /// A transport failure was seen: re-initialize at the next successful contact.
    needs_reinit: bool,
    stream: Option<JoinHandle<()>>,
    /// The per-tool deadlines of tuicd's last `tools/list` answer.
    stated: Arc<deadline::Stated>,
}

struct Bridge {
    settings: Settings,
    out: mpsc::Sender<String>,
    state: Mutex<State>,
    /// Server notifications held until the client's initialize is answered (`None` after). An
    /// async lock, held while a notification is queued for stdout, so the held ones go out first
    /// and in order.
    early: tokio::sync::Mutex<Option<VecDeque<Value>>>,
}

pub(crate) async fn run(settings: Settings) {
    let (out, mut lines) = mpsc::channel::<String>(STDOUT_QUEUE);
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        // An empty line is the end marker sent when stdin closes: everything queued before it is out.
        while let Some(line) = lines.recv().await.filter(|l| !l.is_empty()) {
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.write_all(b"\n").await.is_err() {
                return;
            }
            let _ = stdout.flush().await;
        }
    });
    let early = tokio::sync::Mutex::new(Some(VecDeque::new()));
    let bridge = Arc::new(Bridge { settings, out, state: Mutex::default(), early });
    if let Err(failure) = bridge.initialize_upstream().await {
        tracing::warn!(reason = %failure.message(), "tuicd unavailable at start; answering offline until it is back");
        let mut state = bridge.lock();
        state.offline = Some(failure);
        state.failures = OFFLINE_AFTER_FAILURES;
    }
    tokio::spawn(bridge.clone().ping_loop());
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = stdin.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        tokio::spawn(bridge.clone().handle_line(line));
    }
    bridge.end_session().await;
    let _ = bridge.out.send(String::new()).await;
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    std::process::exit(0);
}

impl Bridge {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn emit(&self, message: &Value) {
        let _ = self.out.send(message.to_string()).await;
    }

    async fn handle_line(self: Arc<Self>, line: String) {
        let message: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                let error = json!({"code": -32700, "message": format!("Parse error: {e}")});
                return self.emit(&json!({"jsonrpc": "2.0", "id": null, "error": error})).await;
            }
        };
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = message.get("id").cloned();
        let (Some(method), Some(id)) = (method.clone(), id) else {
            // A notification or a response to a server request: forward when online, else drop.
            if self.lock().offline.is_none() {
                let _ = self.forward(&message, method.as_deref().unwrap_or(""), CALL_DEADLINE).await;
            }
            return;
        };
        if method == "initialize" {
            self.lock().client_init = message.get("params").cloned();
        }
        let offline = self.lock().offline.clone();
        let answer = match offline {
            Some(failure) => self.offline_answer(&id, &method, message.get("params"), &failure),
            None => {
                let stated = self.lock().stated.clone();
                let wait = deadline::for_request(&method, message.get("params"), &stated);
                match self.forward(&message, &method, wait).await {
                    Ok(Some(answer)) => {
                        if method == "initialize" {
                            self.lock().version =
                                answer.pointer("/result/protocolVersion").and_then(Value::as_str).map(String::from);
                        }
                        if method == "tools/list"
                            && let Some(result) = answer.get("result")
                        {
                            self.lock().stated = Arc::new(deadline::Stated::from_listing(result));
                        }
                        answer
                    }
                    Ok(None) => return,
                    Err(failure) => self.offline_answer(&id, &method, message.get("params"), &failure),
                }
            }
        };
        self.emit(&answer).await;
        if method == "initialize" {
            self.lock().client_ready = true;
            let mut early = self.early.lock().await;
            for notification in early.take().unwrap_or_default() {
                self.emit(&notification).await;
            }
        }
    }

    /// Forwards a server notification, or holds it while the client's initialize is unanswered.
    async fn notify(&self, notification: Value) {
        let mut early = self.early.lock().await;
        match early.as_mut() {
            None => self.emit(&notification).await,
            Some(held) if held.len() < EARLY_NOTIFICATION_QUEUE => {
                tracing::debug!("notification held until the client's initialize is answered");
                held.push_back(notification);
            }
            Some(_) => tracing::warn!(
                limit = EARLY_NOTIFICATION_QUEUE,
                "notification dropped: the client has not finished initialize and the queue is full"
            ),
        }
    }

    /// POSTs one message. `Ok(None)` for 202 (no answer), `Ok(Some)` for a JSON-RPC answer.
    async fn forward(&self, message: &Value, method: &str, wait: Duration) -> Result<Option<Value>, Failure> {
        let header_version = message
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .and_then(Value::as_str)
            .map(String::from);
        let mut headers = self.headers();
        if method != "initialize" {
            let version = header_version.or_else(|| self.lock().version.clone()).unwrap_or(FALLBACK_VERSION.into());
            headers.push(("MCP-Protocol-Version", version));
        }
        let body = message.to_string();
        let mut sent = false;
        let work = async {
            match http::exchange(&self.settings.socket, &headers, body.as_bytes(), &mut sent).await? {
                http::Answer::Whole(response) => Ok(Ok(response)),
                http::Answer::Stream(stream) => self.relay_stream(stream).await.map(Err),
            }
        };
        let answer = tokio::time::timeout(wait, work).await;
        let answer = answer.unwrap_or(Err(TransportError::Timeout { secs: wait.as_secs(), sent }));
        let response = match answer.map_err(|e| self.transport_failure(e))? {
            Ok(response) => response,
            Err(streamed) => return Ok(Some(streamed)),
        };
        if response.status == 202 {
            return Ok(None);
        }
        if method == "initialize"
            && let Some(session) = response.header("mcp-session-id")
        {
            self.lock().session_id = Some(session.to_owned());
        }
        match serde_json::from_slice::<Value>(&response.body) {
            Ok(v) if v.get("jsonrpc").is_some() => Ok(Some(v)),
            _ if response.status == 503 || response.status == 404 => {
                Err(Failure::EndpointOff(rest_error(&response.body, response.status)))
            }
            _ => Err(Failure::Call(format!("tuicd answered {}", rest_error(&response.body, response.status)))),
        }
    }

    /// Reads a POST answered as an SSE stream: each request (or notification) tuicd sends the
    /// client on it goes to stdout at once (the client answers on stdin, and that answer is
    /// POSTed like any), and the first response ends it.
    async fn relay_stream(&self, mut stream: http::EventStream) -> Result<Value, TransportError> {
        while let Some(data) = stream.next_event().await? {
            let Ok(message) = serde_json::from_str::<Value>(&data) else { continue };
            if message.get("method").is_some() {
                self.emit(&message).await;
            } else {
                return Ok(message);
            }
        }
        Err(TransportError::Malformed("the response stream ended before the response".into()))
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![("Accept", "application/json, text/event-stream".to_owned())];
        if let Some(session) = self.lock().session_id.clone() {
            headers.push(("mcp-session-id", session));
        }
        if let Some(tuic) = &self.settings.tuic_session {
            headers.push(("x-tuic-session", tuic.clone()));
        }
        headers
    }

    fn transport_failure(&self, error: TransportError) -> Failure {
        match error {
            TransportError::Timeout { secs, sent } => Failure::Deadline { secs, sent },
            TransportError::Down(socket) => {
                self.lock().needs_reinit = true;
                Failure::Down(socket)
            }
            other => {
                self.lock().needs_reinit = true;
                Failure::Call(other.to_string())
            }
        }
    }

    /// What the client gets when tuicd cannot answer: empty tools, an `isError` call result
    /// naming the cause, a local initialize and ping, and a JSON-RPC error for anything else.
    fn offline_answer(&self, id: &Value, method: &str, params: Option<&Value>, failure: &Failure) -> Value {
        let result = match method {
            "initialize" => {
                let requested = params.and_then(|p| p.get("protocolVersion")).and_then(Value::as_str);
                let version = requested.filter(|v| NEGOTIABLE_VERSIONS.contains(v)).unwrap_or(FALLBACK_VERSION);
                json!({
                    "protocolVersion": version,
                    // The same capabilities tuicd declares: Claude Code registers its channel
                    // only at initialize, so a bridge started before the daemon must declare it too.
                    "capabilities": {"tools": {"listChanged": true}, "experimental": {"claude/channel": {}}},
                    "serverInfo": {"name": "tuic-bridge", "version": env!("CARGO_PKG_VERSION")},
                    "instructions": format!("{}. Tools appear (tools/list_changed) as soon as it is back.", failure.message()),
                })
            }
            "ping" => json!({}),
            "tools/list" => json!({"tools": []}),
            "tools/call" => {
                let mut error = json!({"error": failure.message()});
                if let Some(may) = failure.may_still_complete() {
                    error["may_still_complete"] = json!(may);
                }
                json!({"content": [{"type": "text", "text": error.to_string()}], "isError": true})
            }
            _ => {
                let mut error = json!({"code": -32603, "message": failure.message()});
                if let Some(may) = failure.may_still_complete() {
                    error["data"] = json!({"may_still_complete": may});
                }
                return json!({"jsonrpc": "2.0", "id": id, "error": error});
            }
        };
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }

    /// Initializes with the client's own last initialize (or the bridge's), reusing the current
    /// session id, then (re)opens the notification stream.
    async fn initialize_upstream(self: &Arc<Self>) -> Result<(), Failure> {
        let params = self.lock().client_init.clone().unwrap_or_else(|| {
            json!({
                "protocolVersion": FALLBACK_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "tuic-bridge", "version": env!("CARGO_PKG_VERSION")},
            })
        });
        let init = json!({"jsonrpc": "2.0", "id": "tuic-bridge-initialize", "method": "initialize", "params": params});
        let answer = self.forward(&init, "initialize", CALL_DEADLINE).await?;
        let Some(result) = answer.as_ref().and_then(|a| a.get("result")) else {
            return Err(Failure::EndpointOff(format!("initialize failed: {}", answer.unwrap_or_default())));
        };
        let version = result.get("protocolVersion").and_then(Value::as_str).map(String::from);
        {
            let mut state = self.lock();
            state.version = version;
            state.needs_reinit = false;
        }
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let _ = self.forward(&initialized, "notifications/initialized", CALL_DEADLINE).await;
        // Abort the old stream before opening the new one: once the new GET lands, tuicd ends
        // the old stream, and that end must not be mistaken for a daemon restart.
        if let Some(old) = self.lock().stream.take() {
            old.abort();
        }
        let stream = tokio::spawn(self.clone().stream_loop());
        if let Some(raced) = self.lock().stream.replace(stream) {
            raced.abort();
        }
        Ok(())
    }

    /// Forwards every notification from GET /mcp to stdout until the stream ends.
    async fn stream_loop(self: Arc<Self>) {
        let headers = self.headers();
        match http::open_stream(&self.settings.socket, &headers, STREAM_OPEN_DEADLINE).await {
            Ok(Ok(mut stream)) => {
                tracing::debug!("notification stream open");
                while let Ok(Some(data)) = stream.next_event().await {
                    let Ok(message) = serde_json::from_str::<Value>(&data) else { continue };
                    self.notify(message).await;
                }
            }
            Ok(Err(response)) => tracing::warn!(status = response.status, "GET /mcp refused"),
            Err(e) => tracing::warn!(error = %e, "GET /mcp failed"),
        }
        // The daemon closed the stream: it is stopping or restarting. Re-initialize once it answers.
        self.lock().needs_reinit = true;
    }

    /// One MCP ping every interval; offline after [`OFFLINE_AFTER_FAILURES`] failures in a row,
    /// and back online (client's initialize replayed) at the first success after any failure.
    async fn ping_loop(self: Arc<Self>) {
        let mut tick = tokio::time::interval(self.settings.ping_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            let ping = json!({"jsonrpc": "2.0", "id": "tuic-bridge-ping", "method": "ping"});
            // While a restart is suspected, ping without the session id: presenting it would
            // make tuicd recreate the id, and the replayed initialize would then be logged as
            // `resumed` instead of `reconnected`.
            let suspect = self.lock().needs_reinit || self.lock().offline.is_some();
            let outcome = match self.ping(&ping, suspect).await {
                Ok(Some(answer)) if answer.get("result").is_some() => Ok(()),
                Ok(other) => Err(Failure::EndpointOff(format!("ping answered {}", other.unwrap_or_default()))),
                Err(failure) => Err(failure),
            };
            let outcome = match outcome {
                Ok(()) if self.lock().needs_reinit || self.lock().offline.is_some() => self.initialize_upstream().await,
                other => other,
            };
            match outcome {
                Ok(()) => self.on_success().await,
                Err(failure) => self.on_failure(failure).await,
            }
        }
    }

    async fn ping(&self, ping: &Value, without_session: bool) -> Result<Option<Value>, Failure> {
        if !without_session {
            return self.forward(ping, "ping", CALL_DEADLINE).await;
        }
        let headers: Vec<(&str, String)> = self.headers().into_iter().filter(|(k, _)| *k != "mcp-session-id").collect();
        let body = ping.to_string();
        let response = http::request(&self.settings.socket, "POST", &headers, body.as_bytes(), CALL_DEADLINE).await;
        let response = response.map_err(|e| self.transport_failure(e))?;
        match serde_json::from_slice::<Value>(&response.body) {
            Ok(v) if v.get("jsonrpc").is_some() => Ok(Some(v)),
            _ => Err(Failure::EndpointOff(rest_error(&response.body, response.status))),
        }
    }

    async fn on_success(&self) {
        let recovered = {
            let mut state = self.lock();
            state.failures = 0;
            state.offline.take().is_some() && state.client_ready
        };
        if recovered {
            tracing::warn!("tuicd is back; tools restored");
            self.emit(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})).await;
        }
    }

    async fn on_failure(&self, failure: Failure) {
        let went_offline = {
            let mut state = self.lock();
            state.failures += 1;
            let was_online = state.offline.is_none();
            if state.failures >= OFFLINE_AFTER_FAILURES {
                state.offline = Some(failure.clone());
                if let Some(stream) = state.stream.take() {
                    stream.abort();
                }
            }
            was_online && state.offline.is_some() && state.client_ready
        };
        if went_offline {
            tracing::warn!(reason = %failure.message(), "tuicd unreachable; answering offline");
            self.emit(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})).await;
        }
    }

    /// Best effort: tells tuicd the protocol session is over (stdin closed).
    async fn end_session(&self) {
        if self.lock().session_id.is_some() {
            let headers = self.headers();
            let _ = http::request(&self.settings.socket, "DELETE", &headers, b"", Duration::from_secs(1)).await;
        }
    }
}

/// A REST error body's sentence, or the status alone.
fn rest_error(body: &[u8], status: u16) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(|e| format!("HTTP {status}: {e}")))
        .unwrap_or_else(|| format!("HTTP {status}"))
}
