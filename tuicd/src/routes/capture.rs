//! `POST /diagnostics/capture` (turn the raw PTY tap on for one session or all, or off) and
//! `GET /diagnostics/capture` (filter, directory, bytes per file).

use proto::session::CaptureRequest;

use crate::http::body::{ok_json, read_json};
use crate::http::{ApiResult, Caller, Request};
use crate::state::App;

pub(crate) async fn get(app: &App) -> ApiResult {
    ok_json(&app.sessions.capture_status())
}

pub(crate) async fn set(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("changing the PTY capture")?;
    let body: CaptureRequest = read_json(req).await?;
    ok_json(&app.sessions.set_capture(body.enabled, body.session_id.as_deref())?)
}
