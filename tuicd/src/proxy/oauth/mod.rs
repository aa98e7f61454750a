//! OAuth 2.1 for HTTP upstreams: discovery (RFC 9728, RFC 8414), dynamic client registration
//! (RFC 7591), PKCE S256, a loopback callback server per flow, token refresh serialized per
//! upstream, and the credential store.
//!
//! - [`discovery`], [`pkce`], [`tokens`], [`flow`]: the pure rules, unit-tested.
//! - [`fetch`]: the requests to the upstream and its authorization server.
//! - [`callback`]: one loopback server per flow; [`bearer`]: the `BearerSource` of an OAuth
//!   upstream; [`store`]: the OS keyring, else `credentials.json`.
//!
//! The registry is reached through [`UpstreamLink`], installed by the composition root, so this
//! module names no registry type.

mod bearer;
mod callback;
pub(crate) mod discovery;
mod fetch;
mod flow;
mod link;
pub(crate) mod pkce;
mod start;
pub(crate) mod store;
pub(crate) mod tokens;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::events::EventBus;
use crate::lock::Recover;
use crate::proxy::config::UpstreamServer;
use crate::ui::Ui;

pub(crate) use bearer::OAuthBearer;
pub(crate) use link::spawn_consent_watcher;

/// What OAuth needs of the upstream registry: its statuses and a reconnect.
pub(crate) trait UpstreamLink: Send + Sync {
    /// The upstream's status word (`ready`, `needs_auth`, `authenticating`, ...).
    fn status(&self, name: &str) -> Option<String>;
    fn set_status(&self, name: &str, status: &str);
    /// Connects again, with the credential just stored.
    fn reconnect(&self, name: &str);
    /// The scope a 403 `insufficient_scope` asked the next authorization to add.
    fn step_up_scope(&self, name: &str) -> Option<String>;
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum OAuthError {
    #[error("no upstream is named {0:?}")]
    UnknownUpstream(String),
    #[error("upstream {0:?} is not an HTTP upstream with auth type \"oauth2\"")]
    NotOAuth(String),
    #[error("no authorization of upstream {0:?} is in progress")]
    NoFlow(String),
    #[error("authorization server discovery failed: {0}")]
    Discovery(String),
    #[error("dynamic client registration failed: {0}")]
    Registration(String),
    #[error("the token request failed: {0}")]
    Token(String),
    #[error("the authorization server refused the token request: {0}")]
    TokenRefused(String),
    #[error("{0}")]
    Store(#[from] store::StoreError),
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    BadRedirect(String),
    #[error("cannot open a loopback callback port: {0}")]
    Callback(String),
}

/// How long a flow waits and how long its callback server outlives it. Tests shorten the flow
/// with `TUIC_OAUTH_FLOW_TIMEOUT_MS` (and the grace with `TUIC_OAUTH_CALLBACK_GRACE_MS`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub flow_timeout: Duration,
    pub callback_grace: Duration,
}

impl Timing {
    pub(crate) fn from_env() -> Self {
        let ms = |key: &str, default: Duration| {
            std::env::var(key).ok().and_then(|v| v.parse().ok()).map_or(default, Duration::from_millis)
        };
        Self {
            flow_timeout: ms("TUIC_OAUTH_FLOW_TIMEOUT_MS", crate::limits::OAUTH_FLOW_TIMEOUT),
            callback_grace: ms("TUIC_OAUTH_CALLBACK_GRACE_MS", crate::limits::OAUTH_CALLBACK_GRACE),
        }
    }
}

/// The OAuth side of the proxy: one per daemon.
pub(crate) struct OAuth {
    config_dir: PathBuf,
    http: fetch::Http,
    store: store::CredentialStore,
    flows: Mutex<flow::Flows>,
    /// One async lock per upstream id: refreshes of one upstream run one at a time, so a burst
    /// of 401s costs one token request (the second waiter finds the new generation).
    refreshing: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Upstreams (by name) whose consent was asked since their last token: asked once, not at
    /// every `needs_auth`.
    consent_asked: Mutex<HashSet<String>>,
    events: Arc<EventBus>,
    ui: Arc<Ui>,
    link: OnceLock<Arc<dyn UpstreamLink>>,
    timing: Timing,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth").field("store", &self.store).finish_non_exhaustive()
    }
}

impl OAuth {
    pub(crate) fn new(config_dir: &Path, events: Arc<EventBus>, ui: Arc<Ui>, timing: Timing) -> Self {
        Self {
            config_dir: config_dir.to_owned(),
            http: fetch::Http::new(),
            store: store::CredentialStore::new(config_dir),
            flows: Mutex::default(),
            refreshing: Mutex::default(),
            consent_asked: Mutex::default(),
            events,
            ui,
            link: OnceLock::new(),
            timing,
        }
    }

    /// Installs the registry's side; called once by the composition root.
    pub(crate) fn link(&self, link: Arc<dyn UpstreamLink>) {
        let _ = self.link.set(link);
    }

    /// The bearer source of `server` when it is an OAuth upstream.
    pub(crate) fn bearer_for(
        self: &Arc<Self>,
        server: &UpstreamServer,
    ) -> Option<Arc<dyn crate::proxy::wire::BearerSource>> {
        OAuthBearer::new(self, server).map(|b| Arc::new(b) as Arc<dyn crate::proxy::wire::BearerSource>)
    }

    /// The upstream named `name`, as `mcp-upstreams.json` holds it now.
    pub(crate) fn server_named(&self, name: &str) -> Result<UpstreamServer, OAuthError> {
        crate::proxy::store::load(&self.config_dir)
            .map_err(|e| OAuthError::Config(e.to_string()))?
            .servers
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| OAuthError::UnknownUpstream(name.to_owned()))
    }

    /// Ends the pending flow of `name` and restores the status it had before.
    pub(crate) fn cancel(&self, name: &str) -> Result<(), OAuthError> {
        let flow = {
            let mut flows = self.flows.locked();
            let state = flows.state_of(name).ok_or_else(|| OAuthError::NoFlow(name.to_owned()))?;
            flows.end(&state, flow::Ended::Cancelled)
        };
        if let Some(flow) = flow {
            tracing::info!(source = "oauth", upstream = name, "authorization cancelled");
            let previous = flow.previous_status.unwrap_or_else(|| "needs_auth".to_owned());
            self.set_status(name, &previous);
        }
        Ok(())
    }

    /// Drops the flows past the timeout and moves their upstreams back to `needs_auth`.
    pub(crate) fn sweep(&self) {
        let expired = self.flows.locked().sweep(std::time::Instant::now(), self.timing.flow_timeout);
        for flow in expired {
            tracing::info!(source = "oauth", upstream = %flow.name, "authorization expired without a redirect");
            self.set_status(&flow.name, "needs_auth");
        }
    }

    /// Chooses and loads the credential store now rather than at its first use.
    pub(crate) async fn open_credentials(&self) {
        self.store.open().await;
    }

    /// Deletes the credentials of every upstream `before` has and `after` no longer has, in
    /// whichever store holds them.
    pub(crate) async fn forget_removed(
        &self,
        before: &crate::proxy::config::UpstreamsFile,
        after: &crate::proxy::config::UpstreamsFile,
    ) {
        for server in before.servers.iter().filter(|s| after.by_id(&s.id).is_none()) {
            match self.store.forget(&server.id).await {
                Ok(()) => {
                    tracing::info!(source = "oauth", upstream = %server.name, "credentials of the removed upstream deleted")
                }
                Err(e) => {
                    tracing::warn!(source = "oauth", upstream = %server.name, error = %e, "cannot delete the credentials of the removed upstream")
                }
            }
        }
    }

    fn status(&self, name: &str) -> Option<String> {
        self.link.get().and_then(|l| l.status(name))
    }

    fn set_status(&self, name: &str, status: &str) {
        if let Some(link) = self.link.get() {
            link.set_status(name, status);
        }
    }

    fn reconnect(&self, name: &str) {
        if let Some(link) = self.link.get() {
            link.reconnect(name);
        }
    }

    fn step_up_scope(&self, name: &str) -> Option<String> {
        self.link.get().and_then(|l| l.step_up_scope(name))
    }

    fn refresh_lock(&self, id: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.refreshing.locked().entry(id.to_owned()).or_default().clone()
    }
}
