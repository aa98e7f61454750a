//! `POST /daemon/upgrade`: upgrade in place (see [`crate::upgrade`]). Refused with the reason
//! (409) while the old daemon serves on; on success the process image is replaced, so the caller
//! sees its connection close, then the daemon answering again under the same pid (`/health`).

use crate::http::{ApiError, ApiResult};
use crate::state::App;

pub(crate) async fn upgrade(app: &App) -> ApiResult {
    let refusal = app.upgrades.request().await;
    tracing::warn!(reason = %refusal, "upgrade in place refused");
    Err(ApiError::Conflict(format!("upgrade refused: {refusal}")))
}
