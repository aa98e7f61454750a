//! `GET /mcp/upstream-status`: every configured upstream's status, tools and metrics.

use crate::http::ApiResult;
use crate::state::App;

pub(crate) async fn get(app: &App) -> ApiResult {
    crate::http::body::ok_json(&serde_json::json!({"upstreams": app.upstreams.snapshot()}))
}
