//! The tower stack around the router, and serving one accepted connection with it. Both
//! listeners use exactly this, so a limit can never differ between them.

use std::sync::Arc;

use http::StatusCode;
use http_body_util::Limited;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::Watcher;
use hyper_util::service::TowerToHyperService;
use tower::ServiceBuilder;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};
use tower_http::timeout::TimeoutLayer;

use super::admission::Slot;
use super::{browser, router};
use crate::http::{ApiError, Caller, Request, Response, Transport};
use crate::limits::{COMPRESSION_MIN_BYTES, MAX_BODY_BYTES, TCP_H2_KEEP_ALIVE, TCP_HEADER_READ_TIMEOUT};
use crate::state::App;

/// Serves one connection until it closes or shutdown drains it.
///
/// Layer order matters: compression wraps bodies above
/// [`COMPRESSION_MIN_BYTES`] and never SSE; the body limit applies before any handler reads; the
/// timeout is innermost and races only the future that produces the response head, so a
/// streaming body (SSE, WebSocket) is never cut off by it.
///
/// `slot` is the TCP listener's admission slot (`admission.rs`): a request that passes Basic Auth
/// marks it, and the connection is closed when the slot says so. IPC connections have none.
pub(super) fn serve_connection<IO>(app: App, caller: Caller, io: IO, watcher: Watcher, slot: Option<Arc<Slot>>)
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let compress_when = SizeAbove::new(COMPRESSION_MIN_BYTES)
        .and(NotForContentType::GRPC)
        .and(NotForContentType::IMAGES)
        .and(NotForContentType::SSE);
    let stack = ServiceBuilder::new()
        .layer(CompressionLayer::new().compress_when(compress_when))
        // Caps the body as it is read; a larger declared `Content-Length` is refused by the
        // reader (`http::body::read_bytes`), so every route answers its own 413 in its own shape.
        .map_request(|req: http::Request<hyper::body::Incoming>| req.map(|b| Limited::new(b, MAX_BODY_BYTES)))
        .layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, app.request_timeout))
        .service(tower::service_fn({
            let slot = slot.clone();
            move |req: Request| {
                let app = app.clone();
                let caller = caller.clone();
                let slot = slot.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(app, caller, slot.as_deref(), req).await) }
            }
        }));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    if slot.is_some() {
        // Remote access only: without a timer hyper applies no header timeout at all, and a
        // client trickling a head a byte at a time would hold its connection for ever. The same
        // HTTP/1 timer closes an idle keep-alive connection. IPC callers are trusted and keep
        // their connections as long as they like.
        builder.http1().timer(TokioTimer::new()).header_read_timeout(TCP_HEADER_READ_TIMEOUT);
        builder.http2().timer(TokioTimer::new()).keep_alive_interval(TCP_H2_KEEP_ALIVE);
    }
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), TowerToHyperService::new(stack));
    // Boxed with explicit bounds: without it rustc cannot prove the connection future `Send` for
    // every lifetime of its boxed error (a higher-ranked inference limitation).
    let watched: std::pin::Pin<Box<dyn Future<Output = Result<(), crate::http::BoxError>> + Send>> =
        Box::pin(watcher.watch(conn.into_owned()));
    // Kept over plain serving: worth >=10% of MCP `session status` p50 in an A/B (benches/mcp.rs);
    // see docs/dev/perf-log.md.
    let watched = super::repoll::Repoll::new(watched);
    tokio::spawn(async move {
        let must_close = async {
            match &slot {
                Some(slot) => slot.must_close().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            ended = watched => if let Err(e) = ended {
                tracing::debug!(error = %e, "connection ended with an error");
            },
            // Dropping the connection future closes the socket.
            () = must_close => tracing::debug!("closed a TCP connection that did not authenticate (or made room)"),
        }
    });
}

/// The browser rules (`browser.rs`) come first, then remote callers authenticate before anything
/// is routed; IPC callers are trusted by the socket's file permissions.
async fn handle(app: App, caller: Caller, slot: Option<&Slot>, req: Request) -> Response {
    let authority = req.uri().authority().map(|a| a.as_str().to_owned());
    let authority = authority.or_else(|| req.headers().get(http::header::HOST)?.to_str().ok().map(str::to_owned));
    let config = app.config.get();
    let cors = match browser::admit(&config.services.server, &caller, req.method(), authority.as_deref(), req.headers())
    {
        Ok(browser::Admission::Route(cors)) => cors,
        Ok(browser::Admission::Preflight(cors)) => return browser::preflight(cors, req.headers()),
        Err(e) => {
            tracing::warn!(method = %req.method(), path = req.uri().path(), reason = %e, "refused a browser request");
            return if req.uri().path() == "/mcp" {
                crate::mcp::transport::forbidden(&e.to_string())
            } else {
                e.into_response()
            };
        }
    };
    drop(config);
    let mut response = serve_admitted(app, caller, slot, req).await;
    if let Some(origin) = cors {
        browser::add_cors(&mut response, origin);
    }
    response
}

async fn serve_admitted(app: App, mut caller: Caller, slot: Option<&Slot>, mut req: Request) -> Response {
    if let Transport::Tcp { peer, tls } = caller.transport {
        let config = app.config.get();
        if let Some(token) = phone_link_token(&req) {
            return match app.auth.check_token(&config.services.auth, &app.tokens, peer.ip(), &token) {
                Ok(grant) => {
                    let max_age = app
                        .tokens
                        .seconds_left(&grant.id)
                        .map_or(config.services.auth.session_token_duration_secs, |left| {
                            left.min(config.services.auth.session_token_duration_secs)
                        });
                    tracing::info!(token = %grant.name, id = %grant.id, "a phone link signed in");
                    phone_link_signed_in(&token, max_age, tls)
                }
                Err(e) => e.into_response(),
            };
        }
        match app.auth.check(&config.services.auth, &app.tokens, peer.ip(), req.headers()).await {
            Ok(grant) => caller.grant = grant,
            Err(e) => return e.into_response(),
        }
        if let Some(slot) = slot {
            slot.authenticated();
        }
    }
    req.extensions_mut().insert(caller.clone());
    let ended = caller.grant.token_id().map(str::to_owned);
    match ended {
        // A request a token authenticated ends when the token is revoked or expires.
        Some(id) => {
            let tokens = app.tokens.clone();
            let body_ended = {
                let (tokens, id) = (tokens.clone(), id.clone());
                async move { tokens.ended(&id).await }
            };
            tokio::select! {
                response = router::route(app, caller, req) => ending_with(response, body_ended),
                () = tokens.ended(&id) => ApiError::Unauthorized("the token was revoked or expired".into()).into_response(),
            }
        }
        None => router::route(app, caller, req).await,
    }
}

/// The response with its body cut when `ended` resolves: an event stream a token opened stops
/// when the token is revoked.
fn ending_with(response: Response, ended: impl Future<Output = ()> + Send + 'static) -> Response {
    use futures_util::StreamExt;
    use http_body_util::BodyExt;
    response.map(|body| {
        let frames = http_body_util::BodyStream::new(body).take_until(Box::pin(ended));
        http_body_util::StreamBody::new(frames).boxed_unsync()
    })
}

/// The token of a phone link, `GET /mobile?token=...`.
fn phone_link_token(req: &Request) -> Option<String> {
    if req.method() != http::Method::GET || req.uri().path() != "/mobile" {
        return None;
    }
    form_urlencoded::parse(req.uri().query()?.as_bytes()).find(|(k, _)| k == "token").map(|(_, v)| v.into_owned())
}

/// The phone link's answer: the token moves into an HttpOnly cookie (so the page, its
/// WebSocket and its event stream carry it) and out of the address bar and history.
fn phone_link_signed_in(token: &str, max_age: u64, tls: bool) -> Response {
    let secure = if tls { "; Secure" } else { "" };
    let cookie = format!(
        "{}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{secure}",
        super::auth::SESSION_COOKIE
    );
    http::Response::builder()
        .status(StatusCode::SEE_OTHER)
        .header(http::header::LOCATION, "/mobile")
        .header(http::header::SET_COOKIE, cookie)
        .header(http::header::CACHE_CONTROL, "no-store")
        .header(http::header::REFERRER_POLICY, "no-referrer")
        .body(crate::http::body::empty())
        .unwrap_or_else(|e| ApiError::Internal(anyhow::anyhow!("building the phone link answer: {e}")).into_response())
}
