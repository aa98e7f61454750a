//! The `config` tool (hidden by default): the daemon's config, read redacted and saved as a
//! partial deep merge (the code `PUT /config` runs), and the two prompt libraries in the config
//! dir ([`crate::config::prompts`]).
//!
//! A save that changes a security setting (remote access, credentials, TLS, allowed origins and
//! hosts, which MCP tools exist: `mcp_server_enabled`, `disabled_native_tools`,
//! `ai_terminal_mcp_enabled`, `disabled_mcp_agents`) is a person's decision: it is asked through
//! the same confirmation as the `ai_terminal_*` writes, showing each change, and saved only when
//! confirmed and only as confirmed. Declined, unanswered or with nobody to answer, nothing changes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::action::{NoParams, action};
use super::{CallContext, ToolDef, ToolError, run_blocking};
use crate::config::AppConfig;
use crate::config::apply::{SaveError, apply_changes};
use crate::config::merge::{apply_patch, redacted};
use crate::config::prompts::{self, Library, PromptInfo};
use crate::http::Transport;
use crate::ui::ConfirmRequest;

pub(crate) const NAME: &str = "config";

pub(crate) const DESCRIPTION: &str = "tuicd's configuration (config.json) and prompt libraries. Secrets are never shown: a *_exists boolean says whether one is set.

- save: deep-merges `config` onto the live config; changed remote-access settings restart the TCP listener.
- list_ai_prompts: prompts tuic's own AI features use; list_prompts: the user's saved prompts for agents.";

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    description: DESCRIPTION,
    takes_action: true,
    actions: &[
        action!(NAME, "get", NoParams => sync get, loopback: false, blocks: false),
        action!(NAME, "save", Save => async save, loopback: true, blocks: false),
        action!(NAME, "list_ai_prompts", NoParams => async list_ai_prompts, loopback: false, blocks: true),
        action!(NAME, "load_ai_prompt", PromptRef => async load_ai_prompt, loopback: false, blocks: true),
        action!(NAME, "save_ai_prompt", PromptSave => async save_ai_prompt, loopback: true, blocks: true),
        action!(NAME, "list_prompts", NoParams => async list_prompts, loopback: false, blocks: true),
        action!(NAME, "load_prompt", PromptRef => async load_prompt, loopback: false, blocks: true),
        action!(NAME, "save_prompt", PromptSave => async save_prompt, loopback: true, blocks: true),
    ],
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Save {
    /// Config fields to save (a partial config object).
    config: Map<String, Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PromptRef {
    /// The prompt's name: letters, digits, '-', '_', '.' (at most 64).
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PromptSave {
    /// The prompt's name: letters, digits, '-', '_', '.' (at most 64).
    name: String,
    /// The prompt text (Markdown, at most 64 KiB); replaces a prompt of the same name.
    content: String,
}

fn get(ctx: &CallContext, _: NoParams) -> Result<Value, ToolError> {
    Ok(redacted(&ctx.app.config.get()))
}

async fn save(ctx: &CallContext, p: Save) -> Result<Value, ToolError> {
    let patch = Value::Object(p.config);
    // Validated whole before anyone is asked: a person never confirms a save that would fail.
    let current = ctx.app.config.get();
    let planned = apply_patch(&current, patch.clone()).map_err(|message| save_error(SaveError::Invalid(message)))?;
    let changes = security_changes(&current, &planned);
    if !changes.is_empty() {
        let request = ConfirmRequest {
            title: "Change tuicd's security settings?".into(),
            message: format!(
                "config action=save over MCP changes these security settings:\n{}\n\nOther settings it saves: {}.",
                changes.iter().map(|c| format!("- {c}")).collect::<Vec<_>>().join("\n"),
                other_changes(&current, &planned)
            ),
            requester: requester(ctx),
            kind: "config_security",
        };
        let outcome = ctx.app.ui.confirm(request).await;
        if !outcome.confirmed() {
            let reason = outcome.reason().unwrap_or("not confirmed");
            return Err(ToolError::new(format!(
                "config action=save refused: it changes security settings and {reason}; nothing was changed"
            ))
            .with("confirmed", false)
            .with("reason", reason)
            .with("security_changes", changes));
        }
    }
    let app = &ctx.app;
    let (previous, next) = app
        .config
        .update(|live| {
            let next = apply_patch(live, patch).map_err(SaveError::Invalid)?;
            crate::config::tls::check(&next.services.tls).map_err(SaveError::Invalid)?;
            // Saved only as confirmed: if the security settings moved while the person read the
            // dialog, this save would change something else than what they agreed to.
            if security_changes(live, &next) != changes {
                return Err(SaveError::Invalid(
                    "the security settings changed while the confirmation waited; nothing was changed, ask again"
                        .into(),
                ));
            }
            Ok::<_, SaveError>(next)
        })
        .map_err(save_error)?;
    apply_changes(app, &previous, &next).await;
    Ok(redacted(&next))
}

fn save_error(e: SaveError) -> ToolError {
    match e {
        SaveError::Invalid(message) => ToolError::new(format!("config action=save: {message}")),
        SaveError::Store(e) => ToolError::new(format!("config action=save: cannot write config.json: {e}")),
    }
}

/// The top-level keys whose every change is a security decision: who may connect and how, which
/// tools an MCP client gets, which program `POST /acp/connections` runs, and which agent CLI the
/// AI routes run headless.
const SECURITY_KEYS: [&str; 10] = [
    "services",
    "mcp_server_enabled",
    "disabled_native_tools",
    "ai_terminal_mcp_enabled",
    "ai_terminal_allow_network",
    "ai_terminal_unsandboxed",
    "disabled_mcp_agents",
    "ego_executable",
    "ego_args",
    "headless_agent",
];

/// Each security setting `next` changes, as a person reads it: `path: before -> after`. A
/// password hash is named, never shown.
fn security_changes(current: &AppConfig, next: &AppConfig) -> Vec<String> {
    let (before, after) = (to_json(current), to_json(next));
    let mut changes = Vec::new();
    for key in SECURITY_KEYS {
        diff(key, &before[key], &after[key], &mut changes);
    }
    changes
}

/// The other top-level keys `next` changes, named.
fn other_changes(current: &AppConfig, next: &AppConfig) -> String {
    let (before, after) = (to_json(current), to_json(next));
    let names: Vec<&str> = after
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| !SECURITY_KEYS.contains(&k.as_str()) && before.get(k.as_str()) != Some(*v))
        .map(|(k, _)| k.as_str())
        .collect();
    if names.is_empty() { "none".into() } else { names.join(", ") }
}

fn to_json(config: &AppConfig) -> Value {
    serde_json::to_value(config).unwrap_or(Value::Null)
}

fn diff(path: &str, before: &Value, after: &Value, out: &mut Vec<String>) {
    if before == after {
        return;
    }
    if let (Value::Object(b), Value::Object(a)) = (before, after) {
        let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            diff(&format!("{path}.{key}"), b.get(key).unwrap_or(&Value::Null), a.get(key).unwrap_or(&Value::Null), out);
        }
        return;
    }
    if path.ends_with("password_hash") {
        let set = |v: &Value| v.as_str().is_some_and(|s| !s.is_empty());
        let what = match (set(before), set(after)) {
            (_, false) => "removed (no password)",
            (false, true) => "set to a password hash the MCP client supplied",
            (true, true) => "replaced by a password hash the MCP client supplied",
        };
        out.push(format!("{path}: {what}"));
        return;
    }
    out.push(format!("{path}: {before} -> {after}"));
}

/// Who asks, in words a person reads.
fn requester(ctx: &CallContext) -> String {
    if let Some(session) = ctx.tuic_session.as_deref().and_then(|t| ctx.app.sessions.resolve(t).ok()) {
        return format!("agent {} ({})", session.alias, session.agent_type.as_deref().unwrap_or("shell"));
    }
    match ctx.caller.transport {
        Transport::Ipc => "an MCP client on this machine".into(),
        Transport::Tcp { peer, .. } => format!("an MCP client at {}", peer.ip()),
    }
}

#[derive(Debug, Serialize)]
struct Listed {
    prompts: Vec<PromptInfo>,
}

#[derive(Debug, Serialize)]
struct Loaded {
    name: String,
    content: String,
}

#[derive(Debug, Serialize)]
struct Saved {
    ok: bool,
    name: String,
    bytes: u64,
}

async fn list_in(ctx: &CallContext, library: Library, action: &'static str) -> Result<Listed, ToolError> {
    let dir = ctx.app.config_dir.clone();
    run_blocking(action, move || {
        prompts::list(&dir, library).map(|prompts| Listed { prompts }).map_err(|e| failed(action, e))
    })
    .await
}

async fn load_in(ctx: &CallContext, library: Library, action: &'static str, p: PromptRef) -> Result<Loaded, ToolError> {
    let dir = ctx.app.config_dir.clone();
    run_blocking(action, move || {
        let content = prompts::load(&dir, library, &p.name).map_err(|e| failed(action, e))?;
        Ok(Loaded { name: p.name, content })
    })
    .await
}

async fn save_in(ctx: &CallContext, library: Library, action: &'static str, p: PromptSave) -> Result<Saved, ToolError> {
    let dir = ctx.app.config_dir.clone();
    run_blocking(action, move || {
        let bytes = prompts::save(&dir, library, &p.name, &p.content).map_err(|e| failed(action, e))?;
        Ok(Saved { ok: true, name: p.name, bytes })
    })
    .await
}

fn failed(action: &str, e: prompts::PromptError) -> ToolError {
    ToolError::new(format!("{action}: {e}"))
}

async fn list_ai_prompts(ctx: &CallContext, _: NoParams) -> Result<Listed, ToolError> {
    list_in(ctx, Library::AiPrompts, "config action=list_ai_prompts").await
}

async fn load_ai_prompt(ctx: &CallContext, p: PromptRef) -> Result<Loaded, ToolError> {
    load_in(ctx, Library::AiPrompts, "config action=load_ai_prompt", p).await
}

async fn save_ai_prompt(ctx: &CallContext, p: PromptSave) -> Result<Saved, ToolError> {
    save_in(ctx, Library::AiPrompts, "config action=save_ai_prompt", p).await
}

async fn list_prompts(ctx: &CallContext, _: NoParams) -> Result<Listed, ToolError> {
    list_in(ctx, Library::Prompts, "config action=list_prompts").await
}

async fn load_prompt(ctx: &CallContext, p: PromptRef) -> Result<Loaded, ToolError> {
    load_in(ctx, Library::Prompts, "config action=load_prompt", p).await
}

async fn save_prompt(ctx: &CallContext, p: PromptSave) -> Result<Saved, ToolError> {
    save_in(ctx, Library::Prompts, "config action=save_prompt", p).await
}
