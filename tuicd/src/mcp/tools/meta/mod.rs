//! Lazy tool discovery (`collapse_tools`, and per session for Grok): `tools/list` shrinks to
//! `search_tools`, `get_tool_schema` and `call_tool` (plus `progress` when enabled), and the agent
//! fetches the schema it needs on demand.
//!
//! Discovery no longer gates dispatch here, so every meta path re-applies the filters the full
//! listing applies: the index holds enabled tools only, and `call_tool` goes through the same
//! [`super::call`] that refuses a disabled tool. Meta names are refused by search and schema, and
//! `call_tool` never calls a meta tool, itself included.

mod bm25;
mod index;
mod keywords;
#[cfg(test)]
mod search_fixture;
#[cfg(test)]
mod search_requests;
#[cfg(test)]
mod tests;

use std::sync::{Arc, RwLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::action::action;
use super::{Answer, CallContext, ToolDef, ToolError, enabled, progress, registry};
use crate::config::AppConfig;
use crate::lock::RecoverRw;
pub(crate) use index::{ToolDoc, ToolIndex};

pub(crate) const SEARCH_TOOLS: &str = "search_tools";
pub(crate) const GET_TOOL_SCHEMA: &str = "get_tool_schema";
pub(crate) const CALL_TOOL: &str = "call_tool";
/// The meta tools' names: never searchable, never a schema to fetch, never a `call_tool` target.
pub(crate) const NAMES: [&str; 3] = [SEARCH_TOOLS, GET_TOOL_SCHEMA, CALL_TOOL];

/// How many results `search_tools` answers when `limit` is omitted, and the most it answers.
const SEARCH_LIMIT_DEFAULT: usize = 5;
const SEARCH_LIMIT_MAX: usize = 100;

static SEARCH: ToolDef = ToolDef {
    name: SEARCH_TOOLS,
    description: "Finds tools, with their matching actions, for what you want to do.",
    takes_action: false,
    actions: &[action!(SEARCH_TOOLS, "search", Search => sync find, loopback: false, blocks: false)],
};

static SCHEMA: ToolDef = ToolDef {
    name: GET_TOOL_SCHEMA,
    description: "A tool's description and inputSchema.",
    takes_action: false,
    actions: &[action!(GET_TOOL_SCHEMA, "schema", Named => sync fetch_schema, loopback: false, blocks: false)],
};

static CALL: ToolDef = ToolDef {
    name: CALL_TOOL,
    description: "Runs a tool and answers what it answers.",
    takes_action: false,
    actions: &[action!(CALL_TOOL, "call", Call => async call_target, loopback: false, blocks: true)],
};

/// The meta tools, in `tools/list` order.
pub(crate) fn meta_registry() -> &'static [&'static ToolDef] {
    static META: &[&ToolDef] = &[&SEARCH, &SCHEMA, &CALL];
    META
}

/// The collapsed `tools/list` tools: the meta tools, then `progress` when it is enabled.
pub(crate) fn collapsed<'a>(config: &AppConfig) -> Vec<&'a ToolDef> {
    let mut tools: Vec<&ToolDef> = meta_registry().to_vec();
    tools.extend(enabled(registry(), config).into_iter().filter(|t| t.name == progress::NAME));
    tools
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Search {
    /// What you want to do.
    pub query: String,
    /// Most results (default 5, at most 100).
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Named {
    /// A name search_tools found.
    pub tool_name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Call {
    /// A name search_tools found.
    pub tool_name: String,
    /// As its inputSchema says.
    pub arguments: Option<Map<String, Value>>,
}

#[derive(Debug, Serialize)]
struct Found {
    results: Vec<index::Hit>,
    count: usize,
}

fn find(ctx: &CallContext, p: Search) -> Result<Found, ToolError> {
    let limit = p.limit.unwrap_or(SEARCH_LIMIT_DEFAULT);
    if !(1..=SEARCH_LIMIT_MAX).contains(&limit) {
        return Err(ToolError::new(format!("search_tools: limit must be 1..={SEARCH_LIMIT_MAX}, not {limit}")));
    }
    if p.query.trim().is_empty() {
        return Err(ToolError::new(
            "search_tools: query is empty; say what you want to do, e.g. \"read terminal output\"",
        ));
    }
    if let Some(meta) = NAMES.iter().find(|n| p.query.trim() == **n) {
        return Err(refused_meta(SEARCH_TOOLS, meta));
    }
    let results = ctx.app.mcp.search_index.get(&ctx.app.config.get()).search(&p.query, limit);
    Ok(Found { count: results.len(), results })
}

fn fetch_schema(ctx: &CallContext, p: Named) -> Result<Value, ToolError> {
    if let Some(tool) = ctx.app.mcp.upstream.find(&p.tool_name) {
        // An upstream tool's description and schema, as the upstream listed them.
        let mut answer = json!({"name": tool.qualified});
        for key in ["description", "inputSchema", "outputSchema", "annotations"] {
            if let Some(value) = tool.value.get(key) {
                answer[key] = value.clone();
            }
        }
        return Ok(answer);
    }
    let tool = target(ctx, GET_TOOL_SCHEMA, &p.tool_name)?;
    let mut answer = json!({"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema()});
    if super::supports_tasks(tool.name) {
        answer["execution"] = json!({"taskSupport": "optional"});
    }
    Ok(answer)
}

async fn call_target(ctx: &CallContext, p: Call) -> Result<Answer, ToolError> {
    if NAMES.contains(&p.tool_name.as_str()) {
        return Err(refused_meta(CALL_TOOL, &p.tool_name));
    }
    let arguments = p.arguments.map(Value::Object);
    match super::call(registry(), ctx.clone(), &p.tool_name, arguments).await {
        Ok(result) => Ok(Answer::Result(result)),
        // An unknown or disabled target is this call's failure, worded by the dispatcher.
        Err(refused) => Err(ToolError::new(format!("call_tool: {}", refused.message))),
    }
}

/// The enabled native tool `name`, or the error naming what can be asked for.
fn target(ctx: &CallContext, meta: &str, name: &str) -> Result<&'static ToolDef, ToolError> {
    if NAMES.contains(&name) {
        return Err(refused_meta(meta, name));
    }
    let config = ctx.app.config.get();
    let visible = enabled(registry(), &config);
    match visible.iter().find(|t| t.name == name) {
        Some(tool) => Ok(tool),
        None if registry().iter().any(|t| t.name == name) => Err(ToolError::new(format!(
            "{meta}: tool '{name}' is disabled by configuration (disabled_native_tools or progress_tracking)"
        ))),
        None => {
            let names: Vec<&str> = visible.iter().map(|t| t.name).collect();
            Err(ToolError::new(format!("{meta}: unknown tool '{name}'. Valid tools: {}", names.join(", "))))
        }
    }
}

fn refused_meta(meta: &str, name: &str) -> ToolError {
    ToolError::new(format!(
        "{meta}: '{name}' is a meta tool, not a tool it can reach; use search_tools to find a tool such as session"
    ))
}

/// The search index over the enabled tools, rebuilt whenever that set changes.
#[derive(Debug, Default)]
pub(crate) struct SearchIndex {
    current: RwLock<Option<Arc<ToolIndex>>>,
    /// The upstream tools' documents (see [`crate::mcp::upstream`]), indexed after the native ones.
    upstream: RwLock<Arc<Vec<ToolDoc>>>,
}

impl SearchIndex {
    /// The index for `config`'s tool set: the one held when it covers the same tools, else a new one.
    pub(crate) fn get(&self, config: &AppConfig) -> Arc<ToolIndex> {
        let upstream = self.upstream.read_locked().clone();
        let mut names: Vec<&str> = enabled(registry(), config).iter().map(|t| t.name).collect();
        names.extend(upstream.iter().map(|d| d.name.as_str()));
        if let Some(index) = self.current.read_locked().as_ref()
            && index.names() == names
        {
            return index.clone();
        }
        self.rebuild(config)
    }

    /// Builds the index for `config`'s tool set and keeps it.
    pub(crate) fn rebuild(&self, config: &AppConfig) -> Arc<ToolIndex> {
        let mut docs = documents(config);
        docs.extend(self.upstream.read_locked().iter().cloned());
        let index = Arc::new(ToolIndex::build(docs));
        *self.current.write_locked() = Some(index.clone());
        index
    }

    /// Replaces the upstream tools' documents and rebuilds the index.
    pub(crate) fn set_upstream(&self, docs: Vec<ToolDoc>, config: &AppConfig) {
        *self.upstream.write_locked() = Arc::new(docs);
        self.rebuild(config);
    }
}

/// What the index covers: every enabled native tool (upstream tools join here later).
fn documents(config: &AppConfig) -> Vec<ToolDoc> {
    enabled(registry(), config).into_iter().map(ToolDoc::native).collect()
}
