//! `GET /config` (secrets redacted) and `PUT /config` (partial body deep-merged onto the live
//! config by [`crate::config::apply::save`], which MCP `config action=save` shares).

use crate::config::ConfigError;
use crate::config::apply::{SaveError, save};
use crate::config::merge::redacted;
use crate::http::body::{ok_json, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::state::App;

pub(crate) async fn get(app: &App) -> ApiResult {
    ok_json(&redacted(&app.config.get()))
}

pub(crate) async fn put(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("changing the configuration")?;
    let patch: serde_json::Value = read_json(req).await?;
    let next = save(app, patch).await.map_err(|e| match e {
        SaveError::Invalid(message) => ApiError::InvalidField(message),
        SaveError::Store(e) => ApiError::from(e),
    })?;
    ok_json(&redacted(&next))
}

impl From<ConfigError> for ApiError {
    fn from(e: ConfigError) -> Self {
        ApiError::Internal(anyhow::Error::new(e).context("saving config.json"))
    }
}
