//! The `BearerSource` of an OAuth upstream: the stored access token, read on every attempt; on a
//! 401 the rejected-generation rule, with refreshes serialized per upstream; and, when nothing
//! works, the consent that leads to a new authorization.

use std::sync::Arc;

use super::tokens::{Recovery, TokenSet, recovery, unix_now};
use super::{OAuth, OAuthError};
use crate::lock::Recover;
use crate::proxy::config::UpstreamServer;
use crate::proxy::wire::{BearerSource, BoxFuture};

pub(crate) struct OAuthBearer {
    oauth: Arc<OAuth>,
    id: String,
    name: String,
    /// The upstream URL: the key its tokens are stored under.
    url: String,
}

impl std::fmt::Debug for OAuthBearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthBearer").field("upstream", &self.name).finish_non_exhaustive()
    }
}

impl OAuthBearer {
    pub(super) fn new(oauth: &Arc<OAuth>, server: &UpstreamServer) -> Option<Self> {
        let entry = super::start::oauth_entry(server).ok()?;
        Some(Self {
            oauth: oauth.clone(),
            id: server.id.clone(),
            name: server.name.clone(),
            url: entry.url.to_string(),
        })
    }
}

impl BearerSource for OAuthBearer {
    fn current(&self) -> Option<String> {
        self.oauth.store.loaded_tokens(&self.id, &self.url).map(|t| t.access_token)
    }

    fn granted_scope(&self) -> Option<String> {
        self.oauth.store.loaded_tokens(&self.id, &self.url).and_then(|t| t.scope)
    }

    fn fresh(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move {
            let stored = self.oauth.store.tokens(&self.id, &self.url).await?;
            if stored.expired_at(unix_now()) && stored.refresh_token.is_some() {
                // The same serialized path a 401 takes: a burst of callers refreshes once.
                return self.recover(Some(&stored.access_token)).await;
            }
            Some(stored.access_token)
        })
    }

    fn recover<'a>(&'a self, rejected: Option<&'a str>) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let lock = self.oauth.refresh_lock(&self.id);
            let _serial = lock.lock().await;
            let stored = self.oauth.store.tokens(&self.id, &self.url).await;
            match recovery(rejected, stored.as_ref(), unix_now()) {
                Recovery::UseStored => stored.map(|t| t.access_token),
                Recovery::Refresh => match self.refresh(stored).await {
                    Ok(tokens) => Some(tokens.access_token),
                    Err(e) => {
                        tracing::warn!(source = "oauth", upstream = %self.name, error = %e, "token refresh failed; the upstream needs a new authorization");
                        if let Err(e) = self.oauth.store.clear_tokens(&self.id).await {
                            tracing::warn!(source = "oauth", upstream = %self.name, error = %e, "cannot forget the refused tokens");
                        }
                        None
                    }
                },
                // The client then fails with NeedsOAuth, the registry shows `needs_auth`, and the
                // consent watcher asks the person.
                Recovery::Reauthorize => None,
            }
        })
    }
}

impl OAuthBearer {
    async fn refresh(&self, stored: Option<TokenSet>) -> Result<TokenSet, OAuthError> {
        let stored = stored.ok_or_else(|| OAuthError::Token("nothing stored to refresh".into()))?;
        let refresh_token = stored.refresh_token.clone().ok_or_else(|| OAuthError::Token("no refresh token".into()))?;
        let grant = self
            .oauth
            .store
            .grant(&self.id, &self.url)
            .await
            .ok_or_else(|| OAuthError::Token("the token endpoint of the authorization is unknown".into()))?;
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", grant.resource.clone()),
        ];
        let answer = self.oauth.http.token(&grant.token_endpoint, &grant.client, form).await?;
        let mut tokens = TokenSet::from_response(answer, unix_now(), Some(refresh_token));
        tokens.scope = tokens.scope.or(stored.scope);
        self.oauth.store.set_tokens(&self.id, &self.url, tokens.clone()).await?;
        tracing::info!(source = "oauth", upstream = %self.name, "access token refreshed");
        Ok(tokens)
    }
}

impl OAuth {
    /// The upstream has no usable credential: ask the person once (through the confirm flow,
    /// naming the authorization server's origin) and start an authorization on approval.
    pub(crate) fn needs_auth(self: &Arc<Self>, name: &str) {
        if !self.consent_asked.locked().insert(name.to_owned()) {
            return;
        }
        let oauth = self.clone();
        let name = name.to_owned();
        tokio::spawn(async move {
            if let Err(e) = oauth.ask_consent(&name).await {
                tracing::info!(source = "oauth", upstream = %name, error = %e, "cannot ask for authorization");
            }
        });
    }

    async fn ask_consent(self: &Arc<Self>, name: &str) -> Result<(), OAuthError> {
        let server = self.server_named(name)?;
        let entry = super::start::oauth_entry(&server)?;
        let discovered = self.discover(&server).await?;
        let as_url = match (&discovered, entry.authorization_endpoint) {
            (Some(d), _) => url::Url::parse(&d.metadata.authorization_endpoint).unwrap_or_else(|_| d.issuer.clone()),
            (None, Some(endpoint)) => url::Url::parse(endpoint).map_err(|e| OAuthError::Discovery(e.to_string()))?,
            (None, None) => return Err(OAuthError::Discovery("no authorization endpoint".into())),
        };
        let as_origin = super::discovery::origin_text(&as_url);
        let cross = super::discovery::cross_domain(&entry.url, &as_url)
            || discovered.as_ref().is_some_and(|d| super::discovery::cross_domain(&entry.url, &d.issuer));
        let warning = if cross {
            " Warning: this authorization server is on another domain than the MCP server; approve only if you expect it."
        } else {
            ""
        };
        let request = crate::ui::ConfirmRequest {
            title: format!("Authorize upstream \u{201c}{name}\u{201d}?"),
            message: format!(
                "The upstream MCP server \u{201c}{name}\u{201d} ({}) needs you to sign in at {as_origin}.{warning}",
                super::discovery::origin_text(&entry.url)
            ),
            requester: format!("upstream MCP server {name}"),
            kind: "oauth_consent",
        };
        let outcome = self.ui.confirm(request).await;
        if !outcome.confirmed() {
            tracing::info!(
                source = "oauth",
                upstream = name,
                reason = outcome.reason().unwrap_or(""),
                "authorization not started; click Authorize or run `tuicd upstream authorize {name}`"
            );
            return Ok(());
        }
        self.start_discovered(&server, discovered).await.map(|_| ())
    }
}
