//! What both upstream transports (`stdio`, `http`) share: the handshake they report, the options
//! of one request, the errors they name, and where a bearer credential comes from.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

/// The capabilities tuicd declares in its `initialize` to an upstream: it forwards sampling,
/// elicitation and roots requests to the client whose call caused them (which is asked only when
/// it declared the same capability, else the upstream is told which one it lacks).
pub(crate) fn client_capabilities() -> Value {
    serde_json::json!({"sampling": {}, "elicitation": {}, "roots": {}})
}

/// Why a message an upstream sent without naming a request (a log, a request to the client) is
/// given to no call: `calls` are in flight on the upstream, and it belongs to one only when it is
/// exactly one.
pub(crate) fn unattributed(calls: usize) -> String {
    match calls {
        0 => "no tool call is in flight on it, so no MCP client caused the request".into(),
        n => format!(
            "{n} tool calls are in flight on it and the request names none of them, so which client caused it is unknown"
        ),
    }
}

/// The JSON-RPC error object an upstream's request `method` is answered with when tuicd cannot
/// put it to a client, and `why`.
pub(crate) fn not_forwarded(method: &str, upstream: &str, why: &str) -> Value {
    serde_json::json!({"code": -32601, "message": format!("tuicd cannot forward {method} from upstream {upstream}: {why}")})
}

/// What `initialize` answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Handshake {
    pub protocol_version: String,
    pub server_info: Value,
    pub capabilities: Value,
    pub instructions: Option<String>,
}

/// The options of one upstream request.
#[derive(Debug, Clone)]
pub(crate) struct RequestOpts {
    /// The whole request, response included; past it the request is cancelled upstream.
    pub timeout: Duration,
    /// Where the notifications related to this request go (its `notifications/progress`, and on
    /// HTTP anything the POST's SSE response carries), for the calling client.
    pub related: Option<mpsc::Sender<Value>>,
}

impl RequestOpts {
    pub(crate) fn within(timeout: Duration) -> Self {
        Self { timeout, related: None }
    }
}

/// Why an upstream request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum UpstreamError {
    /// The HTTP upstream answered 401 and no credential we hold is accepted: it needs OAuth.
    #[error("the upstream needs authorization (401: {www_authenticate})")]
    NeedsOAuth { www_authenticate: String },
    /// The HTTP upstream answered 403 with `error="insufficient_scope"`: the credential is valid
    /// but not for this request. `scope` is what the challenge says the request needs.
    #[error("the upstream refused the request for lack of scope (403 insufficient_scope{})",
        scope.as_ref().map(|s| format!(", it needs {s:?}")).unwrap_or_default())]
    InsufficientScope { scope: Option<String>, resource_metadata: Option<String> },
    /// A credential was presented and refused again after recovery.
    #[error("the upstream refused the credential: {0}")]
    AuthFailed(String),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The process exited or the connection is gone; the request was not answered.
    #[error("the upstream connection closed: {0}")]
    Closed(String),
    /// A JSON-RPC error response, passed on as the upstream worded it.
    #[error("upstream error {code}: {message}")]
    Rpc { code: i64, message: String, data: Option<Value> },
    /// The upstream broke the protocol (unreadable message, wrong shape).
    #[error("the upstream broke the protocol: {0}")]
    Protocol(String),
    #[error("{0}")]
    Io(String),
}

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where an HTTP upstream's bearer credential comes from. Read on every request attempt, so a
/// completed (re)authorization takes effect at once.
pub(crate) trait BearerSource: Send + Sync + Debug {
    /// The credential to present now, if any.
    fn current(&self) -> Option<String>;
    /// The credential for the next attempt: `current`, unless the source knows it is about to
    /// expire and can renew it first (an OAuth token inside its expiry margin is refreshed before
    /// use, so a request never spends a 401 on a token known to be stale).
    fn fresh(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move { self.current() })
    }
    /// After a 401 that rejected `rejected` (the exact credential presented, `None` when none
    /// was): the credential to retry with, or `None` when there is nothing better. Refreshing is
    /// serialized per upstream; a stored credential that differs from `rejected` is returned as
    /// it is, without refreshing.
    fn recover<'a>(&'a self, rejected: Option<&'a str>) -> BoxFuture<'a, Option<String>>;
    /// The scope the current credential was granted (or, when the grant did not say, asked
    /// for), space-separated; `None` when unknown.
    fn granted_scope(&self) -> Option<String> {
        None
    }
}

/// A fixed bearer token from the configuration.
#[derive(Clone)]
pub(crate) struct StaticBearer(pub String);

impl Debug for StaticBearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StaticBearer(<redacted>)")
    }
}

impl BearerSource for StaticBearer {
    fn current(&self) -> Option<String> {
        Some(self.0.clone())
    }

    fn recover<'a>(&'a self, _rejected: Option<&'a str>) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }
}

/// What a transport's `connect` is handed by the registry.
#[derive(Debug)]
pub(crate) struct ConnectCtx {
    /// Every server notification not related to a request in flight (bounded: a full queue drops
    /// and counts). The transport holds this sender for as long as its connection lives, so the
    /// registry reads the receiver's end (`None`) as the connection's end.
    pub notifications: mpsc::Sender<Value>,
    /// The credential an HTTP upstream presents (unused by stdio).
    pub bearer: Option<std::sync::Arc<dyn BearerSource>>,
    /// The upstream's name, for logs (`source = "upstream"`, `upstream = name`).
    pub name: String,
    /// Where a stdio upstream's stderr is written (`None`: logged only).
    pub stderr_log: Option<std::path::PathBuf>,
}
