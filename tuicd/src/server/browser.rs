//! Browser-facing rules, checked once for every request on both listeners before anything else
//! (before Basic Auth too, because a browser's preflight carries no credentials):
//! - over TCP, `Host` must be an IP address, `localhost`, or a name in
//!   `services.server.allowed_hosts`: a page that rebinds its DNS name to us still sends its name;
//! - on the socket too, because `ssh -L PORT:.../mcp.sock` hands a browser's requests to it:
//!   there `Host` must be a loopback name (`localhost`, `127.0.0.1`, `[::1]`, any port), `tuic`
//!   (what our clients send), or a name in `services.server.allowed_hosts`;
//! - a present `Origin` must be this server's own (the scheme and `Host` the request came to) or
//!   be listed in `services.server.allowed_origins`, else 403, on every route and on the WebSocket
//!   upgrade; requests without `Origin` (curl, SDKs, the bridge, the GUI) pass untouched;
//! - CORS headers go to listed origins only: a same-origin page needs none;
//! - over TCP, a mutating method needs a header a cross-site form cannot send, so a cached Basic
//!   credential alone never reaches a handler.

use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, StatusCode};

use crate::config::model::ServerConfig;
use crate::config::origins::{hostname_of, normalize_origin};
use crate::http::body::empty;
use crate::http::{ApiError, Caller, Response, Transport};

/// What the guard decided for a request it lets through.
#[derive(Debug, PartialEq)]
pub(super) enum Admission {
    /// Route it; add CORS headers naming this origin to the response when `Some`.
    Route(Option<HeaderValue>),
    /// A CORS preflight from an admitted origin: answer it here.
    Preflight(Option<HeaderValue>),
}

/// The methods that change something; a browser sends these cross-site only with a form post or
/// after a preflight.
fn is_mutating(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Applies the rules above. The error names the setting that would admit the request.
pub(super) fn admit(
    server: &ServerConfig,
    caller: &Caller,
    method: &Method,
    authority: Option<&str>,
    headers: &HeaderMap,
) -> Result<Admission, ApiError> {
    let tcp = matches!(caller.transport, Transport::Tcp { .. });
    if let Some(host) = authority {
        let name = hostname_of(host);
        if tcp && !trusted_host(server, name) {
            return Err(ApiError::Forbidden(format!(
                "Host '{host}' is not a name of this server (DNS rebinding protection); add it to services.server.allowed_hosts"
            )));
        }
        if !tcp && !trusted_socket_host(server, name) {
            return Err(ApiError::Forbidden(format!(
                "Host '{host}' is not a name of this server (DNS rebinding protection): on the socket send Host: tuic or localhost, or add the name to services.server.allowed_hosts"
            )));
        }
    }
    let cors = match headers.get(header::ORIGIN) {
        None => None,
        Some(origin) => {
            let origin_text = origin.to_str().unwrap_or("");
            let normalized = normalize_origin(origin_text);
            let tls = matches!(caller.transport, Transport::Tcp { tls: true, .. });
            let own = authority.map(|a| format!("{}://{}", if tls { "https" } else { "http" }, a.to_ascii_lowercase()));
            let listed = normalized.as_ref().is_some_and(|o| {
                server.allowed_origins.iter().any(|allowed| normalize_origin(allowed).as_ref() == Some(o))
            });
            if listed {
                Some(origin.clone())
            } else if normalized.is_some() && normalized == own {
                None
            } else {
                return Err(ApiError::Forbidden(format!(
                    "Origin '{origin_text}' is not allowed; add it to services.server.allowed_origins to let that page use this server"
                )));
            }
        }
    };
    if *method == Method::OPTIONS && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD) {
        return Ok(Admission::Preflight(cors));
    }
    if tcp && is_mutating(method) && !has_non_simple_header(headers) {
        return Err(ApiError::Forbidden(format!(
            "{method} over remote access needs a JSON Content-Type or an X-Requested-With header (a cross-site form can send neither)"
        )));
    }
    Ok(Admission::Route(cors))
}

/// True when `headers` hold something a plain HTML form cannot set: a Content-Type outside the
/// three form types, `X-Requested-With`, or the MCP session header.
fn has_non_simple_header(headers: &HeaderMap) -> bool {
    if headers.contains_key("x-requested-with") || headers.contains_key("mcp-session-id") {
        return true;
    }
    let Some(content_type) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    !matches!(essence.as_str(), "application/x-www-form-urlencoded" | "multipart/form-data" | "text/plain")
}

/// IP literals cannot be rebound, `localhost` always resolves here, and the user names the rest.
fn trusted_host(server: &ServerConfig, host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok()
        || server.allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
}

/// The socket's own name `tuic` and loopback names: a browser reaching the socket through a
/// tunnel sends the name it resolved, and only a rebound page sends a name that is neither.
fn trusted_socket_host(server: &ServerConfig, host: &str) -> bool {
    host.eq_ignore_ascii_case("tuic")
        || host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
        || server.allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
}

/// The answer to an admitted preflight.
pub(super) fn preflight(cors: Option<HeaderValue>, headers: &HeaderMap) -> Response {
    let mut response = Response::new(empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    if let Some(origin) = cors {
        add_cors(&mut response, origin);
        let out = response.headers_mut();
        out.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, PUT, DELETE, OPTIONS"));
        if let Some(asked) = headers.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
            out.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
        }
        out.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    }
    response
}

/// CORS headers for a listed origin.
pub(super) fn add_cors(response: &mut Response, origin: HeaderValue) {
    let out = response.headers_mut();
    out.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    out.insert(header::ACCESS_CONTROL_ALLOW_CREDENTIALS, HeaderValue::from_static("true"));
    out.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("mcp-session-id, mcp-protocol-version"));
    out.append(header::VARY, HeaderValue::from_static("origin"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    fn tcp(tls: bool) -> Caller {
        Caller::tcp("127.0.0.1:5000".parse().unwrap(), tls)
    }

    fn listed() -> ServerConfig {
        ServerConfig {
            allowed_origins: vec!["https://App.Example".into()],
            allowed_hosts: vec!["tuic.example".into()],
            ..ServerConfig::default()
        }
    }

    #[test]
    fn same_origin_passes_without_cors_headers_and_a_foreign_one_is_refused() {
        let server = ServerConfig::default();
        let own = headers(&[("origin", "http://127.0.0.1:9876")]);
        assert_eq!(
            admit(&server, &tcp(false), &Method::GET, Some("127.0.0.1:9876"), &own).unwrap(),
            Admission::Route(None)
        );
        let own_tls = headers(&[("origin", "https://localhost:9876")]);
        assert!(admit(&server, &tcp(true), &Method::GET, Some("localhost:9876"), &own_tls).is_ok());
        assert!(admit(&server, &tcp(false), &Method::GET, Some("localhost:9876"), &own_tls).is_err());
        let evil = headers(&[("origin", "http://evil.example")]);
        let err = admit(&server, &Caller::ipc(), &Method::GET, Some("tuic"), &evil).unwrap_err();
        assert!(err.to_string().contains("services.server.allowed_origins"), "{err}");
        let null = headers(&[("origin", "null")]);
        assert!(admit(&server, &Caller::ipc(), &Method::GET, Some("null"), &null).is_err());
    }

    #[test]
    fn a_listed_origin_gets_cors_and_its_preflight_is_answered() {
        let origin = headers(&[("origin", "https://app.example"), ("access-control-request-method", "POST")]);
        let admitted = admit(&listed(), &Caller::ipc(), &Method::OPTIONS, Some("tuic"), &origin).unwrap();
        assert_eq!(admitted, Admission::Preflight(Some(HeaderValue::from_static("https://app.example"))));
    }

    #[test]
    fn a_rebinding_host_is_refused_over_tcp_only() {
        let server = listed();
        let none = HeaderMap::new();
        let err = admit(&server, &tcp(false), &Method::GET, Some("evil.example:9876"), &none).unwrap_err();
        assert!(err.to_string().contains("services.server.allowed_hosts"), "{err}");
        for host in ["localhost:9876", "127.0.0.1", "[::1]:9876", "192.168.1.7:9876", "TUIC.example:9876"] {
            assert!(admit(&server, &tcp(false), &Method::GET, Some(host), &none).is_ok(), "{host}");
        }
    }

    #[test]
    fn a_rebinding_host_is_refused_on_the_socket_too() {
        let server = listed();
        let none = HeaderMap::new();
        for host in ["evil.example", "evil.example:9876", "192.168.1.7:9876", "x"] {
            let err = admit(&server, &Caller::ipc(), &Method::GET, Some(host), &none).unwrap_err();
            assert!(err.to_string().contains(&format!("Host '{host}'")), "{err}");
        }
        for host in ["tuic", "TUIC", "localhost", "localhost:9876", "127.0.0.1:9876", "[::1]:9876", "tuic.example"] {
            assert!(admit(&server, &Caller::ipc(), &Method::GET, Some(host), &none).is_ok(), "{host}");
        }
        assert!(admit(&server, &Caller::ipc(), &Method::GET, None, &none).is_ok());
    }

    #[test]
    fn a_form_like_mutation_over_tcp_is_refused() {
        let server = ServerConfig::default();
        let host = Some("127.0.0.1:9876");
        for form in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
            let h = headers(&[("content-type", form)]);
            assert!(admit(&server, &tcp(false), &Method::POST, host, &h).is_err(), "{form}");
        }
        assert!(admit(&server, &tcp(false), &Method::DELETE, host, &HeaderMap::new()).is_err());
        let json = headers(&[("content-type", "application/json")]);
        assert!(admit(&server, &tcp(false), &Method::POST, host, &json).is_ok());
        let xrw = headers(&[("x-requested-with", "fetch")]);
        assert!(admit(&server, &tcp(false), &Method::DELETE, host, &xrw).is_ok());
        assert!(admit(&server, &tcp(false), &Method::GET, host, &HeaderMap::new()).is_ok());
        assert!(admit(&server, &Caller::ipc(), &Method::DELETE, host, &HeaderMap::new()).is_ok());
    }
}
