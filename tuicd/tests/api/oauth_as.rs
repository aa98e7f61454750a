//! A small OAuth 2.1 authorization server in front of a protected Streamable HTTP MCP server,
//! for the upstream OAuth tests: RFC 9728 resource metadata, RFC 8414 metadata, RFC 7591
//! registration, an authorize endpoint that approves at once (the scripted browser step) and a
//! token endpoint checking PKCE S256, with short-lived tokens and a switch that rejects every
//! bearer. The AS and the MCP server listen on two loopback addresses of the test's choosing.
//! Scopes: a token holds the scope its authorization asked for (less any the AS withholds), and
//! an MCP method may need more, answered 403 `insufficient_scope` naming it.

#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

#[derive(Debug, Clone)]
pub(crate) struct AsOptions {
    pub as_host: &'static str,
    pub mcp_host: &'static str,
    pub registration: bool,
    /// Access token lifetime; `None` sends no `expires_in`.
    pub token_lifetime: Option<Duration>,
    pub auth_methods: Vec<&'static str>,
    /// A pre-registered confidential client.
    pub client: Option<(&'static str, &'static str)>,
    /// MCP methods and the scope (space-separated) each needs; a token without it is answered
    /// 403 with an `insufficient_scope` challenge naming it.
    pub scope_for: Vec<(&'static str, &'static str)>,
    /// A scope the AS never grants, whatever the authorization asks.
    pub withheld: Option<&'static str>,
    /// An MCP method answered a plain 403 (no challenge) for every token.
    pub forbidden: Option<&'static str>,
    /// `initialize` is answered without a token (the 401 challenge comes at the next method).
    pub open_initialize: bool,
    /// The resource metadata's `scopes_supported`.
    pub scopes_supported: &'static [&'static str],
}

impl Default for AsOptions {
    fn default() -> Self {
        Self {
            as_host: "127.0.0.1",
            mcp_host: "127.0.0.1",
            registration: true,
            token_lifetime: Some(Duration::from_secs(3600)),
            auth_methods: vec!["none", "client_secret_post", "client_secret_basic"],
            client: None,
            scope_for: Vec::new(),
            withheld: None,
            forbidden: None,
            open_initialize: false,
            scopes_supported: &["mcp:tools"],
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub registrations: usize,
    pub code_exchanges: usize,
    pub refreshes: usize,
    pub authorized_mcp_requests: usize,
    /// MCP requests answered 401.
    pub refused_mcp_requests: usize,
    /// Requests to the authorize endpoint.
    pub authorizations: usize,
}

#[derive(Default)]
struct State {
    /// client_id → secret.
    clients: HashMap<String, Option<String>>,
    /// code → (client_id, redirect_uri, challenge, resource).
    codes: HashMap<String, (String, String, String, String)>,
    access: HashMap<String, Instant>,
    refresh: HashMap<String, String>,
    reject_all: bool,
    counts: Counts,
    issued: Vec<String>,
    last_authorize: HashMap<String, String>,
    /// The scope granted with each code, access token and refresh token.
    granted: HashMap<String, String>,
}

pub(crate) struct TestAs {
    pub issuer: String,
    pub mcp_url: String,
    options: AsOptions,
    state: Arc<Mutex<State>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for TestAs {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl TestAs {
    pub(crate) async fn start(options: AsOptions) -> Self {
        let as_listener = tokio::net::TcpListener::bind((options.as_host, 0)).await.unwrap();
        let mcp_listener = tokio::net::TcpListener::bind((options.mcp_host, 0)).await.unwrap();
        let issuer = format!("http://{}", as_listener.local_addr().unwrap());
        let mcp_url = format!("http://{}/mcp", mcp_listener.local_addr().unwrap());
        let mut state = State::default();
        if let Some((id, secret)) = options.client {
            state.clients.insert(id.into(), Some(secret.into()));
        }
        let state = Arc::new(Mutex::new(state));
        let shared = Arc::new(Shared {
            issuer: issuer.clone(),
            mcp_url: mcp_url.clone(),
            options: options.clone(),
            state: state.clone(),
        });
        let tasks = vec![serve(as_listener, shared.clone()), serve(mcp_listener, shared)];
        Self { issuer, mcp_url, options, state, tasks }
    }

    pub(crate) fn counts(&self) -> (usize, usize, usize, usize) {
        let s = self.state.lock().unwrap();
        (s.counts.registrations, s.counts.code_exchanges, s.counts.refreshes, s.counts.authorized_mcp_requests)
    }

    pub(crate) fn refused_mcp_requests(&self) -> usize {
        self.state.lock().unwrap().counts.refused_mcp_requests
    }

    /// Every access and refresh token issued so far.
    pub(crate) fn issued(&self) -> Vec<String> {
        self.state.lock().unwrap().issued.clone()
    }

    /// How many requests reached the authorize endpoint.
    pub(crate) fn authorizations(&self) -> usize {
        self.state.lock().unwrap().counts.authorizations
    }

    /// The query of the last authorize request.
    pub(crate) fn last_authorize(&self) -> HashMap<String, String> {
        self.state.lock().unwrap().last_authorize.clone()
    }

    /// Whether every access token issued so far expires within `left`.
    pub(crate) fn all_within(&self, left: Duration) -> bool {
        let s = self.state.lock().unwrap();
        !s.access.is_empty() && s.access.values().all(|exp| *exp <= Instant::now() + left)
    }

    /// Whether every access token issued so far has expired.
    pub(crate) fn all_expired(&self) -> bool {
        let s = self.state.lock().unwrap();
        !s.access.is_empty() && s.access.values().all(|exp| *exp <= Instant::now())
    }

    /// From now on every bearer is refused (a revoked grant); refreshes still answer.
    pub(crate) fn reject_all(&self, on: bool) {
        self.state.lock().unwrap().reject_all = on;
    }
}

struct Shared {
    issuer: String,
    mcp_url: String,
    options: AsOptions,
    state: Arc<Mutex<State>>,
}

fn serve(listener: tokio::net::TcpListener, shared: Arc<Shared>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            let shared = shared.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let shared = shared.clone();
                    async move { Ok::<_, Infallible>(handle(&shared, req).await) }
                });
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    })
}

fn json_response(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

fn random() -> String {
    URL_SAFE_NO_PAD.encode(uuid::Uuid::new_v4().as_bytes())
}

async fn handle(shared: &Shared, req: Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    let query: HashMap<String, String> =
        form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes()).into_owned().collect();
    let method = req.method().clone();
    let headers = req.headers().clone();
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    match (method.as_str(), path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => json_response(
            StatusCode::OK,
            &json!({"resource": shared.mcp_url, "authorization_servers": [shared.issuer],
                "scopes_supported": shared.options.scopes_supported}),
        ),
        ("GET", "/.well-known/oauth-authorization-server") => {
            let mut metadata = json!({
                "issuer": shared.issuer,
                "authorization_endpoint": format!("{}/authorize", shared.issuer),
                "token_endpoint": format!("{}/token", shared.issuer),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": shared.options.auth_methods,
            });
            if shared.options.registration {
                metadata["registration_endpoint"] = json!(format!("{}/register", shared.issuer));
            }
            json_response(StatusCode::OK, &metadata)
        }
        ("POST", "/register") if shared.options.registration => {
            let request: Value = serde_json::from_slice(&body).unwrap_or_default();
            let mut s = shared.state.lock().unwrap();
            s.counts.registrations += 1;
            let id = format!("dcr-{}", s.counts.registrations);
            s.clients.insert(id.clone(), None);
            json_response(StatusCode::CREATED, &json!({"client_id": id, "redirect_uris": request["redirect_uris"]}))
        }
        ("GET", "/authorize") => authorize(shared, query),
        ("POST", "/token") => token(shared, &headers, &body),
        (_, "/mcp") => mcp(shared, &method, &headers, &body),
        _ => json_response(StatusCode::NOT_FOUND, &json!({"error": "not_found"})),
    }
}

/// Approves at once, as a person who clicks "Allow" would.
fn authorize(shared: &Shared, query: HashMap<String, String>) -> Response<Full<Bytes>> {
    let mut s = shared.state.lock().unwrap();
    s.last_authorize = query.clone();
    s.counts.authorizations += 1;
    let get = |k: &str| query.get(k).cloned().unwrap_or_default();
    let redirect = get("redirect_uri");
    let bad = |why: &str| {
        json_response(StatusCode::BAD_REQUEST, &json!({"error": "invalid_request", "error_description": why}))
    };
    if !s.clients.contains_key(&get("client_id")) {
        return bad("unknown client_id");
    }
    // RFC 8252 §7.3: any port on a loopback redirect.
    if !redirect.starts_with("http://127.0.0.1:")
        || get("code_challenge_method") != "S256"
        || get("code_challenge").is_empty()
    {
        return bad("redirect_uri or PKCE");
    }
    if get("resource") != shared.mcp_url {
        return bad("resource must name the MCP server");
    }
    let code = random();
    s.codes.insert(code.clone(), (get("client_id"), redirect.clone(), get("code_challenge"), get("resource")));
    let withheld = shared.options.withheld.unwrap_or_default();
    let asked = get("scope");
    let granted: Vec<&str> = asked.split_whitespace().filter(|s| *s != withheld).collect();
    s.granted.insert(code.clone(), granted.join(" "));
    let location = format!("{redirect}?code={code}&state={}", get("state"));
    Response::builder().status(StatusCode::FOUND).header("location", location).body(Full::new(Bytes::new())).unwrap()
}

fn token(shared: &Shared, headers: &hyper::HeaderMap, body: &[u8]) -> Response<Full<Bytes>> {
    let form: HashMap<String, String> = form_urlencoded::parse(body).into_owned().collect();
    let mut s = shared.state.lock().unwrap();
    let error = |e: &str| json_response(StatusCode::BAD_REQUEST, &json!({"error": e}));
    // Client authentication: Basic, or the form.
    let (client_id, secret) =
        match headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Basic ")) {
            Some(b64) => {
                let decoded = String::from_utf8(STANDARD.decode(b64).unwrap_or_default()).unwrap_or_default();
                let (id, secret) = decoded.split_once(':').unwrap_or_default();
                (id.to_owned(), Some(secret.to_owned()))
            }
            None => (form.get("client_id").cloned().unwrap_or_default(), form.get("client_secret").cloned()),
        };
    match s.clients.get(&client_id) {
        None => return json_response(StatusCode::UNAUTHORIZED, &json!({"error": "invalid_client"})),
        Some(expected) if expected.is_some() && *expected != secret => {
            return json_response(StatusCode::UNAUTHORIZED, &json!({"error": "invalid_client"}));
        }
        Some(_) => {}
    }
    if form.get("resource") != Some(&shared.mcp_url) {
        return error("invalid_target");
    }
    let granted = form.get("code").or(form.get("refresh_token")).and_then(|k| s.granted.get(k)).cloned();
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some((id, redirect, challenge, _)) = form.get("code").and_then(|c| s.codes.remove(c)) else {
                return error("invalid_grant");
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            if id != client_id
                || form.get("redirect_uri") != Some(&redirect)
                || URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) != challenge
            {
                return error("invalid_grant");
            }
            s.counts.code_exchanges += 1;
        }
        Some("refresh_token") => {
            let Some(owner) = form.get("refresh_token").and_then(|r| s.refresh.remove(r)) else {
                return error("invalid_grant");
            };
            if owner != client_id {
                return error("invalid_grant");
            }
            s.counts.refreshes += 1;
        }
        _ => return error("unsupported_grant_type"),
    }
    let access = format!("at-{}", random());
    let refresh = format!("rt-{}", random());
    let lifetime = shared.options.token_lifetime.unwrap_or(Duration::from_secs(3600));
    s.access.insert(access.clone(), Instant::now() + lifetime);
    s.refresh.insert(refresh.clone(), client_id);
    s.issued.push(access.clone());
    s.issued.push(refresh.clone());
    let granted = granted.unwrap_or_default();
    s.granted.insert(access.clone(), granted.clone());
    s.granted.insert(refresh.clone(), granted.clone());
    let mut answer = json!({"access_token": access, "token_type": "Bearer", "refresh_token": refresh});
    if !granted.is_empty() {
        answer["scope"] = json!(granted);
    }
    if let Some(l) = shared.options.token_lifetime {
        answer["expires_in"] = json!(l.as_secs());
    }
    json_response(StatusCode::OK, &answer)
}

fn mcp(shared: &Shared, method: &hyper::Method, headers: &hyper::HeaderMap, body: &[u8]) -> Response<Full<Bytes>> {
    let bearer = headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    let request: Value = serde_json::from_slice(body).unwrap_or_default();
    let rpc_method = request["method"].as_str().unwrap_or("");
    let open = shared.options.open_initialize && rpc_method == "initialize";
    let valid = open || {
        let mut s = shared.state.lock().unwrap();
        let ok = !s.reject_all && bearer.and_then(|b| s.access.get(b)).is_some_and(|exp| *exp > Instant::now());
        if ok {
            s.counts.authorized_mcp_requests += 1;
        } else {
            s.counts.refused_mcp_requests += 1;
        }
        ok
    };
    if !valid {
        let origin = shared.mcp_url.trim_end_matches("/mcp");
        let challenge = format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\""
        );
        return Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header("www-authenticate", challenge)
            .body(Full::new(Bytes::new()))
            .unwrap();
    }
    if shared.options.forbidden == Some(rpc_method) {
        return json_response(StatusCode::FORBIDDEN, &json!({"error": "forbidden"}));
    }
    let held = bearer.and_then(|b| shared.state.lock().unwrap().granted.get(b).cloned()).unwrap_or_default();
    if let Some((_, needs)) = shared.options.scope_for.iter().find(|(m, _)| *m == rpc_method)
        && !needs.split_whitespace().all(|n| held.split_whitespace().any(|h| h == n))
    {
        let origin = shared.mcp_url.trim_end_matches("/mcp");
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{needs}\", resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\""
        );
        return Response::builder()
            .status(StatusCode::FORBIDDEN)
            .header("www-authenticate", challenge)
            .body(Full::new(Bytes::from_static(b"{\"error\":\"insufficient_scope\"}")))
            .unwrap();
    }
    match method.as_str() {
        "POST" => {}
        "DELETE" => return json_response(StatusCode::OK, &json!({})),
        _ => return Response::builder().status(StatusCode::METHOD_NOT_ALLOWED).body(Full::new(Bytes::new())).unwrap(),
    }
    let Some(id) = request.get("id").cloned() else {
        return Response::builder().status(StatusCode::ACCEPTED).body(Full::new(Bytes::new())).unwrap();
    };
    let result = match request["method"].as_str().unwrap_or("") {
        "initialize" => json!({
            "protocolVersion": request["params"]["protocolVersion"].as_str().unwrap_or("2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "protected-test", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [{"name": "whoami", "description": "Says the caller is authorized.",
            "inputSchema": {"type": "object", "properties": {}}}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "authorized"}]}),
        _ => json!({}),
    };
    let mut response = json_response(StatusCode::OK, &json!({"jsonrpc": "2.0", "id": id, "result": result}));
    response.headers_mut().insert("mcp-session-id", "test-session".parse().unwrap());
    response
}
