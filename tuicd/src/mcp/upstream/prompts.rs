//! Upstream prompts and completions on tuicd's own `/mcp`: `prompts/list` with names
//! `{upstream}__{prompt}`, `prompts/get` and `completion/complete` routed by the (upstream,
//! prompt) pair each name was listed with (never by splitting the name), like tools.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::resources::{self, list_all, no_cursor};
use super::{SEPARATOR, forward_error};
use crate::lock::Recover;
use crate::mcp::model::RpcError;
use crate::state::App;

/// One upstream prompt as tuicd lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pair {
    pub upstream: String,
    pub prompt: String,
}

/// Lists every upstream's prompts and keeps the names' pairs for [`resolve`]. A name two pairs
/// would both be listed under (`c` + `_x` and `c_` + `x`) is listed for neither, with a warning.
async fn aggregate(app: &App) -> Vec<Value> {
    let prompts = list_all(app, "prompts", "prompts/list", "prompts", |upstream, prompt| {
        prompt[UPSTREAM_TAG] = Value::String(upstream.to_owned());
    })
    .await;
    let mut pairs: Vec<(String, Pair, Value)> = Vec::new();
    for mut prompt in prompts {
        let Some(Value::String(upstream)) = prompt.as_object_mut().and_then(|p| p.remove(UPSTREAM_TAG)) else {
            continue;
        };
        let Some(name) = prompt.get("name").and_then(Value::as_str).map(str::to_owned) else { continue };
        let qualified = format!("{upstream}{SEPARATOR}{name}");
        prompt["name"] = Value::String(qualified.clone());
        pairs.push((qualified, Pair { upstream, prompt: name }, prompt));
    }
    let mut claims: HashMap<String, usize> = HashMap::new();
    for (qualified, _, _) in &pairs {
        *claims.entry(qualified.clone()).or_default() += 1;
    }
    let mut map = HashMap::new();
    let mut listed = Vec::new();
    for (qualified, pair, prompt) in pairs {
        if claims[&qualified] > 1 {
            tracing::warn!(source = "upstream", upstream = %pair.upstream, prompt = %pair.prompt,
                "prompt skipped: another upstream prompt would be listed as {qualified:?} too");
            continue;
        }
        map.insert(qualified, pair);
        listed.push(prompt);
    }
    *app.mcp.upstream.prompts.locked() = map;
    listed
}

/// Marks each listed prompt with its upstream until [`aggregate`] names it (`\0` is in no
/// upstream's own key).
const UPSTREAM_TAG: &str = "\u{0}upstream";

/// `prompts/list`: every upstream's prompts, named `{upstream}__{prompt}`.
pub(crate) async fn list(app: &App, params: &Map<String, Value>) -> Result<Value, RpcError> {
    no_cursor("prompts/list", params)?;
    Ok(json!({"prompts": aggregate(app).await}))
}

/// The pair `name` was listed with; the listing is refreshed once when the name is not known
/// (a client may get a prompt it never listed).
async fn resolve(app: &App, method: &str, name: &str) -> Result<Pair, RpcError> {
    if let Some(pair) = app.mcp.upstream.prompts.locked().get(name).cloned() {
        return Ok(pair);
    }
    aggregate(app).await;
    let prompts = app.mcp.upstream.prompts.locked();
    if let Some(pair) = prompts.get(name) {
        return Ok(pair.clone());
    }
    let mut valid: Vec<&str> = prompts.keys().map(String::as_str).collect();
    valid.sort_unstable();
    Err(RpcError::invalid_params(format!("{method}: unknown prompt {name:?}; valid prompts: {}", valid.join(", "))))
}

/// `prompts/get` of a listed name, sent to its upstream under the upstream's own name; the
/// `resource_link`s of its messages namespaced.
pub(crate) async fn get(app: &App, mut params: Map<String, Value>) -> Result<Value, RpcError> {
    let name = match params.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(_) => return Err(RpcError::invalid_params("prompts/get: \"name\" must be a string")),
        None => return Err(RpcError::invalid_params("prompts/get: \"name\" is required")),
    };
    if params.get("arguments").is_some_and(|a| !a.is_object() && !a.is_null()) {
        return Err(RpcError::invalid_params("prompts/get: \"arguments\" must be an object of strings"));
    }
    let pair = resolve(app, "prompts/get", &name).await?;
    params.insert("name".into(), Value::String(pair.prompt));
    let mut result =
        app.upstreams.request(&pair.upstream, "prompts/get", Value::Object(params)).await.map_err(forward_error)?;
    for message in result.get_mut("messages").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(content) = message.get_mut("content") {
            resources::rewrite_links(&pair.upstream, std::slice::from_mut(content));
        }
    }
    Ok(result)
}

/// `completion/complete` for a listed prompt (`ref/prompt`) or a namespaced resource template
/// (`ref/resource`), sent to its upstream with the upstream's own name or URI.
pub(crate) async fn complete(app: &App, mut params: Map<String, Value>) -> Result<Value, RpcError> {
    const METHOD: &str = "completion/complete";
    if !params.get("argument").is_some_and(|a| a.get("name").is_some_and(Value::is_string)) {
        return Err(RpcError::invalid_params(format!(
            "{METHOD}: \"argument\" must be an object with a string \"name\" and \"value\""
        )));
    }
    let Some(Value::Object(reference)) = params.get_mut("ref") else {
        return Err(RpcError::invalid_params(format!("{METHOD}: \"ref\" must be an object")));
    };
    let upstream = match (reference.get("type").and_then(Value::as_str), reference.get("name"), reference.get("uri")) {
        (Some("ref/prompt"), Some(Value::String(name)), _) => {
            let name = name.clone();
            let pair = resolve(app, METHOD, &name).await?;
            reference.insert("name".into(), Value::String(pair.prompt));
            pair.upstream
        }
        (Some("ref/resource"), _, Some(Value::String(uri))) => {
            let (upstream, original) = resources::route(app, METHOD, uri)?;
            reference.insert("uri".into(), Value::String(original));
            upstream
        }
        (kind, _, _) => {
            return Err(RpcError::invalid_params(format!(
                "{METHOD}: \"ref\" must be {{\"type\":\"ref/prompt\",\"name\"}} or {{\"type\":\"ref/resource\",\"uri\"}}, \
                 not type {kind:?}"
            )));
        }
    };
    app.upstreams.request(&upstream, METHOD, Value::Object(params)).await.map_err(forward_error)
}
