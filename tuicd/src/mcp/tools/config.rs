//! The `config` tool (hidden by default): the daemon's config, read redacted and saved as a
//! partial deep merge (the code `PUT /config` runs), and the two prompt libraries in the config
//! dir ([`crate::config::prompts`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::action::{NoParams, action};
use super::{CallContext, ToolDef, ToolError, run_blocking};
use crate::config::apply::{SaveError, save as save_config};
use crate::config::merge::redacted;
use crate::config::prompts::{self, Library, PromptInfo};

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
    match save_config(&ctx.app, Value::Object(p.config)).await {
        Ok(next) => Ok(redacted(&next)),
        Err(SaveError::Invalid(message)) => Err(ToolError::new(format!("config action=save: {message}"))),
        Err(SaveError::Store(e)) => Err(ToolError::new(format!("config action=save: cannot write config.json: {e}"))),
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
