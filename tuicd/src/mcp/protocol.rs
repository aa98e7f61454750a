//! What each JSON-RPC method does. Knows tools and sessions, not HTTP.

use serde_json::{Value, json};

use super::instructions;
use super::model::{self, CallParams, Member, Params, Reply, RpcError, TaskParam};
use super::protocol_sessions::ClientInfo;
use super::tools::{self, CallContext};
use crate::http::Caller;
use crate::state::App;

/// The experimental capability for `notifications/claude/channel` pushes: declared by the server,
/// and by a client that takes them.
pub(crate) const CHANNEL_CAPABILITY: &str = "claude/channel";

/// What the transport learned from the request's headers.
#[derive(Debug, Clone)]
pub(crate) struct RequestMeta {
    pub caller: Caller,
    /// `mcp-session-id`, already checked for shape.
    pub session_id: Option<String>,
    /// `x-tuic-session`, already checked to be a UUID.
    pub tuic_session: Option<String>,
    /// Where a `tools/call` puts the requests its upstream sends the client (the call's SSE
    /// response); `None` when the response cannot carry them.
    pub outbox: Option<super::client_requests::Outbox>,
}

/// A handled request: the printed JSON-RPC response and the session id to return in `mcp-session-id`.
#[derive(Debug)]
pub(crate) struct Handled {
    pub body: Vec<u8>,
    pub session_id: Option<String>,
}

pub(crate) async fn handle(
    app: &App,
    meta: RequestMeta,
    id: &Value,
    method: &str,
    params: Option<Params<'_>>,
) -> Handled {
    let mut session_id = meta.session_id.clone();
    let outcome = match method {
        "initialize" => initialize(app, &meta, params).await.map(|(minted, result)| {
            session_id = Some(minted);
            Reply::Value(result)
        }),
        "ping" => Ok(Reply::Value(json!({}))),
        "tools/list" => tools_list(app, &meta, params).await.map(Reply::Value),
        model::TOOLS_CALL => {
            let params = params.map(Params::into_call).unwrap_or_default();
            tools_call(app, meta, id, params).await
        }
        "tasks/get" | "tasks/list" | "tasks/cancel" | "tasks/result" => {
            let bound = meta.session_id.as_deref().and_then(|s| app.mcp.protocol_sessions.identity(s));
            let identity = meta.tuic_session.clone().or(bound).or_else(|| meta.session_id.clone());
            let params = model::params_object(params);
            let loopback = meta.caller.require_loopback(method).is_ok();
            super::tasks::handle_method(app, identity.as_deref(), loopback, method, &params).await.map(Reply::Value)
        }
        // The upstreams' resources, prompts and completions (tuicd has none of its own): not
        // served, and not advertised, without upstreams.
        "resources/list"
        | "resources/templates/list"
        | "resources/read"
        | "prompts/list"
        | "prompts/get"
        | "completion/complete"
            if app.upstreams.is_empty() =>
        {
            Err(RpcError::method_not_found(method))
        }
        "resources/list" => {
            super::upstream::resources::list(app, &model::params_object(params)).await.map(Reply::Value)
        }
        "resources/templates/list" => {
            super::upstream::resources::templates(app, &model::params_object(params)).await.map(Reply::Value)
        }
        "resources/read" => super::upstream::resources::read(app, model::params_object(params)).await.map(Reply::Value),
        "prompts/list" => super::upstream::prompts::list(app, &model::params_object(params)).await.map(Reply::Value),
        "prompts/get" => super::upstream::prompts::get(app, model::params_object(params)).await.map(Reply::Value),
        "completion/complete" => {
            super::upstream::prompts::complete(app, model::params_object(params)).await.map(Reply::Value)
        }
        // The 2026-07-28 discovery probe: this legacy endpoint answers method-not-found so that
        // modern clients fall back to initialize.
        _ => Err(RpcError::method_not_found(method)),
    };
    let body = match outcome {
        Ok(reply) => model::result_body(id, &reply),
        Err(error) => model::error_body(Some(id), &error),
    };
    Handled { body, session_id }
}

async fn initialize(app: &App, meta: &RequestMeta, params: Option<Params<'_>>) -> Result<(String, Value), RpcError> {
    let params = model::params_object(params);
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    let version = model::negotiate(requested);
    let client_name = params.get("clientInfo").and_then(|c| c.get("name")).and_then(Value::as_str).map(String::from);
    let declared = params
        .get("capabilities")
        .and_then(|c| c.get("experimental"))
        .and_then(|e| e.get(CHANNEL_CAPABILITY))
        .is_some();
    // Claude Code never declares the capability (only a server does): a Claude Code that tuicd
    // launched with the channels flag, asserting its terminal's identity, takes the pushes.
    let channels = declared
        || (client_name.as_deref() == Some("claude-code")
            && meta
                .tuic_session
                .as_deref()
                .and_then(|id| app.sessions.resolve_live(id).ok())
                .is_some_and(|session| app.agents.spawn_info(&session.id).is_some_and(|info| info.channels)));
    let collapse_tools = instructions::client_collapses(client_name.as_deref());
    let answers = super::client_requests::declared(params.get("capabilities"));
    let client = ClientInfo {
        tuic_session: meta.tuic_session.clone(),
        channels,
        collapse_tools,
        name: client_name.clone(),
        answers,
    };
    let (protocol_session, arrival) = app
        .mcp
        .protocol_sessions
        .initialize(meta.session_id.as_deref(), client)
        .map_err(|e| RpcError::new(model::code::INTERNAL_ERROR, e.to_string()))?;
    let presented = match &arrival {
        super::protocol_sessions::Arrival::Reconnected { presented } => Some(presented.as_str()),
        _ => None,
    };
    tracing::info!(
        source = "mcp_initialize",
        event = arrival.event(),
        session = %protocol_session,
        presented_session = presented,
        client = client_name.as_deref().unwrap_or("unknown"),
        requested_version = requested,
        protocol_version = version,
        tuic_session = meta.tuic_session.as_deref(),
        "MCP initialize"
    );
    if let Some(tuic_session) = &meta.tuic_session {
        crate::messaging_runtime::bind(app, &protocol_session, tuic_session);
    }
    let upstream_capabilities = super::upstream::capabilities(app).await;
    let native = instructions::render(&instructions::context(
        app,
        instructions::Connecting {
            client_name: client_name.as_deref(),
            client_collapse: collapse_tools,
            tuic_session: meta.tuic_session.as_deref(),
            reconnected: matches!(arrival, super::protocol_sessions::Arrival::Reconnected { .. }),
        },
    ));
    let collapsed_surface = collapse_tools || app.config.get().collapse_tools;
    let joined = instructions::join_upstreams(native, &super::upstream::instructions(app), collapsed_surface);
    let mut result = json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": {"listChanged": true},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
            "experimental": {CHANNEL_CAPABILITY: {}},
        },
        "serverInfo": {"name": "tuicd", "version": env!("CARGO_PKG_VERSION")},
        "instructions": joined,
    });
    for (capability, value) in upstream_capabilities {
        result["capabilities"][capability] = value;
    }
    Ok((protocol_session, result))
}

async fn tools_list(app: &App, meta: &RequestMeta, params: Option<Params<'_>>) -> Result<Value, RpcError> {
    if model::params_object(params).get("cursor").is_some_and(|c| !c.is_null()) {
        return Err(RpcError::invalid_params("tools/list: invalid cursor (tuicd lists every tool in one page)"));
    }
    let config = app.config.get();
    if collapsed(app, meta) {
        let mut listing = tools::listing(&tools::meta::collapsed(&config));
        super::upstream::state_call_tool_deadline(app, &mut listing);
        return Ok(listing);
    }
    let mut listing = tools::list(tools::registry(), &config);
    super::upstream::extend_listing(app, &mut listing).await;
    Ok(listing)
}

/// Whether this request's client gets the collapsed tool surface: by config, or for itself.
fn collapsed(app: &App, meta: &RequestMeta) -> bool {
    app.config.get().collapse_tools
        || meta.session_id.as_deref().is_some_and(|id| app.mcp.protocol_sessions.collapses_tools(id))
}

/// `tools/call`: the tool's result, or for a task-augmented call (`params.task`) a `CreateTaskResult`.
async fn tools_call(app: &App, meta: RequestMeta, id: &Value, params: CallParams<'_>) -> Result<Reply, RpcError> {
    let name = match params.name {
        Some(Member::Str(name)) => name,
        Some(Member::Other) => return Err(RpcError::invalid_params("tools/call: \"name\" must be a string")),
        None => return Err(RpcError::invalid_params("tools/call: \"name\" is required")),
    };
    if let Some(TaskParam::Invalid(task)) = &params.task {
        return Err(RpcError::invalid_params(format!(
            "tools/call: \"task\" must be an object with an optional \"ttl\" (milliseconds, a non-negative integer), not {task}"
        )));
    }
    if let (Some(protocol_session), Some(tuic_session)) = (&meta.session_id, &meta.tuic_session) {
        crate::messaging_runtime::refresh(app, protocol_session, tuic_session);
    }
    // Without upstreams no call is proxied: the check skips `collapsed`'s config read and
    // session lookup on every native call.
    if params.task.is_none()
        && !app.upstreams.is_empty()
        && let Some(target) = super::upstream::target(app, &name, &params.arguments, collapsed(app, &meta))
    {
        // An upstream tool can act anywhere (a filesystem, a browser): a token needs drive.
        meta.caller.grant.allows(crate::principals::Scope::Drive, None).map_err(|m| {
            RpcError::invalid_params(format!("tools/call {name}: an upstream tool acts outside tuicd's sessions: {m}"))
        })?;
        let to = super::upstream::CallerStream { session: meta.session_id.as_deref(), outbox: meta.outbox.clone() };
        return super::upstream::call(app, to, id, target, params.meta).await;
    }
    let bound = meta.session_id.as_deref().and_then(|s| app.mcp.protocol_sessions.identity(s));
    let registry = match tools::meta::NAMES.contains(&name.as_ref()) && collapsed(app, &meta) {
        true => tools::meta::meta_registry(),
        false => tools::registry(),
    };
    let ctx = CallContext {
        app: app.clone(),
        caller: meta.caller,
        tuic_session: meta.tuic_session.or(bound),
        mcp_session: meta.session_id,
    };
    // The requested ttl is not kept: every task lives `TASK_TTL`, which its answer states (the
    // specification lets the receiver override it).
    match params.task {
        Some(_) => super::tasks::call_as_task(app, ctx, &name, params.arguments).await.map(Reply::Value),
        None => tools::call(registry, ctx, &name, params.arguments).await.map(Reply::Tool),
    }
}
