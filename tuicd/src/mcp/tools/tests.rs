//! Framework tests with tools defined here: dispatch, errors, panics and disabled tools.

use serde_json::{Value, json};

use super::action::{NoParams, action};
use super::*;
use crate::config::ConfigStore;
use crate::state::Shared;

pub(crate) fn test_app(dir: &std::path::Path) -> App {
    let (_tx, shutdown) = tokio::sync::watch::channel(false);
    let config = ConfigStore::open(dir).unwrap();
    App::new(Shared::new(config, dir.to_owned(), dir.join("mcp.sock"), shutdown, crate::limits::REQUEST_TIMEOUT, None))
}

fn ctx(app: &App) -> CallContext {
    CallContext { app: app.clone(), caller: Caller::ipc(), mcp_session: None, tuic_session: None }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Say {
    text: String,
}

#[derive(serde::Serialize)]
struct Said {
    said: String,
}

fn say(_: &CallContext, p: Say) -> Result<Said, ToolError> {
    Ok(Said { said: p.text })
}

fn boom(_: &CallContext, _: NoParams) -> Result<Value, ToolError> {
    panic!("kaboom")
}

async fn block_boom(_: &CallContext, _: NoParams) -> Result<Value, ToolError> {
    run_blocking("echo action=block_boom", || -> Result<Value, ToolError> { panic!("blocking kaboom") }).await
}

static ECHO: ToolDef = ToolDef {
    name: "echo",
    description: "Echo.",
    takes_action: true,
    actions: &[
        action!("echo", "say", Say => sync say, loopback: false, blocks: false),
        action!("echo", "boom", NoParams => sync boom, loopback: false, blocks: false),
        action!("echo", "block_boom", NoParams => async block_boom, loopback: false, blocks: true),
    ],
};
static CONFIG_TOOL: ToolDef = ToolDef { name: "config", description: "Hidden.", takes_action: true, actions: &[] };
static REGISTRY: &[&ToolDef] = &[&ECHO, &CONFIG_TOOL];

/// [`super::call`], its result as the content envelope `Value`.
pub(crate) async fn call(
    registry: &[&'static ToolDef],
    ctx: CallContext,
    name: &str,
    arguments: Option<Value>,
) -> Result<Value, RpcError> {
    super::call(registry, ctx, name, arguments).await.map(ToolText::into_value)
}

fn text(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn a_successful_call_is_compact_json_in_the_content_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let app = test_app(dir.path());
    let result = call(REGISTRY, ctx(&app), "echo", Some(json!({"action": "say", "text": "hi"}))).await.unwrap();
    assert_eq!(result["isError"], false);
    assert_eq!(result["content"][0]["text"], r#"{"said":"hi"}"#);
}

#[tokio::test]
async fn unknown_actions_and_bad_params_are_tool_errors_that_say_what_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let app = test_app(dir.path());
    let result = call(REGISTRY, ctx(&app), "echo", Some(json!({"action": "shout"}))).await.unwrap();
    assert_eq!(result["isError"], true);
    let error = text(&result)["error"].as_str().unwrap().to_owned();
    assert!(error.contains("Unknown action 'shout'") && error.contains("say, boom, block_boom"), "{error}");
    let result = call(REGISTRY, ctx(&app), "echo", Some(json!({"action": "say", "text": 5}))).await.unwrap();
    let error = text(&result)["error"].as_str().unwrap().to_owned();
    assert!(error.contains("text") && error.contains("expected a string"), "{error}");
    let result = call(REGISTRY, ctx(&app), "echo", Some(json!({"action": "say", "text": "a", "x": 1}))).await.unwrap();
    assert!(text(&result)["error"].as_str().unwrap().contains("unknown field `x`"));
}

#[tokio::test]
async fn a_panicking_handler_becomes_a_tool_error() {
    let dir = tempfile::tempdir().unwrap();
    let app = test_app(dir.path());
    for action in ["boom", "block_boom"] {
        let result = call(REGISTRY, ctx(&app), "echo", Some(json!({"action": action}))).await.unwrap();
        assert_eq!(result["isError"], true, "{action}");
        assert!(text(&result)["error"].as_str().unwrap().contains("kaboom"), "{result}");
    }
}

#[tokio::test]
async fn unknown_and_disabled_tools_are_protocol_errors() {
    let dir = tempfile::tempdir().unwrap();
    let app = test_app(dir.path());
    let err = call(REGISTRY, ctx(&app), "nope", None).await.unwrap_err();
    assert_eq!(err.code, crate::mcp::model::code::INVALID_PARAMS);
    assert!(err.message.contains("Valid tools: echo"), "{}", err.message);
    let err = call(REGISTRY, ctx(&app), "config", None).await.unwrap_err();
    assert!(err.message.contains("disabled by configuration"), "{}", err.message);
    let listed = list(REGISTRY, &app.config.get());
    assert_eq!(listed["tools"].as_array().unwrap().len(), 1, "config is hidden by default");
}

/// `docs/mcp-tools.json` is the checked-in snapshot of every tool's name, description and
/// schema. A change must be deliberate: rerun with `UPDATE_MCP_SNAPSHOT=1` and commit the file.
#[test]
fn tool_schemas_match_the_checked_in_snapshot() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/mcp-tools.json");
    let mut config = crate::config::AppConfig::default();
    config.disabled_native_tools.clear();
    let current = list(registry(), &config);
    let rendered = serde_json::to_string_pretty(&current).unwrap() + "\n";
    if std::env::var_os("UPDATE_MCP_SNAPSHOT").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        stored == rendered,
        "tool schemas drifted from docs/mcp-tools.json; if the change is intended, run \
         UPDATE_MCP_SNAPSHOT=1 cargo test -p tuicd --lib tool_schemas and commit the file"
    );
}

#[tokio::test]
async fn loopback_only_session_actions_are_refused_to_remote_callers() {
    let dir = tempfile::tempdir().unwrap();
    let app = test_app(dir.path());
    let remote = Caller::tcp("10.1.2.3:4000".parse().unwrap(), true);
    let ctx = CallContext { app: app.clone(), caller: remote, mcp_session: None, tuic_session: None };
    for action in ["create", "input", "kill", "close", "pause", "resume"] {
        let result = call(registry(), ctx.clone(), "session", Some(json!({"action": action, "session_id": "x"}))).await;
        let result = result.unwrap();
        assert_eq!(result["isError"], true, "{action}");
        let error = text(&result)["error"].as_str().unwrap().to_owned();
        assert!(error.contains(&format!("session action={action}")) && error.contains("loopback"), "{error}");
    }
    let listed = call(registry(), ctx, "session", Some(json!({"action": "list"}))).await.unwrap();
    assert_eq!(listed["isError"], false, "reads stay open to authenticated remote callers");
}

#[tokio::test]
async fn a_tab_from_remote_access_opens_only_http_urls() {
    let dir = tempfile::tempdir().unwrap();
    let app = test_app(dir.path());
    let as_caller = |caller: Caller| CallContext { app: app.clone(), caller, mcp_session: None, tuic_session: None };
    let tab = |url: &str| Some(json!({"action": "tab", "title": "t", "url": url}));
    let mut events = app.events.subscribe(None).live;
    for caller in
        [Caller::tcp("10.1.2.3:4000".parse().unwrap(), true), Caller::tcp("127.0.0.1:4000".parse().unwrap(), false)]
    {
        for url in ["file:///etc/passwd", "FILE:///etc/passwd", "tuic://open//etc/passwd", "tuic://edit//etc/hosts"] {
            let result = call(registry(), as_caller(caller.clone()), "ui", tab(url)).await.unwrap();
            assert_eq!(result["isError"], true, "{url}");
            let error = text(&result)["error"].as_str().unwrap().to_owned();
            assert!(error.contains("ui action=tab") && error.contains("only http:// and https://"), "{error}");
        }
        let https = call(registry(), as_caller(caller.clone()), "ui", tab("https://example.com/r")).await.unwrap();
        assert_eq!(https["isError"], false, "{https}");
    }
    let local = call(registry(), as_caller(Caller::ipc()), "ui", tab("file:///tmp/report.html")).await.unwrap();
    assert_eq!(local["isError"], false, "a caller on the socket still opens file:// tabs: {local}");
    let mut tabs = Vec::new();
    while let Ok(event) = events.try_recv() {
        if event.kind == proto::events::UI_TAB {
            tabs.push(event.data.to_string());
        }
    }
    assert_eq!(tabs.len(), 3, "only the three accepted tabs were published: {tabs:?}");
}

#[tokio::test]
async fn a_remote_caller_lists_the_worktrees_of_registered_repositories_only() {
    let dir = tempfile::tempdir().unwrap();
    let app = test_app(dir.path());
    let repo = dir.path().join("private-repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = std::process::Command::new("git").args(["init", "-q", "-b", "main"]).arg(&repo).status().unwrap();
    assert!(git.success());
    let list = Some(json!({"action": "worktree_list", "path": repo}));
    let remote = CallContext {
        app: app.clone(),
        caller: Caller::tcp("10.1.2.3:4000".parse().unwrap(), true),
        mcp_session: None,
        tuic_session: None,
    };
    let refused = call(registry(), remote, "repo", list.clone()).await.unwrap();
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text(&refused)["error"].as_str().unwrap().contains("not a registered repository"), "{refused}");
    let local = CallContext { app: app.clone(), caller: Caller::ipc(), mcp_session: None, tuic_session: None };
    let listed = call(registry(), local, "repo", list).await.unwrap();
    assert_eq!(listed["isError"], false, "a caller on the socket reads any repository: {listed}");
}

#[test]
fn the_config_layers_list_of_native_tools_is_the_registrys() {
    let names: Vec<&str> = super::registry().iter().map(|t| t.name).collect();
    assert_eq!(names, crate::config::model::NATIVE_TOOL_NAMES, "disabled_native_tools is checked against this list");
}
