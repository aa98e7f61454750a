//! `GET /mobile`: the phone page, and `GET /mobile/<file>` its shell (script, style, web manifest,
//! service worker, icon, and the terminal: xterm.js). Plain HTML, CSS and JS embedded in the binary:
//! no CDN, served same-origin with the API, so over TCP the browser's own Basic Auth prompt covers
//! the page, its `fetch` calls, `/events` and the WebSocket alike.
//!
//! `xterm.js` and `xterm.css` are generated, as ttyd ships its page: `vendor/build.sh` bundles and
//! minifies `@xterm/xterm` and `@xterm/addon-fit` (versions pinned by `vendor/package-lock.json`,
//! licence in `vendor/LICENSE.xterm`) and the output is committed, so `cargo build` needs no node.
//! Responses are gzipped (or brotli'd) by the server's compression layer.

use http::{HeaderValue, header};

use crate::http::body::full;
use crate::http::{ApiError, ApiResult, Response};

/// `(file name, content type, bytes)`: the whole page, every file it loads.
const ASSETS: [(&str, &str, &str); 13] = [
    ("index.html", "text/html; charset=utf-8", include_str!("index.html")),
    ("xterm.js", "text/javascript; charset=utf-8", include_str!("xterm.js")),
    ("xterm.css", "text/css; charset=utf-8", include_str!("xterm.css")),
    ("text.js", "text/javascript; charset=utf-8", include_str!("text.js")),
    ("term.js", "text/javascript; charset=utf-8", include_str!("term.js")),
    ("confirm.js", "text/javascript; charset=utf-8", include_str!("confirm.js")),
    ("upstreams.js", "text/javascript; charset=utf-8", include_str!("upstreams.js")),
    ("acp.js", "text/javascript; charset=utf-8", include_str!("acp.js")),
    ("app.js", "text/javascript; charset=utf-8", include_str!("app.js")),
    ("style.css", "text/css; charset=utf-8", include_str!("style.css")),
    ("manifest.webmanifest", "application/manifest+json", include_str!("manifest.webmanifest")),
    ("sw.js", "text/javascript; charset=utf-8", include_str!("sw.js")),
    ("icon.svg", "image/svg+xml", include_str!("icon.svg")),
];

/// What the page may load and connect to: its own origin only (the WebSocket included). Styles
/// may also be inline: xterm.js writes its palette and cell metrics into `<style>` elements it
/// creates (scripts stay `'self'` only, and the page builds its DOM with `textContent`).
const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; \
                   base-uri 'none'; frame-ancestors 'none'";

pub(crate) async fn page() -> ApiResult {
    asset("index.html").await
}

pub(crate) async fn asset(name: &str) -> ApiResult {
    let Some((_, content_type, body)) = ASSETS.iter().find(|(file, _, _)| *file == name) else {
        return Err(ApiError::NotFound(format!("no file /mobile/{name}")));
    };
    let mut response = Response::new(full(*body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // Revalidated on every load while online; the service worker keeps the shell for offline.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if name == "sw.js" {
        // The worker lives at /mobile/sw.js but controls /mobile itself, one level up.
        headers.insert("service-worker-allowed", HeaderValue::from_static("/mobile"));
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `body` as the server's compression layer sends it to a browser that accepts gzip.
    async fn gzipped(body: &'static str) -> usize {
        use http_body_util::{BodyExt, Full};
        use tower::{Layer, ServiceExt};
        let service = tower_http::compression::CompressionLayer::new().no_br().layer(tower::service_fn(
            move |_: http::Request<Full<bytes::Bytes>>| async move {
                Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(bytes::Bytes::from_static(
                    body.as_bytes(),
                ))))
            },
        ));
        let request = http::Request::builder()
            .header(header::ACCEPT_ENCODING, "gzip")
            .body(Full::new(bytes::Bytes::new()))
            .unwrap();
        let response = service.oneshot(request).await.unwrap();
        assert_eq!(response.headers()[header::CONTENT_ENCODING], "gzip");
        response.into_body().collect().await.unwrap().to_bytes().len()
    }

    /// The whole page (every file it loads, xterm.js included) within 150 KB on the wire.
    #[tokio::test]
    async fn the_page_weighs_under_150_kb_gzipped() {
        let mut total = 0;
        let mut each = Vec::new();
        for (name, _, body) in ASSETS {
            let size = gzipped(body).await;
            each.push(format!("{name} {size}"));
            total += size;
        }
        assert!(total <= 150 * 1024, "{total} bytes gzipped: {}", each.join(", "));
        // The page's own files, beside the generated terminal, stay small.
        let own: usize =
            ASSETS.iter().filter(|(name, _, _)| !name.starts_with("xterm.")).map(|(_, _, b)| b.len()).sum();
        assert!(own <= 120 * 1024, "{own} bytes before compression");
    }

    #[test]
    fn the_page_loads_nothing_from_another_origin() {
        for (name, _, body) in ASSETS {
            // XML namespace names (xterm.js creates XHTML and SVG elements) are names, never loaded.
            let body = body.replace("http://www.w3.org/", "");
            for scheme in ["http://", "https://", "//cdn", "ws://", "wss://"] {
                assert!(!body.contains(scheme) || name == "icon.svg", "{name} names {scheme}");
            }
        }
    }

    #[test]
    fn the_terminal_is_the_generated_bundle_with_its_licence() {
        let (_, _, script) = ASSETS.iter().find(|(name, _, _)| *name == "xterm.js").unwrap();
        assert!(script.starts_with("/*! xterm.js "), "xterm.js is not vendor/build.sh's output");
        assert!(include_str!("vendor/LICENSE.xterm").contains("The xterm.js authors"));
        assert!(include_str!("vendor/package-lock.json").contains("\"node_modules/@xterm/xterm\""));
    }
}
