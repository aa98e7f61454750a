//! `/acp/connections/*`: launch an ACP agent (the `ego_executable` setting), drive its sessions,
//! and answer its questions. The stream is `acp_stream.rs`; the domain is [`crate::acp`].

use std::path::PathBuf;

use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::acp::AcpError;
use crate::acp::requests::{ConfigChange, EXTENSIONS, PermissionAnswer, SessionOp, prompt_blocks};
use crate::http::body::{json_response, ok_json, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::state::App;

impl From<AcpError> for ApiError {
    fn from(e: AcpError) -> Self {
        match e {
            AcpError::Launch(m) => ApiError::BadRequest(m),
            AcpError::Rpc { ref data, .. } => {
                // The agent's own details (`data`) are often the only useful words.
                let details = data.as_ref().map(|d| format!(" ({})", cap(&d.to_string(), 2000))).unwrap_or_default();
                ApiError::UpstreamFailed(format!("{e}{details}"))
            }
            AcpError::Protocol(_) | AcpError::Closed(_) => ApiError::UpstreamFailed(e.to_string()),
            AcpError::Timeout(m) => ApiError::Timeout(m),
            AcpError::Unsupported(_) => ApiError::Unsupported(e.to_string()),
            AcpError::NotFound(m) => ApiError::NotFound(m),
            AcpError::Conflict(m) => ApiError::Conflict(m),
            AcpError::Invalid(m) => ApiError::InvalidField(m),
        }
    }
}

fn cap(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// The body of a route that takes none: read (so the connection stays usable) and must be empty
/// or `{}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoBody {}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LaunchBody {
    /// The agent's working directory (and its sessions' default); tuicd's home when absent.
    #[serde(default)]
    cwd: Option<String>,
}

/// The command from the settings, read now: never from the request.
fn ego_command(app: &App) -> Result<(String, Vec<String>), ApiError> {
    let config = app.config.get();
    let program = config.ego_executable.trim().to_owned();
    if program.is_empty() {
        return Err(ApiError::Conflict(
            "no ACP agent is configured: set ego_executable (and ego_args) in the config, e.g. \
             {\"ego_executable\": \"claude-code-acp\"} or {\"ego_executable\": \"gemini\", \"ego_args\": [\"--experimental-acp\"]}"
                .into(),
        ));
    }
    Ok((program, config.ego_args.clone()))
}

fn absolute_dir(field: &str, path: &str) -> Result<PathBuf, ApiError> {
    let path = PathBuf::from(path);
    if !path.is_absolute() {
        return Err(ApiError::InvalidField(format!("{field}: {} is not an absolute path", path.display())));
    }
    if !path.is_dir() {
        return Err(ApiError::InvalidField(format!("{field}: {} is not a directory", path.display())));
    }
    Ok(path)
}

/// `POST /acp/connections`.
pub(crate) async fn launch(app: &App, req: Request) -> ApiResult {
    let body: LaunchBody = read_optional_json(req).await?;
    let (program, args) = ego_command(app)?;
    let cwd = match body.cwd {
        Some(cwd) => absolute_dir("cwd", &cwd)?,
        None => {
            std::env::var_os("HOME").map(PathBuf::from).filter(|p| p.is_dir()).unwrap_or_else(|| PathBuf::from("/"))
        }
    };
    let connection = app.acp.launch(program, args, cwd).await?;
    Ok(json_response(StatusCode::CREATED, &connection.snapshot()))
}

pub(crate) async fn list(app: &App) -> ApiResult {
    let connections: Vec<Value> = app.acp.list().iter().map(|c| c.snapshot()).collect();
    ok_json(&json!({"connections": connections}))
}

pub(crate) async fn get(app: &App, id: &str) -> ApiResult {
    ok_json(&app.acp.get(id)?.snapshot())
}

pub(crate) async fn disconnect(app: &App, id: &str, req: Request) -> ApiResult {
    let NoBody {} = read_optional_json(req).await?;
    app.acp.disconnect(id).await?;
    ok_json(&json!({"id": id, "closed": true}))
}

pub(crate) async fn kill(app: &App, id: &str, req: Request) -> ApiResult {
    let NoBody {} = read_optional_json(req).await?;
    let connection = app.acp.get(id)?;
    connection.kill_and_settle().await;
    ok_json(&connection.snapshot())
}

pub(crate) async fn reconnect(app: &App, id: &str, req: Request) -> ApiResult {
    let NoBody {} = read_optional_json(req).await?;
    let connection = app.acp.get(id)?;
    let (program, args) = ego_command(app)?;
    connection.reconnect(program, args).await?;
    ok_json(&connection.snapshot())
}

pub(crate) async fn sessions(app: &App, id: &str) -> ApiResult {
    ok_json(&app.acp.get(id)?.list_sessions().await?)
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewSession {
    #[serde(default)]
    cwd: Option<String>,
    /// ACP `McpServer` entries, handed to the agent as they are.
    #[serde(default)]
    mcp_servers: Option<Vec<Value>>,
}

pub(crate) async fn new_session(app: &App, id: &str, req: Request) -> ApiResult {
    let connection = app.acp.get(id)?;
    let body: NewSession = read_optional_json(req).await?;
    let cwd = match body.cwd {
        Some(cwd) => Some(absolute_dir("cwd", &cwd)?.display().to_string()),
        None => None,
    };
    let result = connection.new_session(cwd, Value::Array(body.mcp_servers.unwrap_or_default())).await?;
    Ok(json_response(StatusCode::CREATED, &result))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionCwd {
    #[serde(default)]
    cwd: Option<String>,
}

/// `POST .../sessions/:sid/{load,resume,fork,close}` (attach / detach) and
/// `.../{pause,resume-turn,compact}` (ego's extensions).
pub(crate) async fn session_action(app: &App, id: &str, session_id: &str, action: &str, req: Request) -> ApiResult {
    let connection = app.acp.get(id)?;
    if let Some((_, method)) = EXTENSIONS.iter().find(|(name, _)| *name == action) {
        return ok_json(&connection.extension(session_id, method).await?);
    }
    let Some(op) = SessionOp::parse(action) else {
        return Err(ApiError::NotFound(format!(
            "no session action {action:?}; expected prompt, cancel, config, load, resume, fork, close, pause, resume-turn or compact"
        )));
    };
    let body: SessionCwd = read_optional_json(req).await?;
    let cwd = match body.cwd {
        Some(cwd) => Some(absolute_dir("cwd", &cwd)?.display().to_string()),
        None => None,
    };
    let result = connection.session_op(session_id, op, cwd).await?;
    let status = if op == SessionOp::Fork { StatusCode::CREATED } else { StatusCode::OK };
    Ok(json_response(status, &result))
}

pub(crate) async fn delete_session(app: &App, id: &str, session_id: &str, req: Request) -> ApiResult {
    let NoBody {} = read_optional_json(req).await?;
    ok_json(&app.acp.get(id)?.session_op(session_id, SessionOp::Delete, None).await?)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Prompt {
    prompt: Value,
}

pub(crate) async fn prompt(app: &App, id: &str, session_id: &str, req: Request) -> ApiResult {
    let connection = app.acp.get(id)?;
    let body: Prompt = read_json(req).await?;
    let blocks = prompt_blocks(body.prompt)?;
    let (request_id, sequence) = connection.prompt(session_id, blocks).await?;
    Ok(json_response(StatusCode::ACCEPTED, &json!({"request_id": request_id, "sequence": sequence, "sent": true})))
}

pub(crate) async fn cancel(app: &App, id: &str, session_id: &str, req: Request) -> ApiResult {
    let NoBody {} = read_optional_json(req).await?;
    ok_json(&app.acp.get(id)?.cancel(session_id)?)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    config_id: Option<String>,
    #[serde(default)]
    value: Option<Value>,
    #[serde(default)]
    mode_id: Option<String>,
}

pub(crate) async fn config(app: &App, id: &str, session_id: &str, req: Request) -> ApiResult {
    let connection = app.acp.get(id)?;
    let body: Config = read_json(req).await?;
    let change = match body {
        Config { config_id: Some(config_id), value: Some(value), mode_id: None } => {
            ConfigChange::Option { config_id, value }
        }
        Config { config_id: None, value: None, mode_id: Some(mode) } => ConfigChange::Mode(mode),
        Config { config_id: Some(_), value: None, .. } => {
            return Err(ApiError::InvalidField("value: required with config_id".into()));
        }
        _ => {
            return Err(ApiError::InvalidField(
                "expected {\"config_id\": ..., \"value\": ...} or {\"mode_id\": ...}".into(),
            ));
        }
    };
    ok_json(&connection.configure(session_id, change).await?)
}

pub(crate) async fn interactions(app: &App, id: &str) -> ApiResult {
    ok_json(&json!({"interactions": app.acp.get(id)?.interactions()}))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionBody {
    #[serde(default)]
    option_id: Option<String>,
    #[serde(default)]
    cancelled: Option<bool>,
}

/// `POST /acp/connections/:cid/permissions/:rid/response`: only a person answers.
pub(crate) async fn answer_permission(
    app: &App,
    caller: &Caller,
    id: &str,
    request_id: &str,
    req: Request,
) -> ApiResult {
    super::ui::require_person(app, caller).await?;
    let connection = app.acp.get(id)?;
    let body: PermissionBody = read_json(req).await?;
    let answer = match body {
        PermissionBody { option_id: Some(option), cancelled: None | Some(false) } => PermissionAnswer::Selected(option),
        PermissionBody { option_id: None, cancelled: Some(true) } => PermissionAnswer::Cancelled,
        _ => {
            return Err(ApiError::InvalidField(
                "expected {\"option_id\": \"<one of the request's options>\"} or {\"cancelled\": true}".into(),
            ));
        }
    };
    ok_json(&connection.answer_permission(request_id, answer)?)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ElicitationBody {
    action: String,
    #[serde(default)]
    content: Option<Value>,
}

pub(crate) async fn answer_elicitation(
    app: &App,
    caller: &Caller,
    id: &str,
    request_id: &str,
    req: Request,
) -> ApiResult {
    super::ui::require_person(app, caller).await?;
    let connection = app.acp.get(id)?;
    let body: ElicitationBody = read_json(req).await?;
    ok_json(&connection.answer_elicitation(request_id, &body.action, body.content)?)
}

/// A JSON body that may be absent (no bytes): the type's defaults then.
async fn read_optional_json<T: serde::de::DeserializeOwned + Default>(req: Request) -> Result<T, ApiError> {
    let bytes = crate::http::body::read_bytes(req).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    crate::http::body::parse_json(&bytes)
}
