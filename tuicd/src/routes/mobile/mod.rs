//! `GET /mobile`: the phone page, and `GET /mobile/<file>` its shell (script, style, web manifest,
//! service worker, icon). Plain HTML, CSS and JS embedded in the binary: no CDN and no build step,
//! served same-origin with the API, so over TCP the browser's own Basic Auth prompt covers the
//! page, its `fetch` calls, `/events` and the WebSocket alike.

use http::{HeaderValue, header};

use crate::http::body::full;
use crate::http::{ApiError, ApiResult, Response};

/// `(file name, content type, bytes)`: the whole page, every file it loads.
const ASSETS: [(&str, &str, &str); 10] = [
    ("index.html", "text/html; charset=utf-8", include_str!("index.html")),
    ("text.js", "text/javascript; charset=utf-8", include_str!("text.js")),
    ("confirm.js", "text/javascript; charset=utf-8", include_str!("confirm.js")),
    ("upstreams.js", "text/javascript; charset=utf-8", include_str!("upstreams.js")),
    ("acp.js", "text/javascript; charset=utf-8", include_str!("acp.js")),
    ("app.js", "text/javascript; charset=utf-8", include_str!("app.js")),
    ("style.css", "text/css; charset=utf-8", include_str!("style.css")),
    ("manifest.webmanifest", "application/manifest+json", include_str!("manifest.webmanifest")),
    ("sw.js", "text/javascript; charset=utf-8", include_str!("sw.js")),
    ("icon.svg", "image/svg+xml", include_str!("icon.svg")),
];

/// What the page may load and connect to: its own origin only (the WebSocket included).
const CSP: &str =
    "default-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'";

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

    #[test]
    fn the_page_stays_under_150_kb_before_compression() {
        let total: usize = ASSETS.iter().map(|(_, _, body)| body.len()).sum();
        assert!(total <= 150 * 1024, "{total} bytes");
    }

    #[test]
    fn the_page_loads_nothing_from_another_origin() {
        for (name, _, body) in ASSETS {
            for scheme in ["http://", "https://", "//cdn", "ws://", "wss://"] {
                assert!(!body.contains(scheme) || name == "icon.svg", "{name} names {scheme}");
            }
        }
    }
}
