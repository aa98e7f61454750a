//! `/ui/*`: a person's answers to what the daemon asks through a UI client.
//! `POST /ui/confirm/:id {"confirmed": bool}` (the first answer wins), `GET /ui/confirms` (what
//! waits, and how many connected clients can answer each kind of request).

use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use crate::http::body::{json_response, ok_json, read_json};
use crate::http::{ApiError, ApiResult, Request};
use crate::state::App;
use crate::ui::{AnswerError, Capability};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfirmAnswer {
    confirmed: bool,
}

pub(crate) async fn answer_confirm(app: &App, id: &str, req: Request) -> ApiResult {
    let body: ConfirmAnswer = read_json(req).await?;
    match app.ui.answer(id, body.confirmed) {
        Ok(()) => Ok(json_response(StatusCode::OK, &json!({"ok": true}))),
        Err(AnswerError::NotFound) => Err(ApiError::NotFound(format!("no confirmation {id:?} is waiting"))),
        Err(AnswerError::AlreadyResolved) => {
            Err(ApiError::Conflict(format!("confirmation {id:?} was already resolved")))
        }
    }
}

pub(crate) async fn list_confirms(app: &App) -> ApiResult {
    let answerers = json!({
        "confirm": app.ui.answerers(Capability::Confirm),
        "screenshot": app.ui.answerers(Capability::Screenshot),
    });
    ok_json(&json!({"confirms": app.ui.pending_confirms(), "answerers": answerers}))
}
