//! Starting an authorization (discovery, client, PKCE, the callback port, the pending flow) and
//! completing it from the callback (the code exchange, the stored tokens, the reconnect).

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::json;
use url::Url;

use super::callback::{self, Page};
use super::discovery::{self, AsMetadata};
use super::fetch::{Client, Discovered};
use super::flow::{Ended, Missing, PendingFlow};
use super::pkce::{Pkce, state_nonce};
use super::store::{Grant, RegisteredClient};
use super::tokens::{ClientAuth, TokenSet, client_auth, unix_now};
use super::{OAuth, OAuthError};
use crate::lock::Recover;
use crate::proxy::config::{Transport, UpstreamAuth, UpstreamServer};

/// What `POST /mcp/upstreams/:name/authorize` answers.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Started {
    pub authorization_url: String,
    /// `scheme://host[:port]` of the authorization server, for the person to check.
    pub as_origin: String,
    /// The authorization server is on another registrable domain than the upstream.
    pub cross_domain_as: bool,
}

/// The parts of an OAuth upstream's entry a flow uses.
pub(super) struct OAuthEntry<'a> {
    pub url: Url,
    pub client_id: &'a str,
    pub client_secret: Option<&'a str>,
    pub scopes: &'a [String],
    pub authorization_endpoint: Option<&'a str>,
    pub token_endpoint: Option<&'a str>,
}

pub(super) fn oauth_entry(server: &UpstreamServer) -> Result<OAuthEntry<'_>, OAuthError> {
    let not = || OAuthError::NotOAuth(server.name.clone());
    let (
        Transport::Http { url },
        Some(UpstreamAuth::Oauth2 { client_id, client_secret, scopes, authorization_endpoint, token_endpoint }),
    ) = (&server.transport, &server.auth)
    else {
        return Err(not());
    };
    Ok(OAuthEntry {
        url: Url::parse(url).map_err(|_| not())?,
        client_id,
        client_secret: client_secret.as_deref(),
        scopes,
        authorization_endpoint: authorization_endpoint.as_deref(),
        token_endpoint: token_endpoint.as_deref(),
    })
}

impl OAuth {
    /// Discovery for `server` unless its entry names both endpoints.
    pub(super) async fn discover(&self, server: &UpstreamServer) -> Result<Option<Discovered>, OAuthError> {
        let entry = oauth_entry(server)?;
        let configured = entry.authorization_endpoint.is_some() && entry.token_endpoint.is_some();
        if configured && !entry.client_id.is_empty() {
            return Ok(None);
        }
        self.http.discover(&entry.url, None).await.map(Some)
    }

    /// Starts an authorization of `server`: the flow is recorded (and the upstream shown as
    /// authenticating) before the URL is returned and published as `mcp-oauth-start`.
    pub(crate) async fn start(self: &Arc<Self>, server: &UpstreamServer) -> Result<Started, OAuthError> {
        let discovered = self.discover(server).await?;
        self.start_discovered(server, discovered).await
    }

    pub(super) async fn start_discovered(
        self: &Arc<Self>,
        server: &UpstreamServer,
        discovered: Option<Discovered>,
    ) -> Result<Started, OAuthError> {
        let entry = oauth_entry(server)?;
        let metadata = discovered.as_ref().map(|d| d.metadata.clone()).unwrap_or_default();
        let authorization_endpoint = entry.authorization_endpoint.unwrap_or(&metadata.authorization_endpoint);
        let token_endpoint = entry.token_endpoint.unwrap_or(&metadata.token_endpoint).to_owned();
        let mut authorization_url = Url::parse(authorization_endpoint)
            .map_err(|e| OAuthError::Discovery(format!("authorization endpoint {authorization_endpoint:?}: {e}")))?;
        let scope = discovery::choose_scope(
            entry.scopes,
            discovered.as_ref().and_then(|d| d.challenge.as_ref()),
            discovered.as_ref().and_then(|d| d.resource.as_ref()),
        );
        // After a 403 insufficient_scope the registry knows what more the upstream needs.
        let scope = match self.step_up_scope(&server.name) {
            Some(more) => Some(crate::proxy::registry::scope_union(scope.as_deref(), Some(&more))),
            None => scope,
        };
        let named = discovered.as_ref().and_then(|d| d.resource.as_ref()).and_then(|r| r.resource.as_deref());
        let resource = discovery::resource_parameter(&entry.url, named).map_err(OAuthError::Discovery)?;
        let listener =
            tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| OAuthError::Callback(e.to_string()))?;
        let port = listener.local_addr().map_err(|e| OAuthError::Callback(e.to_string()))?.port();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let client = self.client_for(server, &entry, &metadata, &redirect_uri, scope.as_deref()).await?;
        let pkce = Pkce::generate();
        let state = state_nonce();
        {
            let mut q = authorization_url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &client.id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", &resource);
            if let Some(scope) = &scope {
                q.append_pair("scope", scope);
            }
        }
        let as_url = Url::parse(&token_endpoint).unwrap_or_else(|_| authorization_url.clone());
        let as_url = discovered.as_ref().map_or(as_url, |d| d.issuer.clone());
        let started = Started {
            authorization_url: authorization_url.to_string(),
            as_origin: discovery::origin_text(&authorization_url),
            cross_domain_as: discovery::cross_domain(&entry.url, &as_url)
                || discovery::cross_domain(&entry.url, &authorization_url),
        };
        let now = Instant::now();
        let flow = PendingFlow {
            upstream_id: server.id.clone(),
            name: server.name.clone(),
            server_url: entry.url.to_string(),
            verifier: pkce.verifier,
            redirect_uri,
            token_endpoint,
            client,
            resource,
            started: now,
            previous_status: self.status(&server.name),
            scope,
        };
        self.flows.locked().insert(state.clone(), flow);
        self.set_status(&server.name, "authenticating");
        callback::serve(self.clone(), listener, state, now);
        tracing::info!(source = "oauth", upstream = %server.name, as_origin = %started.as_origin,
            cross_domain_as = started.cross_domain_as, "authorization started");
        self.events.publish(
            proto::events::MCP_OAUTH_START,
            &json!({"name": server.name, "authorization_url": started.authorization_url,
                "as_origin": started.as_origin, "cross_domain_as": started.cross_domain_as}),
        );
        Ok(started)
    }

    /// The client to authorize as: the configured one, else one registered earlier at the same
    /// endpoint, else a new registration (RFC 7591). A registered loopback redirect may change
    /// its port per flow (RFC 8252 §7.3), so one registration serves every later flow.
    async fn client_for(
        &self,
        server: &UpstreamServer,
        entry: &OAuthEntry<'_>,
        metadata: &AsMetadata,
        redirect_uri: &str,
        scope: Option<&str>,
    ) -> Result<Client, OAuthError> {
        let methods = metadata.token_endpoint_auth_methods_supported.as_deref();
        let endpoint = metadata.registration_endpoint.as_deref();
        let registered = match endpoint {
            Some(endpoint) => self.store.client(&server.id, endpoint).await,
            None => None,
        };
        if !entry.client_id.is_empty() {
            // A client_id this daemon registered earlier keeps its secret in the credential store.
            let secret = entry
                .client_secret
                .map(str::to_owned)
                .or_else(|| registered.filter(|r| r.client_id == entry.client_id).and_then(|r| r.client_secret));
            return Ok(Client { id: entry.client_id.to_owned(), auth: client_auth(secret.is_some(), methods), secret });
        }
        let Some(endpoint) = endpoint else {
            return Err(OAuthError::Registration(format!(
                "upstream {:?} has no client_id and its authorization server offers no registration_endpoint; set auth.client_id",
                server.name
            )));
        };
        let registered = match registered {
            Some(client) => client,
            None => {
                let client = self.http.register(endpoint, redirect_uri, scope).await?;
                self.store.set_client(&server.id, entry.url.as_str(), client.clone()).await?;
                self.record_client_id(&server.id, &client.client_id).await;
                client
            }
        };
        Ok(registered_client(registered, methods))
    }

    /// Writes a registered `client_id` into the upstream's entry of `mcp-upstreams.json`, under the
    /// store's lock, where the entry still has none; its secret stays in the credential store.
    async fn record_client_id(&self, id: &str, client_id: &str) {
        let (id, client_id) = (id.to_owned(), client_id.to_owned());
        let written = crate::proxy::store::update(&self.config_dir, move |file| {
            let entry = file.servers.iter_mut().find(|s| s.id == id).and_then(|s| s.auth.as_mut());
            if let Some(UpstreamAuth::Oauth2 { client_id: current, .. }) = entry
                && current.is_empty()
            {
                *current = client_id;
            }
            Ok(())
        })
        .await;
        if let Err(e) = written {
            tracing::warn!(source = "oauth", error = %e, "the registered client_id is kept in the credential store only");
        }
    }

    /// The redirect of flow `state` arrived on its callback server: exchange the code.
    pub(super) async fn complete(&self, state: &str, query: &CallbackQuery) -> Page {
        let taken = self.flows.locked().take(state);
        let flow = match taken {
            Ok(flow) => flow,
            Err(Missing::Ended(how)) => return Page::late(how.reason()),
            Err(Missing::Unknown) => return Page::late("this redirect names no authorization tuicd started"),
        };
        let outcome = match (&query.code, &query.error) {
            (_, Some(error)) => Err(format!(
                "the authorization server answered {error}{}",
                query.error_description.as_deref().map(|d| format!(": {d}")).unwrap_or_default()
            )),
            (None, None) => Err("the redirect carries no code".to_owned()),
            (Some(code), None) => self.exchange(&flow, code).await.map_err(|e| e.to_string()),
        };
        match outcome {
            Ok(()) => {
                self.flows.locked().record(state, Ended::Completed);
                self.consent_asked.locked().remove(&flow.name);
                tracing::info!(source = "oauth", upstream = %flow.name, "authorized; reconnecting");
                self.set_status(&flow.name, "connecting");
                self.reconnect(&flow.name);
                Page::success(&flow.name)
            }
            Err(reason) => {
                self.flows.locked().record(state, Ended::Failed);
                tracing::warn!(source = "oauth", upstream = %flow.name, %reason, "authorization failed");
                self.set_status(&flow.name, "needs_auth");
                Page::failure(&flow.name, &reason)
            }
        }
    }

    /// A redirect URL a person pasted (their browser could not reach the callback port).
    pub(crate) async fn complete_pasted(&self, redirect: &str) -> Result<Page, OAuthError> {
        let url = Url::parse(redirect.trim())
            .map_err(|e| OAuthError::BadRedirect(format!("url: {e}; paste the whole address the browser shows")))?;
        let query: CallbackQuery = serde_urlencoded::from_str(url.query().unwrap_or(""))
            .map_err(|e| OAuthError::BadRedirect(format!("url: unreadable query: {e}")))?;
        let Some(state) = query.state.clone() else {
            return Err(OAuthError::BadRedirect("url: the redirect carries no state parameter".into()));
        };
        Ok(self.complete(&state, &query).await)
    }

    async fn exchange(&self, flow: &PendingFlow, code: &str) -> Result<(), OAuthError> {
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.to_owned()),
            ("redirect_uri", flow.redirect_uri.clone()),
            ("code_verifier", flow.verifier.clone()),
            ("resource", flow.resource.clone()),
        ];
        let answer = self.http.token(&flow.token_endpoint, &flow.client, form).await?;
        let mut tokens = TokenSet::from_response(answer, unix_now(), None);
        tokens.scope = tokens.scope.or_else(|| flow.scope.clone());
        let grant = Grant {
            token_endpoint: flow.token_endpoint.clone(),
            client: flow.client.clone(),
            resource: flow.resource.clone(),
        };
        self.store.set_authorized(&flow.upstream_id, &flow.server_url, tokens, grant).await?;
        Ok(())
    }
}

/// The query of a redirect to the callback.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct CallbackQuery {
    pub code: Option<String>,
    pub state: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

fn registered_client(registered: RegisteredClient, methods: Option<&[String]>) -> Client {
    let auth = match registered.client_secret {
        Some(_) => client_auth(true, methods),
        None => ClientAuth::None,
    };
    Client { id: registered.client_id, secret: registered.client_secret, auth }
}
