//! The Streamable HTTP upstream client: every message a POST to the server's URL, answered with
//! JSON or with an SSE stream that carries the response and the notifications related to it; the
//! session id from `initialize` and the negotiated protocol version on every later request; the
//! GET stream for the server's own notifications; `Last-Event-ID` resumption; DELETE on close.
//!
//! - [`sse`]: the event-stream parser (pure).
//! - [`post`]: one exchange: credentials and the 401 recovery, JSON or SSE answers, resumption.
//! - [`listen`]: the GET notification stream and its reconnection.

mod listen;
mod post;
mod sse;
#[cfg(test)]
mod test_server;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::config::{Transport, UpstreamServer};
use super::wire::{BearerSource, ConnectCtx, Handshake, RequestOpts, UpstreamError};
use crate::lock::Recover;
use post::Outcome;

/// The revision tuicd offers upstreams; the server's answer is what later requests carry.
const OFFERED_VERSION: &str = "2025-11-25";
/// How long establishing a TCP (and TLS) connection may take, within the request's own deadline.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// DELETE on close is a courtesy to the server; a dead one must not hold the registry up.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

pub(crate) struct HttpClient {
    shared: Arc<Shared>,
    listener: Mutex<Option<AbortHandle>>,
}

/// What a client's requests and its GET stream share.
struct Shared {
    http: reqwest::Client,
    url: reqwest::Url,
    name: String,
    bearer: Option<Arc<dyn BearerSource>>,
    /// Taken when the connection ends (close, or the server gone for good), which the registry
    /// reads as the connection's end.
    notifications: Mutex<Option<mpsc::Sender<Value>>>,
    dropped: AtomicU64,
    next_id: AtomicI64,
    session: Mutex<Session>,
    /// Held while re-initializing after a 404, so concurrent requests that all met the expired
    /// session start one new session between them.
    reinit: tokio::sync::Mutex<()>,
    closed: AtomicBool,
}

/// The server's session as of one `initialize`; `generation` counts them.
#[derive(Debug, Clone, Default)]
struct Session {
    id: Option<String>,
    protocol_version: Option<String>,
    generation: u64,
}

impl HttpClient {
    /// Connects and runs initialize → notifications/initialized, then opens the GET stream.
    pub(crate) async fn connect(server: &UpstreamServer, ctx: ConnectCtx) -> Result<(Self, Handshake), UpstreamError> {
        let Transport::Http { url } = &server.transport else {
            return Err(UpstreamError::Protocol(format!("upstream {:?} is not an http upstream", server.name)));
        };
        let url = reqwest::Url::parse(url).map_err(|e| {
            UpstreamError::Io(format!("invalid url {:?}: {e}", crate::proxy::store::redact::redact_url(url)))
        })?;
        static RING: Once = Once::new();
        // reqwest is built without a crypto provider; the daemon's TLS runs on ring everywhere.
        RING.call_once(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| UpstreamError::Io(format!("cannot build the http client: {e}")))?;
        let shared = Arc::new(Shared {
            http,
            url,
            name: ctx.name,
            bearer: ctx.bearer,
            notifications: Mutex::new(Some(ctx.notifications)),
            dropped: AtomicU64::new(0),
            next_id: AtomicI64::new(1),
            session: Mutex::new(Session::default()),
            reinit: tokio::sync::Mutex::new(()),
            closed: AtomicBool::new(false),
        });
        let timeout = Duration::from_secs(server.timeout_secs);
        let handshake =
            tokio::time::timeout(timeout, shared.initialize()).await.map_err(|_| UpstreamError::Timeout(timeout))??;
        let listener = tokio::spawn(listen::run(shared.clone())).abort_handle();
        Ok((Self { shared, listener: Mutex::new(Some(listener)) }, handshake))
    }

    /// One request; Ok is the JSON-RPC `result`, a JSON-RPC error is `UpstreamError::Rpc`.
    /// Dropping the future or passing `opts.timeout` sends `notifications/cancelled`.
    pub(crate) async fn request(&self, method: &str, params: Value, opts: RequestOpts) -> Result<Value, UpstreamError> {
        let shared = &self.shared;
        if shared.closed.load(Ordering::Acquire) {
            return Err(UpstreamError::Closed("the client is closed".into()));
        }
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        let mut cancel = CancelOnDrop { shared: shared.clone(), id, reason: "the client went away", armed: true };
        match tokio::time::timeout(opts.timeout, shared.exchange(&message, id, opts.related.as_ref())).await {
            Err(_) => {
                cancel.reason = "timeout";
                Err(UpstreamError::Timeout(opts.timeout))
            }
            Ok(answer) => {
                cancel.armed = false;
                into_result(answer?)
            }
        }
    }

    /// Sends the answer to a request the server sent.
    pub(crate) async fn respond(&self, answer: &Value) -> Result<(), UpstreamError> {
        post::deliver(&self.shared, answer, &self.shared.session()).await
    }

    /// Ends the connection: the GET stream stops and the session is DELETEd.
    pub(crate) async fn close(&self) {
        let shared = &self.shared;
        if shared.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(listener) = self.listener.locked().take() {
            listener.abort();
        }
        shared.end_connection();
        let session = shared.session();
        if session.id.is_some() {
            let request = shared.with_session(shared.http.delete(shared.url.clone()), &session);
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, post::send(shared, request)).await;
        }
    }

    /// Notifications dropped because the queue was full.
    #[cfg(test)]
    pub(crate) fn dropped_notifications(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient").field("url", &self.shared.url.as_str()).field("name", &self.shared.name).finish()
    }
}

impl Drop for HttpClient {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.locked().take() {
            listener.abort();
        }
    }
}

impl Shared {
    fn session(&self) -> Session {
        self.session.locked().clone()
    }

    /// The session id and protocol version headers of `session`, when there are any.
    fn with_session(&self, mut request: reqwest::RequestBuilder, session: &Session) -> reqwest::RequestBuilder {
        if let Some(id) = &session.id {
            request = request.header("mcp-session-id", id);
        }
        if let Some(version) = &session.protocol_version {
            request = request.header("mcp-protocol-version", version);
        }
        request
    }

    async fn initialize(&self) -> Result<Handshake, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": OFFERED_VERSION,
            "capabilities": super::wire::client_capabilities(),
            "clientInfo": {"name": "tuicd", "version": env!("CARGO_PKG_VERSION")},
        }});
        let generation = self.session().generation;
        let Outcome::Answer { message: answer, session_id } =
            post::call(self, &message, id, None, &Session { generation, ..Session::default() }).await?
        else {
            return Err(UpstreamError::Protocol("initialize answered 404".into()));
        };
        let result = into_result(answer)?;
        let handshake = Handshake {
            protocol_version: result["protocolVersion"].as_str().unwrap_or(OFFERED_VERSION).to_owned(),
            server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            instructions: result["instructions"].as_str().map(str::to_owned),
        };
        *self.session.locked() = Session {
            id: session_id,
            protocol_version: Some(handshake.protocol_version.clone()),
            generation: generation + 1,
        };
        self.notify("notifications/initialized", Value::Null).await?;
        Ok(handshake)
    }

    /// One request's exchange; a session the server no longer knows is re-initialized once.
    async fn exchange(
        &self,
        message: &Value,
        id: i64,
        related: Option<&mpsc::Sender<Value>>,
    ) -> Result<Value, UpstreamError> {
        let session = self.session();
        if let Outcome::Answer { message, .. } = post::call(self, message, id, related, &session).await? {
            return Ok(message);
        }
        {
            let _one = self.reinit.lock().await;
            if self.session().generation == session.generation {
                tracing::info!(source = "upstream", upstream = %self.name, "session expired; re-initializing");
                self.initialize().await?;
            }
        }
        match post::call(self, message, id, related, &self.session()).await? {
            Outcome::Answer { message, .. } => Ok(message),
            Outcome::SessionExpired => {
                Err(UpstreamError::Closed("the upstream expired the session again right after re-initializing".into()))
            }
        }
    }

    async fn notify(&self, method: &str, params: Value) -> Result<(), UpstreamError> {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        post::deliver(self, &message, &self.session()).await
    }

    /// A server notification or request: to the calling client's channel when it belongs to a
    /// request in flight, else to the connection's queue. A full queue drops it and counts;
    /// `false` when it was not handed on.
    fn forward(&self, related: Option<&mpsc::Sender<Value>>, message: Value) -> bool {
        let sent = match related {
            Some(related) => related.try_send(message).is_ok(),
            None => match &*self.notifications.locked() {
                Some(queue) => queue.try_send(message).is_ok(),
                None => return false,
            },
        };
        if !sent {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(source = "upstream", upstream = %self.name, dropped, "notification queue full; dropping");
            }
        }
        sent
    }

    fn end_connection(&self) {
        self.notifications.locked().take();
    }
}

/// Sends `notifications/cancelled` for a request that timed out or whose caller went away.
struct CancelOnDrop {
    shared: Arc<Shared>,
    id: i64,
    reason: &'static str,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed || self.shared.closed.load(Ordering::Acquire) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let (shared, id, reason) = (self.shared.clone(), self.id, self.reason);
        runtime.spawn(async move {
            let params = json!({"requestId": id, "reason": reason});
            if let Err(error) = shared.notify("notifications/cancelled", params).await {
                tracing::debug!(source = "upstream", upstream = %shared.name, %error, "cancellation not delivered");
            }
        });
    }
}

/// A JSON-RPC response's `result`, or its `error` as `UpstreamError::Rpc`.
fn into_result(mut message: Value) -> Result<Value, UpstreamError> {
    if let Some(error) = message.get("error") {
        return Err(UpstreamError::Rpc {
            code: error["code"].as_i64().unwrap_or(0),
            message: error["message"].as_str().unwrap_or_default().to_owned(),
            data: error.get("data").cloned(),
        });
    }
    match message.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(UpstreamError::Protocol("a response with neither result nor error".into())),
    }
}
