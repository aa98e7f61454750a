//! The browser allow-lists of `services.server`: how an origin and a host name are written, and
//! the one comparison both the validation and the request guard (`server/browser.rs`) use.

use super::model::ServerConfig;

/// `scheme://host[:port]` lower-cased, without a trailing slash: the form a browser sends in
/// `Origin`. `None` when `origin` is not of that form (a path, user info, `null`, no scheme).
pub(crate) fn normalize_origin(origin: &str) -> Option<String> {
    let origin = origin.trim().trim_end_matches('/');
    let (scheme, authority) = origin.split_once("://")?;
    let scheme_ok = !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    let authority_ok =
        !authority.is_empty() && authority.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._:[]".contains(&b));
    (scheme_ok && authority_ok).then(|| origin.to_ascii_lowercase())
}

/// The host name of `host[:port]` or `[v6]:port`, without the port or brackets.
pub(crate) fn hostname_of(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

/// Refuses entries a browser could never send, naming the key and the entry.
pub(crate) fn validate(server: &ServerConfig) -> Result<(), String> {
    for origin in &server.allowed_origins {
        if normalize_origin(origin).is_none() {
            return Err(format!(
                "services.server.allowed_origins: '{origin}' is not an origin; write scheme://host[:port], e.g. https://tuic.example:9876"
            ));
        }
    }
    for host in &server.allowed_hosts {
        let plain = !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
        if !plain {
            return Err(format!(
                "services.server.allowed_hosts: '{host}' is not a host name; write the name alone, without scheme or port"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_compared_in_the_form_browsers_send() {
        assert_eq!(normalize_origin("HTTPS://Tuic.Example:9876/").as_deref(), Some("https://tuic.example:9876"));
        assert_eq!(normalize_origin("http://[::1]:80").as_deref(), Some("http://[::1]:80"));
        for bad in ["null", "tuic.example", "http://", "http://a/b", "http://u@a", "://a", ""] {
            assert_eq!(normalize_origin(bad), None, "{bad}");
        }
    }

    #[test]
    fn bad_entries_name_the_key() {
        let server = ServerConfig { allowed_origins: vec!["tuic.example".into()], ..ServerConfig::default() };
        assert!(validate(&server).unwrap_err().contains("services.server.allowed_origins"));
        let server = ServerConfig { allowed_hosts: vec!["http://tuic.example".into()], ..ServerConfig::default() };
        assert!(validate(&server).unwrap_err().contains("services.server.allowed_hosts"));
        let server = ServerConfig {
            allowed_origins: vec!["https://tuic.example".into()],
            allowed_hosts: vec!["tuic.example".into()],
            ..ServerConfig::default()
        };
        assert_eq!(validate(&server), Ok(()));
    }

    #[test]
    fn hostname_drops_the_port_and_brackets() {
        assert_eq!(hostname_of("localhost:9876"), "localhost");
        assert_eq!(hostname_of("[::1]:80"), "::1");
        assert_eq!(hostname_of("tuic.example"), "tuic.example");
    }
}
