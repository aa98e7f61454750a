//! The IO of OAuth: the unauthenticated probe of the upstream, metadata documents, dynamic client
//! registration (RFC 7591) and the token endpoint. Every request has a deadline and a size cap.

use serde::de::DeserializeOwned;
use serde_json::json;
use url::Url;

use super::OAuthError;
use super::discovery::{self, AsMetadata, Challenge, ResourceMetadata};
use super::store::RegisteredClient;
use super::tokens::{ClientAuth, TokenResponse};
use crate::limits::{OAUTH_DOCUMENT_MAX_BYTES, OAUTH_HTTP_TIMEOUT};

/// What discovery found for one upstream.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    pub challenge: Option<Challenge>,
    pub resource: Option<ResourceMetadata>,
    /// The authorization server's issuer as the resource named it (or the upstream's origin).
    pub issuer: Url,
    pub metadata: AsMetadata,
}

#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
}

impl Http {
    pub(crate) fn new() -> Self {
        // reqwest is built without a default crypto provider; ring is the one the daemon uses.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(OAUTH_HTTP_TIMEOUT)
            .redirect(reqwest::redirect::Policy::limited(5))
            .build()
            .unwrap_or_default();
        Self { client }
    }

    /// An unauthenticated `initialize` POST: a 401's `Bearer` challenge, if the upstream sent one.
    /// An upstream whose `initialize` is open challenges at its first method instead, so then its
    /// `tools/list` is asked in the session `initialize` opened.
    pub(crate) async fn probe(&self, server: &Url) -> Option<Challenge> {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "tuicd", "version": env!("CARGO_PKG_VERSION")}}});
        let response = self.probe_post(server, &body, None).await?;
        if response.status().is_success() {
            let session = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
            drop(response);
            let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
            return challenge_of(&self.probe_post(server, &list, session.as_deref()).await?);
        }
        challenge_of(&response)
    }

    async fn probe_post(
        &self,
        server: &Url,
        body: &serde_json::Value,
        session: Option<&str>,
    ) -> Option<reqwest::Response> {
        let mut request = self
            .client
            .post(server.clone())
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send().await.ok()
    }

    /// RFC 9728 then RFC 8414 discovery for the upstream at `server`. Without protected resource
    /// metadata the upstream's origin is taken as the issuer (the 2025-03-26 MCP revision), and
    /// without server metadata its default endpoints (`/authorize`, `/token`, `/register`).
    pub(crate) async fn discover(&self, server: &Url, challenge: Option<Challenge>) -> Result<Discovered, OAuthError> {
        let challenge = match challenge {
            Some(c) => Some(c),
            None => self.probe(server).await,
        };
        let mut resource_urls = Vec::new();
        if let Some(url) = challenge.as_ref().and_then(|c| c.resource_metadata.as_deref()) {
            match server.join(url) {
                Ok(u) => resource_urls.push(u),
                Err(e) => tracing::warn!(source = "oauth", url, error = %e, "unusable resource_metadata URL"),
            }
        }
        resource_urls.extend(discovery::resource_metadata_urls(server));
        let mut resource = None;
        for url in &resource_urls {
            if let Some(doc) = self.get_json::<ResourceMetadata>(url).await? {
                resource = Some(doc);
                break;
            }
        }
        let issuer = match resource.as_ref().and_then(|r| r.authorization_servers.first()) {
            Some(issuer) => Url::parse(issuer)
                .map_err(|e| OAuthError::Discovery(format!("authorization server {issuer:?} is not a URL: {e}")))?,
            None => discovery::origin_of(server),
        };
        let mut metadata = None;
        for url in discovery::authorization_server_urls(&issuer) {
            if let Some(doc) = self.get_json::<AsMetadata>(&url).await? {
                metadata = Some(doc);
                break;
            }
        }
        let metadata = match metadata {
            Some(m) => m,
            None if resource.is_none() => default_endpoints(&issuer),
            None => {
                return Err(OAuthError::Discovery(format!(
                    "no authorization server metadata at {} (tried RFC 8414 and OpenID discovery)",
                    discovery::origin_text(&issuer)
                )));
            }
        };
        if let Some(methods) = &metadata.code_challenge_methods_supported
            && !methods.iter().any(|m| m == "S256")
        {
            return Err(OAuthError::Discovery(format!(
                "the authorization server at {} does not support PKCE S256 (it lists {methods:?})",
                discovery::origin_text(&issuer)
            )));
        }
        if let Some(named) = metadata.issuer.as_deref()
            && named.trim_end_matches('/') != issuer.as_str().trim_end_matches('/')
        {
            // RFC 8414 §3.3 asks for a match, but gateways and hosted tenants routinely differ; the
            // consent names the origin and the person decides.
            tracing::warn!(source = "oauth", expected = %issuer, named, "authorization server issuer mismatch");
        }
        Ok(Discovered { challenge, resource, issuer, metadata })
    }

    /// Registers a public client for `redirect_uri` (RFC 7591).
    pub(crate) async fn register(
        &self,
        endpoint: &str,
        redirect_uri: &str,
        scope: Option<&str>,
    ) -> Result<RegisteredClient, OAuthError> {
        let mut body = json!({
            "client_name": "tuicd",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        if let Some(scope) = scope {
            body["scope"] = json!(scope);
        }
        let fail = |reason: String| OAuthError::Registration(format!("{endpoint}: {reason}"));
        let response = self.client.post(endpoint).json(&body).send().await.map_err(|e| fail(e.to_string()))?;
        let status = response.status();
        let bytes = capped(response).await.map_err(fail)?;
        if !status.is_success() {
            return Err(fail(format!("{status}: {}", error_text(&bytes))));
        }
        #[derive(serde::Deserialize)]
        struct Registered {
            client_id: String,
            #[serde(default)]
            client_secret: Option<String>,
        }
        let registered: Registered = serde_json::from_slice(&bytes).map_err(|e| fail(e.to_string()))?;
        Ok(RegisteredClient {
            client_id: registered.client_id,
            client_secret: registered.client_secret,
            registration_endpoint: endpoint.to_owned(),
        })
    }

    /// One token endpoint request (`authorization_code` or `refresh_token` grant).
    pub(crate) async fn token(
        &self,
        endpoint: &str,
        client: &Client,
        mut form: Vec<(&'static str, String)>,
    ) -> Result<TokenResponse, OAuthError> {
        let mut request = self.client.post(endpoint).header("accept", "application/json");
        match client.auth {
            ClientAuth::None => form.push(("client_id", client.id.clone())),
            ClientAuth::Post => {
                form.push(("client_id", client.id.clone()));
                form.push(("client_secret", client.secret.clone().unwrap_or_default()));
            }
            ClientAuth::Basic => {
                // RFC 6749 §2.3.1: both parts form-urlencoded before the Basic encoding.
                let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
                let secret = client.secret.as_deref().unwrap_or_default();
                request = request.basic_auth(enc(&client.id), Some(enc(secret)));
            }
        }
        let body = serde_urlencoded::to_string(&form).map_err(|e| OAuthError::Token(e.to_string()))?;
        let response = request
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| OAuthError::Token(format!("{endpoint}: {e}")))?;
        let status = response.status();
        let bytes = capped(response).await.map_err(OAuthError::Token)?;
        if !status.is_success() {
            return Err(OAuthError::TokenRefused(format!("{status}: {}", error_text(&bytes))));
        }
        let answer: TokenResponse =
            serde_json::from_slice(&bytes).map_err(|e| OAuthError::Token(format!("unreadable token answer: {e}")))?;
        answer.check().map_err(OAuthError::Token)
    }

    /// A JSON document, or `None` when the server has none there (any 4xx).
    async fn get_json<T: DeserializeOwned>(&self, url: &Url) -> Result<Option<T>, OAuthError> {
        let response = match self.client.get(url.clone()).header("accept", "application/json").send().await {
            Ok(r) => r,
            Err(e) => return Err(OAuthError::Discovery(format!("{url}: {e}"))),
        };
        if response.status().is_client_error() {
            return Ok(None);
        }
        if !response.status().is_success() {
            return Err(OAuthError::Discovery(format!("{url}: {}", response.status())));
        }
        let bytes = capped(response).await.map_err(|e| OAuthError::Discovery(format!("{url}: {e}")))?;
        serde_json::from_slice(&bytes).map(Some).map_err(|e| OAuthError::Discovery(format!("{url}: {e}")))
    }
}

/// The client a token request authenticates as.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Client {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    #[serde(with = "auth_name")]
    pub auth: ClientAuth,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("id", &self.id).field("auth", &self.auth).finish_non_exhaustive()
    }
}

/// RFC 8414's names for the methods, as the credential file stores them.
mod auth_name {
    use super::ClientAuth;

    pub(super) fn serialize<S: serde::Serializer>(auth: &ClientAuth, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match auth {
            ClientAuth::None => "none",
            ClientAuth::Post => "client_secret_post",
            ClientAuth::Basic => "client_secret_basic",
        })
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ClientAuth, D::Error> {
        let name = <String as serde::Deserialize>::deserialize(d)?;
        Ok(match name.as_str() {
            "client_secret_post" => ClientAuth::Post,
            "client_secret_basic" => ClientAuth::Basic,
            _ => ClientAuth::None,
        })
    }
}

/// The 2025-03-26 revision's default endpoints at the server's origin.
fn default_endpoints(issuer: &Url) -> AsMetadata {
    let at = |path: &str| {
        let mut u = discovery::origin_of(issuer);
        u.set_path(path);
        u.to_string()
    };
    AsMetadata {
        authorization_endpoint: at("/authorize"),
        token_endpoint: at("/token"),
        registration_endpoint: Some(at("/register")),
        ..AsMetadata::default()
    }
}

/// The body, refused past [`OAUTH_DOCUMENT_MAX_BYTES`].
async fn capped(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if out.len() + chunk.len() > OAUTH_DOCUMENT_MAX_BYTES {
            return Err(format!("the answer is larger than {OAUTH_DOCUMENT_MAX_BYTES} bytes"));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// An OAuth error answer as one line: `error: error_description`, else the first 200 bytes.
fn error_text(bytes: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes)
        && let Some(error) = v.get("error").and_then(|e| e.as_str())
    {
        return match v.get("error_description").and_then(|d| d.as_str()) {
            Some(d) => format!("{error}: {d}"),
            None => error.to_owned(),
        };
    }
    String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned()
}

/// A 401's `Bearer` challenge.
fn challenge_of(response: &reqwest::Response) -> Option<Challenge> {
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    discovery::parse_challenge(response.headers().get("www-authenticate")?.to_str().ok()?)
}
