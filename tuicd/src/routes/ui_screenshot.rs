//! `POST /ui/screenshot/:id {"png_base64": "..."}`: a GUI client's answer to
//! `ui-screenshot-requested`. 200 `{ok:true}`; 404 when no such request waits; 400 naming what is
//! wrong with the PNG (the request keeps waiting for a good one).

use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use crate::http::body::{json_response, read_json};
use crate::http::{ApiError, ApiResult, Request};
use crate::state::App;
use crate::ui::screenshot::DeliverError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScreenshotAnswer {
    png_base64: String,
}

pub(crate) async fn answer(app: &App, id: &str, req: Request) -> ApiResult {
    let body: ScreenshotAnswer = read_json(req).await?;
    match app.ui.deliver_screenshot(id, &body.png_base64) {
        Ok(()) => Ok(json_response(StatusCode::OK, &json!({"ok": true}))),
        Err(DeliverError::NotFound) => {
            Err(ApiError::NotFound(format!("no screenshot request {id:?} is waiting (unknown, answered or given up)")))
        }
        Err(DeliverError::Invalid(message)) => Err(ApiError::InvalidField(message)),
    }
}
