//! A `tools/call` of an upstream tool: the checks at dispatch, the result passed through, the
//! caller's progress and log notifications delivered to its GET stream, the upstream's requests
//! put to the caller on the call's response stream, and cancellation.

use serde_json::{Map, Value, json};

use super::SEPARATOR;
use crate::mcp::client_requests::Outbox;
use crate::mcp::model::{Reply, RpcError, ToolText};
use crate::mcp::tools::meta::CALL_TOOL;
use crate::proxy::registry::{Ask, CallError, Caller, Deliver, Status};
use crate::proxy::wire::UpstreamError;
use crate::state::App;

/// JSON-RPC error code of a call to an upstream that needs authorization (the reference's).
pub(crate) const NEEDS_AUTH: i64 = -32001;

/// An upstream tool a `tools/call` names.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub qualified: String,
    pub arguments: Option<Value>,
    /// Reached through `call_tool`: refusals are that tool's failures, not protocol errors.
    pub via_meta: bool,
}

/// The upstream tool `name` (or, through `call_tool` on the collapsed surface, its
/// `tool_name`) names, when upstreams are configured: a name the aggregate lists, or one that
/// looks qualified (`__`) and is not native, which [`call`] refuses naming why.
pub(crate) fn target(app: &App, name: &str, arguments: &Option<Value>, collapsed: bool) -> Option<Target> {
    if app.upstreams.is_empty() {
        return None;
    }
    let upstream_tool = |n: &str| {
        app.mcp.upstream.find_fresh(app, n).is_some()
            || (n.contains(SEPARATOR) && !crate::mcp::tools::registry().iter().any(|t| t.name == n))
    };
    if upstream_tool(name) {
        return Some(Target { qualified: name.to_owned(), arguments: arguments.clone(), via_meta: false });
    }
    if name == CALL_TOOL && collapsed {
        let args = arguments.as_ref()?.as_object()?;
        let tool_name = args.get("tool_name")?.as_str()?;
        if upstream_tool(tool_name) {
            return Some(Target {
                qualified: tool_name.to_owned(),
                arguments: args.get("arguments").cloned(),
                via_meta: true,
            });
        }
    }
    None
}

/// The client a proxied call is for: its protocol session (for its notifications and its
/// capabilities) and the call's response stream (for the upstream's requests).
#[derive(Debug, Clone)]
pub(crate) struct CallerStream<'a> {
    pub session: Option<&'a str>,
    pub outbox: Option<Outbox>,
}

/// Runs the call; the caller's session and `request_id` name it for cancellation and its
/// notifications.
pub(crate) async fn call(
    app: &App,
    to: CallerStream<'_>,
    request_id: &Value,
    target: Target,
    meta: Option<Value>,
) -> Result<Reply, RpcError> {
    let refused = |error: RpcError| match target.via_meta && error.code != NEEDS_AUTH {
        true => Ok(Reply::Tool(ToolText::json(&json!({"error": format!("call_tool: {}", error.message)}), true))),
        false => Err(error),
    };
    let arguments = match target.arguments.clone() {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(map)) => Value::Object(map),
        Some(_) => return refused(RpcError::invalid_params("tools/call: \"arguments\" must be an object")),
    };
    // Routed by the (upstream, tool) pair the name was listed with, never by splitting the name.
    let Some(listed) = app.mcp.upstream.find_fresh(app, &target.qualified) else {
        return failure(not_listed(app, &target.qualified)).map_or_else(refused, Ok);
    };
    let mut params = json!({"arguments": arguments});
    if let Some(meta) = meta.filter(Value::is_object) {
        params["_meta"] = meta;
    }
    let session = to.session;
    let caller = session.map(|s| Caller { notify: deliver_to(app, s), ask: ask_of(app, s, to.outbox) });
    let key = session.map(|s| (s.to_owned(), request_id.to_string()));
    let cancelled = key.as_ref().map(|k| app.mcp.upstream.register(k.clone()));
    // The call runs on a task of its own: a client that stops waiting (its deadline passed, its
    // connection dropped) leaves it running to its answer or its `timeout_secs`, so a client told
    // that the call "may still complete" is told the truth. Only `notifications/cancelled` (or the
    // timeout) cancels it upstream.
    let upstream_name = listed.upstream.clone();
    let run = {
        let (app, upstream, tool) = (app.clone(), listed.upstream, listed.tool);
        tokio::spawn(async move {
            let run = app.upstreams.call(&upstream, &tool, params, caller);
            let outcome = match cancelled {
                Some(cancelled) => tokio::select! {
                    outcome = run => Some(outcome),
                    _ = cancelled => None,
                },
                None => Some(run.await),
            };
            if let Some(key) = &key {
                app.mcp.upstream.unregister(key);
            }
            outcome
        })
    };
    let outcome = match run.await {
        Ok(outcome) => outcome,
        Err(panicked) => {
            tracing::error!(source = "upstream", tool = %target.qualified, error = %panicked, "proxied call failed");
            let error = json!({"error": format!("{}: the call failed inside tuicd", target.qualified)});
            return Ok(Reply::Tool(ToolText::json(&error, true)));
        }
    };
    let Some(outcome) = outcome else {
        tracing::info!(source = "upstream", tool = %target.qualified, "proxied call cancelled by its client");
        let error = json!({"error": format!("{}: cancelled by the client", target.qualified)});
        return Ok(Reply::Tool(ToolText::json(&error, true)));
    };
    match outcome {
        Ok(result) => Ok(passthrough(result, &upstream_name)),
        Err(error) => failure(error).map_or_else(refused, Ok),
    }
}

/// Ends the proxied call the client's `notifications/cancelled` names.
pub(crate) fn cancel(app: &App, session: &str, request_id: &Value) {
    if let Some(tx) = app.mcp.upstream.take(&(session.to_owned(), request_id.to_string())) {
        let _ = tx.send(());
    }
}

/// A valid `CallToolResult` (an object with a `content` array) is the result as it is, but for
/// its `resource_link`s, namespaced so the client reads them through tuicd; anything else is
/// wrapped in the native text envelope, so the response stays protocol-valid.
fn passthrough(mut result: Value, upstream: &str) -> Reply {
    if let Some(content) = result.get_mut("content").and_then(Value::as_array_mut) {
        super::resources::rewrite_links(upstream, content);
        return Reply::Value(result);
    }
    Reply::Tool(ToolText::json(&result, false))
}

/// Why `name`, which the aggregate does not list, cannot be called: the upstream whose
/// `{name}__` it starts with (the longest such) is not ready, or lists no such tool; or no
/// upstream's name starts it.
fn not_listed(app: &App, name: &str) -> CallError {
    let upstreams = app.upstreams.snapshot();
    let owner = upstreams
        .iter()
        .filter(|u| name.strip_prefix(u.name.as_str()).is_some_and(|rest| rest.starts_with(SEPARATOR)))
        .max_by_key(|u| u.name.len());
    let Some(owner) = owner else {
        let valid: Vec<&str> = upstreams.iter().map(|u| u.name.as_str()).collect();
        let guess = name.split(SEPARATOR).next().unwrap_or(name);
        return CallError::UnknownUpstream { name: guess.to_owned(), valid: valid.join(", ") };
    };
    let upstream = owner.name.clone();
    match owner.status {
        Status::Ready => {}
        status @ (Status::NeedsAuth | Status::Authenticating) => {
            return CallError::NeedsAuth { name: upstream, status: status.as_str() };
        }
        status => {
            let last_error = owner.last_error.clone();
            return CallError::Unavailable { name: upstream, status: status.as_str(), last_error };
        }
    }
    let listed = app.mcp.upstream.listed();
    let valid: Vec<&str> = listed.iter().filter(|t| t.upstream == upstream).map(|t| t.qualified.as_str()).collect();
    let tool = name[upstream.len() + SEPARATOR.len()..].to_owned();
    CallError::UnknownTool { upstream, tool, valid: valid.join(", ") }
}

/// A failed call: a protocol error, or (`Ok`) the tool result that reports it.
fn failure(error: CallError) -> Result<Reply, RpcError> {
    let message = error.to_string();
    match error {
        CallError::UnknownUpstream { .. } | CallError::UnknownTool { .. } => Err(RpcError::invalid_params(message)),
        CallError::NeedsAuth { .. }
        | CallError::NeedsScope { .. }
        | CallError::Upstream { error: UpstreamError::NeedsOAuth { .. }, .. } => {
            Err(RpcError::new(NEEDS_AUTH, message))
        }
        // The upstream's own JSON-RPC error, passed on as it worded it.
        CallError::Upstream { error: UpstreamError::Rpc { code, message, data }, .. } => {
            Err(RpcError { code, message, data })
        }
        CallError::Unavailable { .. } | CallError::Upstream { .. } => {
            Ok(Reply::Tool(ToolText::json(&json!({"error": message}), true)))
        }
    }
}

/// Delivers to protocol session `session`'s GET stream, as JSON-RPC notifications (its queue is
/// bounded; a full one drops).
fn deliver_to(app: &App, session: &str) -> Deliver {
    let (app, session) = (app.clone(), session.to_owned());
    std::sync::Arc::new(move |mut message: Value| {
        if let Some(object) = message.as_object_mut() {
            object.insert("jsonrpc".into(), json!("2.0"));
            object.remove("id");
        }
        app.mcp.protocol_sessions.push(&session, &message.to_string());
    })
}

/// Puts the upstream's requests to protocol session `session`'s client through the call's
/// response stream `outbox`.
fn ask_of(app: &App, session: &str, outbox: Option<Outbox>) -> Ask {
    let (app, session) = (app.clone(), session.to_owned());
    std::sync::Arc::new(move |method: String, params: Value| {
        let (app, session, outbox) = (app.clone(), session.clone(), outbox.clone());
        Box::pin(async move { app.mcp.client_requests.ask(&app, &session, outbox.as_ref(), &method, params).await })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_tool_result_passes_through_and_anything_else_is_wrapped() {
        let result = json!({"content": [{"type": "text", "text": "hi"}], "isError": true,
            "structuredContent": {"a": 1}, "_meta": {"x": 1}, "vendorField": [1]});
        assert_eq!(passthrough(result.clone(), "u"), Reply::Value(result));
        let odd = json!({"content": "not an array"});
        assert_eq!(passthrough(odd.clone(), "u"), Reply::Tool(ToolText::json(&odd, false)));
        let link = json!({"content": [{"type": "resource_link", "uri": "demo://r/1", "name": "r"}]});
        let Reply::Value(linked) = passthrough(link, "u") else { panic!("a CallToolResult") };
        assert_eq!(linked["content"][0]["uri"], "tuic+upstream://u/demo://r/1");
    }

    #[test]
    fn an_upstream_error_keeps_its_code_and_needs_auth_is_32001() {
        let rpc = CallError::Upstream {
            name: "u".into(),
            error: UpstreamError::Rpc { code: -32602, message: "bad args".into(), data: None },
        };
        assert_eq!(failure(rpc).expect_err("protocol error").code, -32602);
        let auth = CallError::NeedsAuth { name: "u".into(), status: "needs_auth" };
        let error = failure(auth).expect_err("protocol error");
        assert_eq!(error.code, NEEDS_AUTH);
        assert!(error.message.contains("tuicd upstream authorize u"), "{}", error.message);
        let closed = CallError::Upstream { name: "u".into(), error: UpstreamError::Closed("exited".into()) };
        assert!(matches!(failure(closed), Ok(Reply::Tool(t)) if t.is_error));
    }
}
