//! One connection's way to the daemon: REST through reqwest, the WebSocket through
//! tokio-tungstenite over the same transport (Unix socket, TCP, or TCP + TLS), Basic Auth on both.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::target::Target;

/// Per-request deadline, so a hung daemon shows as unreachable instead of freezing updates.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a connect may take before the daemon counts as down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// A failed request, worded for the status bar.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ApiError {
    /// Nothing answers: the daemon is down or restarting.
    Offline(String),
    /// 401: the user or password is wrong. Retrying would only feed the failed-login limiter.
    Unauthorized,
    /// The daemon answered with an error.
    Status(u16, String),
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Offline(why) => write!(f, "tuicd unreachable: {why}"),
            Self::Unauthorized => write!(f, "wrong user or password (401)"),
            Self::Status(status, message) => write!(f, "{message} ({status})"),
        }
    }
}

pub(crate) type Ws = WebSocketStream<Box<dyn Io>>;

pub(crate) trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

#[derive(Clone)]
pub(crate) struct Api {
    client: reqwest::Client,
    base: String,
    target: Target,
    authorization: Option<String>,
    tls: Option<Arc<rustls::ClientConfig>>,
}

/// A scoped token (`tuicd token create`) in the password field is sent as a bearer token; a
/// password as Basic credentials.
fn authorization(remote: &crate::target::Remote) -> String {
    if remote.password.starts_with("tuic_") {
        return format!("Bearer {}", remote.password);
    }
    let credentials = base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", remote.user, remote.password));
    format!("Basic {credentials}")
}

impl Api {
    pub(crate) fn new(target: &Target) -> anyhow::Result<Self> {
        let builder = reqwest::Client::builder().timeout(REQUEST_TIMEOUT).connect_timeout(CONNECT_TIMEOUT);
        let (client, base, authorization, tls) = match target {
            Target::Socket(path) => (builder.unix_socket(path.clone()).build()?, "http://tuic".to_owned(), None, None),
            Target::Remote(remote) => {
                let authorization = authorization(remote);
                let tls = if remote.url.starts_with("https://") { Some(Arc::new(tls_config(remote)?)) } else { None };
                let builder = match &tls {
                    Some(config) => builder.tls_backend_preconfigured((**config).clone()),
                    None => builder,
                };
                (builder.build()?, remote.url.trim_end_matches('/').to_owned(), Some(authorization), tls)
            }
        };
        Ok(Self { client, base, target: target.clone(), authorization, tls })
    }

    pub(crate) fn is_remote(&self) -> bool {
        matches!(self.target, Target::Remote(_))
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let builder = self.client.request(method, format!("{}{path}", self.base));
        match &self.authorization {
            Some(value) => builder.header(reqwest::header::AUTHORIZATION, value),
            None => builder,
        }
    }

    pub(crate) async fn get(&self, path: &str) -> Result<Value, ApiError> {
        answer(self.request(reqwest::Method::GET, path).send().await).await
    }

    pub(crate) async fn send(&self, method: reqwest::Method, path: &str, body: &Value) -> Result<Value, ApiError> {
        answer(self.request(method, path).json(body).send().await).await
    }

    /// A request that may take longer than the usual deadline (an ACP agent's launch).
    pub(crate) async fn send_slow(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &Value,
        timeout: Duration,
    ) -> Result<Value, ApiError> {
        answer(self.request(method, path).json(body).timeout(timeout).send().await).await
    }

    /// A streaming GET (the SSE bus): the response once its headers arrive, without the
    /// per-request deadline that would cut a long-lived stream.
    pub(crate) async fn open_stream(&self, path: &str) -> Result<reqwest::Response, ApiError> {
        let response = self
            .request(reqwest::Method::GET, path)
            .timeout(Duration::from_secs(u64::from(u32::MAX)))
            .send()
            .await
            .map_err(offline)?;
        match response.status().as_u16() {
            200..=299 => Ok(response),
            401 => Err(ApiError::Unauthorized),
            status => {
                let body: Value = response.json().await.unwrap_or_default();
                Err(ApiError::Status(status, body["error"].as_str().unwrap_or("request failed").to_owned()))
            }
        }
    }

    /// Opens a WebSocket on `path` over this connection's transport.
    pub(crate) async fn websocket(&self, path: &str) -> Result<Ws, ApiError> {
        let io: Box<dyn Io> = match &self.target {
            Target::Socket(socket) => Box::new(timed(tokio::net::UnixStream::connect(socket)).await?),
            Target::Remote(remote) => {
                let url = reqwest::Url::parse(&remote.url).map_err(|e| ApiError::Offline(e.to_string()))?;
                let host = url.host_str().unwrap_or("localhost").to_owned();
                let port = url.port_or_known_default().unwrap_or(80);
                let tcp = timed(tokio::net::TcpStream::connect((host.as_str(), port))).await?;
                match &self.tls {
                    None => Box::new(tcp),
                    Some(config) => {
                        let name = rustls_pki_types::ServerName::try_from(host)
                            .map_err(|e| ApiError::Offline(e.to_string()))?;
                        let connector = tokio_rustls::TlsConnector::from(config.clone());
                        Box::new(timed(connector.connect(name, tcp)).await?)
                    }
                }
            }
        };
        let ws_base = self.base.replacen("http", "ws", 1);
        let mut request =
            format!("{ws_base}{path}").into_client_request().map_err(|e| ApiError::Offline(e.to_string()))?;
        if let Some(value) = &self.authorization
            && let Ok(value) = value.parse()
        {
            request.headers_mut().insert("authorization", value);
        }
        match tokio_tungstenite::client_async(request, io).await {
            Ok((ws, _)) => Ok(ws),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => match response.status().as_u16() {
                401 => Err(ApiError::Unauthorized),
                status => Err(ApiError::Status(status, format!("the stream was refused ({status})"))),
            },
            Err(e) => Err(ApiError::Offline(e.to_string())),
        }
    }
}

async fn timed<T>(connect: impl Future<Output = std::io::Result<T>>) -> Result<T, ApiError> {
    match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(Ok(io)) => Ok(io),
        Ok(Err(e)) => Err(ApiError::Offline(e.to_string())),
        Err(_) => Err(ApiError::Offline("connect timed out".into())),
    }
}

fn offline(e: reqwest::Error) -> ApiError {
    ApiError::Offline(if e.is_timeout() { "no answer within 5 s".into() } else { e.to_string() })
}

async fn answer(response: Result<reqwest::Response, reqwest::Error>) -> Result<Value, ApiError> {
    let response = response.map_err(offline)?;
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap_or_default();
    match status {
        200..=299 => Ok(body),
        401 => Err(ApiError::Unauthorized),
        _ => Err(ApiError::Status(status, body["error"].as_str().unwrap_or("request failed").to_owned())),
    }
}

/// The TLS client config: the given CA file, else the system's trust store.
fn tls_config(remote: &crate::target::Remote) -> anyhow::Result<rustls::ClientConfig> {
    use rustls_pki_types::pem::PemObject as _;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider).with_safe_default_protocol_versions()?;
    let config = match &remote.ca_cert {
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in rustls_pki_types::CertificateDer::pem_file_iter(path)? {
                roots.add(cert?)?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => {
            use rustls_platform_verifier::BuilderVerifierExt as _;
            builder.with_platform_verifier()?.with_no_client_auth()
        }
    };
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(password: &str) -> crate::target::Remote {
        crate::target::Remote { url: "https://h:1".into(), user: "me".into(), password: password.into(), ca_cert: None }
    }

    #[test]
    fn a_token_goes_as_a_bearer_and_a_password_as_basic_credentials() {
        assert_eq!(authorization(&remote("tuic_ab12cd34_secret")), "Bearer tuic_ab12cd34_secret");
        assert_eq!(
            authorization(&remote("pw")),
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("me:pw"))
        );
    }
}
