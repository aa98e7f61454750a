//! The registry as OAuth sees it ([`UpstreamLink`]), and the watcher that asks a person once
//! when an upstream turns `needs_auth`.

use std::sync::Arc;

use tokio::sync::{broadcast, watch};

use super::{OAuth, UpstreamLink};
use crate::proxy::registry::{Status, Upstreams};

impl UpstreamLink for Upstreams {
    fn status(&self, name: &str) -> Option<String> {
        Upstreams::status(self, name).map(|s| s.as_str().to_owned())
    }

    fn set_status(&self, name: &str, status: &str) {
        let status = match status {
            "connecting" => Status::Connecting,
            "ready" => Status::Ready,
            "circuit_open" => Status::CircuitOpen,
            "disabled" => Status::Disabled,
            "failed" => Status::Failed,
            "authenticating" => Status::Authenticating,
            _ => Status::NeedsAuth,
        };
        Upstreams::set_status(self, name, status);
    }

    fn reconnect(&self, name: &str) {
        Upstreams::reconnect(self, name);
    }

    fn step_up_scope(&self, name: &str) -> Option<String> {
        Upstreams::step_up_scope(self, name)
    }
}

/// Follows `upstream-status-changed` on the event bus: an upstream that turns `needs_auth` gets
/// one consent request (see [`OAuth::needs_auth`]). Ends at shutdown.
pub(crate) fn spawn_consent_watcher(oauth: Arc<OAuth>, mut shutdown: watch::Receiver<bool>) {
    let mut live = oauth.events.subscribe(None).live;
    tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                event = live.recv() => event,
                _ = shutdown.wait_for(|stopping| *stopping) => return,
            };
            let event = match event {
                Ok(event) => event,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            if event.kind != proto::events::UPSTREAM_STATUS_CHANGED {
                continue;
            }
            let Ok(change) = serde_json::from_str::<serde_json::Value>(&event.data) else { continue };
            if change["status"] == "needs_auth"
                && let Some(name) = change["name"].as_str()
            {
                oauth.needs_auth(name);
            }
        }
    });
}
