//! Plugin routes: the developer guide, a plugin's data files, and a frontend's output watchers
//! (the domain is [`crate::plugins`]).

use http::{HeaderValue, StatusCode, header};
use serde_json::json;

use crate::http::body::{full, ok_json, read_json};
use crate::http::{ApiError, ApiResult, Request, Response};
use crate::plugins::data::{self, DataError};
use crate::plugins::watchers::{SetError, WatcherSet};
use crate::state::App;

/// `GET /plugins/docs` -> `{content}`: the guide in Markdown.
pub(crate) async fn docs() -> ApiResult {
    ok_json(&json!({"content": crate::plugins::GUIDE}))
}

/// `GET /api/plugins/:plugin_id/data/*path`. Every answer, a refusal included, carries
/// `X-Content-Type-Options: nosniff`: a plugin's file is the plugin's bytes, and a browser must not
/// guess HTML or script from them and run it on this server's origin.
pub(crate) async fn data(app: &App, id: &str, raw_path: &str) -> ApiResult {
    let mut response = serve_data(app, id, raw_path).await.unwrap_or_else(ApiError::into_response);
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    Ok(response)
}

/// `raw_path` is the request path as sent (still percent-encoded): the path after `/data/` is
/// checked as text before anything is opened.
async fn serve_data(app: &App, id: &str, raw_path: &str) -> ApiResult {
    data::check_id(id).map_err(refused)?;
    let prefix = format!("/api/plugins/{id}/data");
    let rest = raw_path.strip_prefix(&prefix).ok_or_else(|| ApiError::BadRequest("path: malformed".into()))?;
    let components = data::check_path(rest.strip_prefix('/').unwrap_or(rest)).map_err(refused)?;
    let (config_dir, id) = (app.config_dir.clone(), id.to_owned());
    let file = tokio::task::spawn_blocking(move || data::read(&config_dir, &id, &components))
        .await
        .map_err(anyhow::Error::from)?
        .map_err(refused)?;
    let content_type = if file.json {
        "application/json"
    } else if std::str::from_utf8(&file.bytes).is_ok() {
        "text/plain; charset=utf-8"
    } else {
        "application/octet-stream"
    };
    let mut response = Response::new(full(file.bytes));
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    Ok(response)
}

fn refused(e: DataError) -> ApiError {
    match e {
        DataError::Invalid(m) | DataError::TooLarge(m) => ApiError::BadRequest(m),
        DataError::UnknownPlugin(m) | DataError::NotFound(m) => ApiError::NotFound(m),
        DataError::Io(m) => ApiError::Internal(anyhow::anyhow!(m)),
    }
}

/// `POST /api/plugins/output-watchers {client_id, seq, patterns: [{id, pattern}]}` ->
/// `{applied, rejected: [{id, error}]}`.
pub(crate) async fn output_watchers(app: &App, req: Request) -> ApiResult {
    let set: WatcherSet = read_json(req).await?;
    match app.plugins.replace(set) {
        Ok(applied) => ok_json(&applied),
        Err(SetError::Invalid(m)) => Err(ApiError::InvalidField(m)),
        Err(SetError::Stale(m)) => Err(ApiError::Conflict(m)),
    }
}
