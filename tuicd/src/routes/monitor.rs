//! Monitoring: `GET /stats`, `GET /metrics`, `GET /process/stats`, `GET /process/monitor`.

use http::{HeaderValue, header};

use crate::http::body::{full, ok_json};
use crate::http::{ApiResult, Response};
use crate::state::App;

pub(crate) async fn stats(app: &App) -> ApiResult {
    ok_json(&app.sessions.stats(app.config.get().max_sessions))
}

pub(crate) async fn metrics(app: &App) -> ApiResult {
    ok_json(&app.sessions.metrics())
}

/// sysinfo reads /proc for every process: done on the blocking pool.
pub(crate) async fn process_stats(app: &App) -> ApiResult {
    let sessions = app.sessions.clone();
    let rows = tokio::task::spawn_blocking(move || sessions.process_stats())
        .await
        .map_err(|e| crate::http::ApiError::Internal(e.into()))?;
    ok_json(&rows)
}

/// A self-contained page (no external assets) that polls `/process/stats` every 2 s.
pub(crate) async fn process_monitor() -> ApiResult {
    let mut response = Response::new(full(MONITOR_HTML));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

const MONITOR_HTML: &str = include_str!("monitor.html");
