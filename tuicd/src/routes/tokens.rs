//! `GET|POST /auth/tokens`, `DELETE /auth/tokens/{id}`: the scoped tokens remote callers use
//! (see [`crate::principals`]); `tuicd token` and the GUI speak these.

use std::collections::BTreeMap;

use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use crate::http::body::{json_response, ok_json, read_json};
use crate::http::{ApiError, ApiResult, Request};
use crate::principals::tokens::{NewToken, TokenError, parse_ttl};
use crate::principals::{Kind, Scope};
use crate::state::App;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateToken {
    name: String,
    /// observe | drive | admin (across the daemon); ignored when `sessions` names them.
    #[serde(default)]
    scope: Option<String>,
    /// person (default) | agent.
    #[serde(default)]
    kind: Option<String>,
    /// Session (id, tuic_session or alias) → observe | drive: only these sessions.
    #[serde(default)]
    sessions: Option<BTreeMap<String, String>>,
    /// 90s, 30m, 12h, 7d or never; default 30 days.
    #[serde(default)]
    ttl: Option<String>,
}

pub(crate) async fn list(app: &App) -> ApiResult {
    ok_json(&json!({"tokens": app.tokens.list()}))
}

pub(crate) async fn create(app: &App, req: Request) -> ApiResult {
    let body: CreateToken = read_json(req).await?;
    let kind = match body.kind.as_deref() {
        None | Some("person") => Kind::Person,
        Some("agent") => Kind::Agent,
        Some(other) => return Err(ApiError::InvalidField(format!("kind: {other:?} is not person or agent"))),
    };
    let scope = match body.scope.as_deref() {
        None if body.sessions.is_some() => Scope::Observe,
        None => return Err(ApiError::InvalidField(format!("scope: required, one of {}", Scope::NAMES))),
        Some(name) => Scope::parse(name)
            .ok_or_else(|| ApiError::InvalidField(format!("scope: {name:?} is not one of {}", Scope::NAMES)))?,
    };
    let sessions = match body.sessions {
        None => None,
        Some(named) => {
            let mut resolved = BTreeMap::new();
            for (reference, scope) in named {
                let session = app
                    .sessions
                    .resolve_live(&reference)
                    .map_err(|_| ApiError::InvalidField(format!("sessions: no live session {reference:?}")))?;
                let scope = Scope::parse(&scope).ok_or_else(|| {
                    ApiError::InvalidField(format!("sessions.{reference}: {scope:?} is not observe or drive"))
                })?;
                resolved.insert(session.id.clone(), scope);
            }
            Some(resolved)
        }
    };
    let ttl = match body.ttl.as_deref() {
        None => Some(crate::limits::TOKEN_DEFAULT_TTL),
        Some(text) => parse_ttl(text).map_err(ApiError::InvalidField)?,
    };
    let (info, token) =
        app.tokens.create(NewToken { name: body.name, kind, scope, sessions, ttl }).map_err(|e| match e {
            TokenError::Invalid(m) => ApiError::InvalidField(m),
            TokenError::Full => ApiError::Conflict(e.to_string()),
            TokenError::Save(e) => ApiError::Internal(e.into()),
        })?;
    tracing::info!(id = %info.id, name = %info.name, scope = info.scope.name(), "token created");
    let (link, note) = match phone_link(app, &token) {
        Ok(link) => (Some(link), None),
        Err(note) => (None, Some(note)),
    };
    Ok(json_response(
        StatusCode::CREATED,
        &json!({"token": token, "info": info, "phone_link": link, "phone_link_note": note}),
    ))
}

pub(crate) async fn revoke(app: &App, id: &str) -> ApiResult {
    match app.tokens.revoke(id) {
        Ok(true) => {
            tracing::info!(id, "token revoked");
            ok_json(&json!({"ok": true}))
        }
        Ok(false) => Err(ApiError::NotFound(format!("no token {id:?} (tuicd token list shows them)"))),
        Err(e) => Err(ApiError::Internal(anyhow::anyhow!(e.to_string()))),
    }
}

/// The phone link for `token`: the TCP listener's address as a phone reaches it, or why there is
/// none to give.
fn phone_link(app: &App, token: &str) -> Result<String, String> {
    let config = app.config.get();
    let server = &config.services.server;
    let Some(address) = app.tcp.address() else {
        return Err("remote access is off: enable services.server to use the token from another device".into());
    };
    let scheme = if config.services.tls.paths().is_some() { "https" } else { "http" };
    let host = match server.allowed_hosts.first() {
        Some(host) => host.clone(),
        None if !address.ip().is_unspecified() => match address.ip() {
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        },
        None => {
            return Err(format!(
                "the listener binds {}: put the name the phone uses in services.server.allowed_hosts",
                address.ip()
            ));
        }
    };
    let encoded: String = form_urlencoded::byte_serialize(token.as_bytes()).collect();
    Ok(format!("{scheme}://{host}:{}/mobile?token={encoded}", address.port()))
}
