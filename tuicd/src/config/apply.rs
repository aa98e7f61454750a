//! Saving a partial config, shared by `PUT /config` and MCP `config action=save`: the body is
//! deep-merged onto the live config, validated whole, written atomically, and what must change
//! now does (the TCP listener restarts alone when remote access changed; MCP clients hear of a
//! changed tool list; `config-changed` goes out on `/events`).

use std::sync::Arc;

use serde_json::Value;

use super::merge::apply_patch;
use super::{AppConfig, ConfigError};
use crate::state::App;

/// Why a save changed nothing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SaveError {
    /// The patch, or the config it makes, is invalid; the message names the key.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] ConfigError),
}

/// Deep-merges `patch` onto the live config and applies the result. Returns the saved config.
pub(crate) async fn save(app: &App, patch: Value) -> Result<Arc<AppConfig>, SaveError> {
    let (previous, next) = app.config.update(|current| {
        let next = apply_patch(current, patch).map_err(SaveError::Invalid)?;
        super::tls::check(&next.services.tls).map_err(SaveError::Invalid)?;
        Ok::<_, SaveError>(next)
    })?;
    apply_changes(app, &previous, &next).await;
    Ok(next)
}

/// Effects of a saved config change that must happen now, not at the next start.
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
