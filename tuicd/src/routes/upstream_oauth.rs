//! OAuth for upstream MCP servers, for a person at the GUI, the phone page or the CLI:
//! `POST /mcp/upstreams/:name/authorize` starts a flow (the click is the consent) and answers
//! `{authorization_url, as_origin, cross_domain_as}`; `POST /mcp/upstreams/:name/authorize/cancel`
//! ends it; `POST /mcp/oauth/callback {"url"}` takes a redirect URL pasted by a person whose
//! browser cannot reach the daemon's loopback callback port (SSH, the phone).
//! Over TCP only an authenticated person reaches these REST routes, as with `/ui/confirm`.

use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use crate::http::body::{json_response, ok_json, read_json};
use crate::http::{ApiError, ApiResult, Request};
use crate::proxy::oauth::OAuthError;
use crate::state::App;

pub(crate) async fn authorize(app: &App, name: &str) -> ApiResult {
    let server = app.oauth.server_named(name).map_err(api_error)?;
    let started = app.oauth.start(&server).await.map_err(api_error)?;
    ok_json(&started)
}

pub(crate) async fn cancel(app: &App, name: &str) -> ApiResult {
    app.oauth.cancel(name).map_err(api_error)?;
    Ok(json_response(StatusCode::OK, &json!({"ok": true})))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PastedRedirect {
    url: String,
}

pub(crate) async fn pasted_callback(app: &App, req: Request) -> ApiResult {
    let body: PastedRedirect = read_json(req).await?;
    let page = app.oauth.complete_pasted(&body.url).await.map_err(api_error)?;
    if page.success {
        ok_json(&json!({"ok": true, "message": page.message}))
    } else {
        Err(ApiError::Conflict(page.message))
    }
}

fn api_error(e: OAuthError) -> ApiError {
    match e {
        OAuthError::UnknownUpstream(_) | OAuthError::NoFlow(_) => ApiError::NotFound(e.to_string()),
        OAuthError::NotOAuth(_) | OAuthError::BadRedirect(_) => ApiError::BadRequest(e.to_string()),
        OAuthError::Discovery(_) | OAuthError::Registration(_) | OAuthError::Token(_) | OAuthError::TokenRefused(_) => {
            ApiError::UpstreamFailed(e.to_string())
        }
        OAuthError::Store(_) | OAuthError::Config(_) | OAuthError::Callback(_) => ApiError::Unavailable(e.to_string()),
    }
}
