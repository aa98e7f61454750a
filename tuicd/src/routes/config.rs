//! `GET /config` (secrets redacted) and `PUT /config` (partial body deep-merged onto the live
//! config; remote-access changes restart only the TCP listener).

use crate::config::merge::{apply_patch, redacted};
use crate::config::{AppConfig, ConfigError};
use crate::http::body::{ok_json, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::state::App;

pub(crate) async fn get(app: &App) -> ApiResult {
    ok_json(&redacted(&app.config.get()))
}

pub(crate) async fn put(app: &App, caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("changing the configuration")?;
    let patch: serde_json::Value = read_json(req).await?;
    let (previous, next) = app.config.update(|current| {
        let next = apply_patch(current, patch).map_err(ApiError::InvalidField)?;
        crate::config::tls::check(&next.services.tls).map_err(ApiError::InvalidField)?;
        Ok::<_, ApiError>(next)
    })?;
    apply_changes(app, &previous, &next).await;
    ok_json(&redacted(&next))
}

/// Effects of a saved (or re-read) config change that must happen now, not at the next start.
pub(crate) async fn apply_changes(app: &App, previous: &AppConfig, next: &AppConfig) {
    if previous == next {
        return;
    }
    if previous.services.server != next.services.server || previous.services.tls != next.services.tls {
        tracing::info!(
            listener = "tcp",
            "remote access settings changed; restarting the TCP listener only (IPC listener unaffected)"
        );
        app.tcp.apply(app).await;
    }
    app.mcp.config_changed(previous, next);
    app.events.publish(proto::events::CONFIG_CHANGED, &serde_json::json!({}));
}

impl From<ConfigError> for ApiError {
    fn from(e: ConfigError) -> Self {
        ApiError::Internal(anyhow::Error::new(e).context("saving config.json"))
    }
}
