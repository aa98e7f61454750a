//! The loopback callback server of one flow, on 127.0.0.1:0. It lives the flow's timeout plus
//! the grace period, so a redirect that comes late gets a page naming the reason and the retry
//! step instead of the browser's "can't connect"; it closes 2 s after a successful callback.
//! When the flow's timeout passes it runs the sweep, which moves an abandoned flow's upstream
//! back to `needs_auth`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::OAuth;
use super::start::CallbackQuery;
use crate::limits::OAUTH_CALLBACK_CLOSE;

/// The HTML page a redirect gets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Page {
    pub(crate) status: u16,
    pub title: String,
    pub message: String,
    pub success: bool,
}

impl Page {
    pub(super) fn success(name: &str) -> Self {
        Self {
            status: 200,
            title: "Authorized".into(),
            message: format!(
                "tuicd is now authorized for the upstream MCP server \u{201c}{name}\u{201d}. You can close this tab."
            ),
            success: true,
        }
    }

    pub(super) fn failure(name: &str, reason: &str) -> Self {
        Self {
            status: 400,
            title: "Authorization failed".into(),
            message: format!(
                "The authorization of \u{201c}{name}\u{201d} failed: {reason}. To try again, click Authorize in tuic or run `tuicd upstream authorize {name}`."
            ),
            success: false,
        }
    }

    /// A redirect for a flow that is not pending (any more).
    pub(super) fn late(reason: &str) -> Self {
        Self {
            status: 410,
            title: "Authorization not pending".into(),
            message: format!(
                "tuicd did not use this redirect: {reason}. To try again, click Authorize in tuic or run `tuicd upstream authorize NAME`."
            ),
            success: false,
        }
    }

    fn html(&self) -> String {
        format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>{t}</title></head><body><h1>{t}</h1><p>{m}</p></body></html>",
            t = escape(&self.title),
            m = escape(&self.message)
        )
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Serves flow `state`'s callback on `listener` until its lifetime ends.
pub(super) fn serve(oauth: Arc<OAuth>, listener: TcpListener, state: String, started: Instant) {
    let flow_deadline = tokio::time::Instant::from_std(started + oauth.timing.flow_timeout);
    let close_at = flow_deadline + oauth.timing.callback_grace;
    let (done_tx, mut done_rx) = watch::channel(false);
    tokio::spawn(async move {
        let mut swept = false;
        let mut close_at = close_at;
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let oauth = oauth.clone();
                    let state = state.clone();
                    let done = done_tx.clone();
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                            let oauth = oauth.clone();
                            let state = state.clone();
                            let done = done.clone();
                            async move {
                                let page = answer(&oauth, &state, &req).await;
                                if page.success {
                                    let _ = done.send(true);
                                }
                                Ok::<_, Infallible>(
                                    hyper::Response::builder()
                                        .status(page.status)
                                        .header("content-type", "text/html; charset=utf-8")
                                        .header("cache-control", "no-store")
                                        .body(Full::new(Bytes::from(page.html())))
                                        .unwrap_or_default(),
                                )
                            }
                        });
                        let _ = http1::Builder::new().keep_alive(false).serve_connection(TokioIo::new(stream), service).await;
                    });
                }
                _ = tokio::time::sleep_until(flow_deadline), if !swept => {
                    swept = true;
                    oauth.sweep();
                }
                changed = done_rx.changed() => {
                    if changed.is_ok() && *done_rx.borrow() {
                        close_at = close_at.min(tokio::time::Instant::now() + OAUTH_CALLBACK_CLOSE);
                    }
                }
                _ = tokio::time::sleep_until(close_at) => break,
            }
        }
    });
}

async fn answer(oauth: &OAuth, own_state: &str, req: &hyper::Request<hyper::body::Incoming>) -> Page {
    if req.uri().path() != "/callback" {
        return Page {
            status: 404,
            title: "Not found".into(),
            message: "This port serves only /callback.".into(),
            success: false,
        };
    }
    let query: CallbackQuery = serde_urlencoded::from_str(req.uri().query().unwrap_or("")).unwrap_or_default();
    match query.state.as_deref() {
        Some(state) if state == own_state => oauth.complete(state, &query).await,
        Some(_) => Page::late("this redirect's state belongs to no authorization waiting on this port"),
        None => Page::late("the redirect carries no state"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_escape_what_the_server_sent_and_name_the_retry_step() {
        let page = Page::failure("docs", "the authorization server answered <script>");
        let html = page.html();
        assert!(html.contains("&lt;script&gt;"));
        assert!(!html.contains("<script>"));
        assert!(html.contains("tuicd upstream authorize docs"));
        assert_eq!(Page::late("this authorization request expired").status, 410);
    }
}
