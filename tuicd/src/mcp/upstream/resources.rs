//! Upstream resources and resource templates on tuicd's own `/mcp`: `resources/list`,
//! `resources/templates/list` and `resources/read`, each URI namespaced so a read goes back to
//! the upstream that listed it, and the `resource_link`s of upstream results rewritten the same way.

use serde_json::{Map, Value, json};

use super::forward_error;
use crate::mcp::model::RpcError;
use crate::state::App;

/// The scheme of a namespaced URI: `tuic+upstream://<upstream>/<the upstream's URI, verbatim>`.
/// Verbatim, not percent-encoded, so a template's `{variables}` stay expandable by the client;
/// reversible because an upstream's name never holds a `/` (`[a-z0-9_-]+`).
pub(crate) const SCHEME: &str = "tuic+upstream://";

/// The most pages of one upstream's listing followed.
const LIST_PAGES: usize = 20;

/// `uri` of upstream `upstream` as tuicd lists it.
pub(crate) fn namespaced(upstream: &str, uri: &str) -> String {
    format!("{SCHEME}{upstream}/{uri}")
}

/// The (upstream, upstream's own URI) a namespaced URI names; `None` for any other URI.
pub(crate) fn parse(uri: &str) -> Option<(&str, &str)> {
    let (upstream, original) = uri.strip_prefix(SCHEME)?.split_once('/')?;
    (!upstream.is_empty() && !original.is_empty()).then_some((upstream, original))
}

/// Every page of `method` (which lists under `key`) from each ready upstream that declares
/// `capability`, each item passed through `rewrite` with its upstream's name. An upstream that
/// fails to list is left out with a warning, so one broken upstream does not hide the others.
pub(super) async fn list_all(
    app: &App,
    capability: &str,
    method: &str,
    key: &str,
    rewrite: impl Fn(&str, &mut Value),
) -> Vec<Value> {
    if app.upstreams.is_empty() {
        return Vec::new();
    }
    app.upstreams.settle(crate::limits::UPSTREAM_SETTLE).await;
    let served: Vec<String> =
        app.upstreams.served().into_iter().filter(|s| s.declares(capability)).map(|s| s.name).collect();
    let pages = served.iter().map(|name| list_one(app, name, method, key));
    let mut out = Vec::new();
    for (name, listed) in served.iter().zip(futures_util::future::join_all(pages).await) {
        match listed {
            Ok(items) => out.extend(items.into_iter().map(|mut item| {
                rewrite(name, &mut item);
                item
            })),
            Err(error) => {
                tracing::warn!(source = "upstream", upstream = %name, method, error = %error, "listing failed; left out")
            }
        }
    }
    out
}

async fn list_one(
    app: &App,
    upstream: &str,
    method: &str,
    key: &str,
) -> Result<Vec<Value>, crate::proxy::registry::CallError> {
    let mut items = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..LIST_PAGES {
        let params = cursor.take().map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let mut result = app.upstreams.request(upstream, method, params).await?;
        if let Some(Value::Array(page)) = result.get_mut(key).map(Value::take) {
            items.extend(page.into_iter().filter(Value::is_object));
        }
        cursor = result.get("nextCursor").filter(|c| !c.is_null()).cloned();
        if cursor.is_none() {
            break;
        }
    }
    Ok(items)
}

/// Refuses a `cursor`: tuicd lists everything in one page.
pub(super) fn no_cursor(method: &str, params: &Map<String, Value>) -> Result<(), RpcError> {
    match params.get("cursor").is_some_and(|c| !c.is_null()) {
        true => Err(RpcError::invalid_params(format!("{method}: invalid cursor (tuicd lists everything in one page)"))),
        false => Ok(()),
    }
}

/// `resources/list`: every upstream's resources, URIs namespaced.
pub(crate) async fn list(app: &App, params: &Map<String, Value>) -> Result<Value, RpcError> {
    no_cursor("resources/list", params)?;
    let resources = list_all(app, "resources", "resources/list", "resources", |name, item| {
        rewrite_field(name, item, "uri");
    })
    .await;
    Ok(json!({"resources": resources}))
}

/// `resources/templates/list`: every upstream's templates, `uriTemplate`s namespaced.
pub(crate) async fn templates(app: &App, params: &Map<String, Value>) -> Result<Value, RpcError> {
    no_cursor("resources/templates/list", params)?;
    let templates = list_all(app, "resources", "resources/templates/list", "resourceTemplates", |name, item| {
        rewrite_field(name, item, "uriTemplate");
    })
    .await;
    Ok(json!({"resourceTemplates": templates}))
}

/// `resources/read` of a namespaced URI: sent to its upstream with the upstream's own URI; the
/// contents' URIs namespaced again.
pub(crate) async fn read(app: &App, mut params: Map<String, Value>) -> Result<Value, RpcError> {
    let uri = match params.get("uri") {
        Some(Value::String(uri)) => uri.clone(),
        Some(_) => return Err(RpcError::invalid_params("resources/read: \"uri\" must be a string")),
        None => return Err(RpcError::invalid_params("resources/read: \"uri\" is required")),
    };
    let (upstream, original) = route(app, "resources/read", &uri)?;
    params.insert("uri".into(), Value::String(original));
    let mut result =
        app.upstreams.request(&upstream, "resources/read", Value::Object(params)).await.map_err(forward_error)?;
    if let Some(contents) = result.get_mut("contents").and_then(Value::as_array_mut) {
        for content in contents {
            rewrite_field(&upstream, content, "uri");
        }
    }
    Ok(result)
}

/// The (upstream, original URI) of namespaced `uri`, refusing what tuicd did not list.
pub(super) fn route(app: &App, method: &str, uri: &str) -> Result<(String, String), RpcError> {
    let Some((upstream, original)) = parse(uri) else {
        return Err(RpcError::invalid_params(format!(
            "{method}: unknown resource {uri:?}: tuicd serves only its upstreams' resources, as {SCHEME}<upstream>/<uri>"
        )));
    };
    let names = app.upstreams.names();
    if !names.iter().any(|n| n == upstream) {
        return Err(RpcError::invalid_params(format!(
            "{method}: unknown upstream {upstream:?} in {uri:?}; configured upstreams: {}",
            names.join(", ")
        )));
    }
    Ok((upstream.to_owned(), original.to_owned()))
}

/// Namespaces the string at `item[field]`.
fn rewrite_field(upstream: &str, item: &mut Value, field: &str) {
    if let Some(Value::String(uri)) = item.get_mut(field) {
        *uri = namespaced(upstream, uri);
    }
}

/// Namespaces the URI of each `resource_link` among `content` blocks, so a client reads it
/// through tuicd; every other block is left as it is.
pub(crate) fn rewrite_links(upstream: &str, content: &mut [Value]) {
    for block in content {
        if block.get("type").and_then(Value::as_str) == Some("resource_link") {
            rewrite_field(upstream, block, "uri");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespaced_uri_maps_back_to_its_upstream_and_uri_and_templates_stay_expandable() {
        let uri = namespaced("everything", "demo://resource/static/document/architecture.md");
        assert_eq!(uri, "tuic+upstream://everything/demo://resource/static/document/architecture.md");
        assert_eq!(parse(&uri), Some(("everything", "demo://resource/static/document/architecture.md")));
        let template = namespaced("fs", "file:///{path}");
        assert_eq!(template.replace("{path}", "tmp/a b"), namespaced("fs", "file:///tmp/a b"));
        assert_eq!(parse("tuic+upstream://fs/file:///tmp/a b"), Some(("fs", "file:///tmp/a b")));
        for bad in ["demo://x", "tuic+upstream://", "tuic+upstream://fs", "tuic+upstream:///x", "tuic+upstream://fs/"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_resource_links_are_rewritten() {
        let mut content = vec![
            json!({"type": "text", "text": "hi", "uri": "demo://not-a-link"}),
            json!({"type": "resource_link", "uri": "demo://resource/dynamic/text/2", "name": "t"}),
            json!({"type": "resource", "resource": {"uri": "demo://embedded", "text": "x"}}),
        ];
        rewrite_links("up", &mut content);
        assert_eq!(content[0]["uri"], "demo://not-a-link");
        assert_eq!(content[1]["uri"], "tuic+upstream://up/demo://resource/dynamic/text/2");
        assert_eq!(content[2]["resource"]["uri"], "demo://embedded", "embedded resources pass through");
    }
}
