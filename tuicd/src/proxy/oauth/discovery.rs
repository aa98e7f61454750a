//! Discovery's pure rules: the `WWW-Authenticate: Bearer` challenge (RFC 6750 §3, RFC 9728 §5.1),
//! the well-known URLs to try (RFC 9728 §3.1, RFC 8414 §3.1 with the OIDC fallback the MCP
//! authorization spec lists), the metadata documents, the scope to ask for, and whether the
//! authorization server sits on another registrable domain than the MCP server. The fetching is
//! in `fetch`.

use serde::Deserialize;
use url::Url;

/// The parameters of a `Bearer` challenge that discovery uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

/// Parses a `WWW-Authenticate` value; `None` when it holds no `Bearer` challenge. Other schemes
/// in the same header (`Basic realm=...`) are skipped.
pub(crate) fn parse_challenge(header: &str) -> Option<Challenge> {
    let mut rest = header.trim();
    let mut found: Option<Challenge> = None;
    while !rest.is_empty() {
        // A scheme token, then its auth-params up to the next scheme.
        let end = rest.find(|c: char| c.is_whitespace() || c == ',').unwrap_or(rest.len());
        let scheme = &rest[..end];
        rest = rest[end..].trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        let bearer = scheme.eq_ignore_ascii_case("bearer");
        let mut challenge = Challenge::default();
        while let Some((key, value, after)) = auth_param(rest) {
            if bearer {
                match key.to_ascii_lowercase().as_str() {
                    "resource_metadata" => challenge.resource_metadata = Some(value),
                    "scope" => challenge.scope = Some(value),
                    "error" => challenge.error = Some(value),
                    _ => {}
                }
            }
            rest = after.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        }
        if bearer && found.is_none() {
            found = Some(challenge);
        }
        if scheme.is_empty() {
            break;
        }
    }
    found
}

/// The `Bearer` challenge of a 403 that refuses a valid credential for lack of scope (RFC 6750
/// §3.1 `error="insufficient_scope"`); `None` for any other challenge.
pub(crate) fn insufficient_scope(header: &str) -> Option<Challenge> {
    parse_challenge(header).filter(|c| c.error.as_deref().is_some_and(|e| e.eq_ignore_ascii_case("insufficient_scope")))
}

/// One `key=value` or `key="quoted \" value"` at the start of `s`, and what follows it.
fn auth_param(s: &str) -> Option<(String, String, &str)> {
    let eq = s.find('=')?;
    let key = s[..eq].trim();
    if key.is_empty() || key.contains(|c: char| c.is_whitespace() || c == ',' || c == '"') {
        return None;
    }
    let after = s[eq + 1..].trim_start();
    if let Some(quoted) = after.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                '"' => return Some((key.to_owned(), value, &quoted[i + 1..])),
                c => value.push(c),
            }
        }
        Some((key.to_owned(), value, ""))
    } else {
        let end = after.find(|c: char| c == ',' || c.is_whitespace()).unwrap_or(after.len());
        Some((key.to_owned(), after[..end].to_owned(), &after[end..]))
    }
}

/// Where the protected resource metadata of `server` may be: the path-aware URL first, then the
/// origin's (RFC 9728 §3.1; the MCP authorization spec's order).
pub(crate) fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    well_known(server, "oauth-protected-resource", false)
}

/// Where the authorization server metadata of `issuer` may be, in the MCP spec's order: RFC 8414
/// path insertion, OIDC path insertion, then OIDC path appending (for an issuer with a path);
/// `oauth-authorization-server`, then `openid-configuration` at the root otherwise.
pub(crate) fn authorization_server_urls(issuer: &Url) -> Vec<Url> {
    let mut urls = well_known(issuer, "oauth-authorization-server", true);
    urls.extend(well_known(issuer, "openid-configuration", true));
    let path = issuer.path().trim_end_matches('/');
    if !path.is_empty() {
        let mut appended = origin_of(issuer);
        appended.set_path(&format!("{path}/.well-known/openid-configuration"));
        urls.push(appended);
    }
    urls
}

/// `{origin}/.well-known/{suffix}{path}`, and (unless `path_only`) the bare one after it.
fn well_known(url: &Url, suffix: &str, path_only: bool) -> Vec<Url> {
    let path = url.path().trim_end_matches('/');
    let mut inserted = origin_of(url);
    inserted.set_path(&format!("/.well-known/{suffix}{path}"));
    let mut bare = origin_of(url);
    bare.set_path(&format!("/.well-known/{suffix}"));
    if path.is_empty() || path_only { vec![inserted] } else { vec![inserted, bare] }
}

/// The URL with only scheme, host and port.
pub(crate) fn origin_of(url: &Url) -> Url {
    let mut origin = url.clone();
    origin.set_path("/");
    origin.set_query(None);
    origin.set_fragment(None);
    let _ = origin.set_username("");
    let _ = origin.set_password(None);
    origin
}

/// `scheme://host[:port]`, as a person reads it in the consent.
pub(crate) fn origin_text(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// RFC 9728 protected resource metadata (the fields used).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ResourceMetadata {
    #[serde(default)]
    pub resource: Option<String>,
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// RFC 8414 authorization server metadata (the fields used); OIDC discovery has the same names.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct AsMetadata {
    #[serde(default)]
    pub issuer: Option<String>,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
}

/// The scope to request: the user's configured scopes, else the challenge's `scope`, else every
/// scope the resource metadata lists; `None` omits the parameter (MCP's scope selection order,
/// with an explicit configuration first).
pub(crate) fn choose_scope(
    configured: &[String],
    challenge: Option<&Challenge>,
    resource: Option<&ResourceMetadata>,
) -> Option<String> {
    if !configured.is_empty() {
        return Some(configured.join(" "));
    }
    if let Some(scope) = challenge.and_then(|c| c.scope.clone()).filter(|s| !s.trim().is_empty()) {
        return Some(scope);
    }
    resource.and_then(|r| r.scopes_supported.as_ref()).filter(|s| !s.is_empty()).map(|s| s.join(" "))
}

/// RFC 8707's `resource` for the upstream at `server`: the identifier its resource metadata names
/// (`named`), which must be the upstream's URL or a prefix of it (the MCP authorization spec's
/// check, so a token is never asked for another resource); the upstream URL when none is named.
pub(crate) fn resource_parameter(server: &Url, named: Option<&str>) -> Result<String, String> {
    let Some(named) = named else { return Ok(server.to_string()) };
    let prefix = named.trim_end_matches('/');
    let url = server.as_str();
    let matches = url.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '?']));
    if matches {
        Ok(named.to_owned())
    } else {
        Err(format!("the resource metadata names resource {named:?}, not this upstream ({url}); not authorizing"))
    }
}

/// Whether `a` and `b` are on different registrable domains. IP addresses and single-label
/// hosts (`localhost`) are compared whole, so 127.0.0.1 and 127.0.0.2 differ.
pub(crate) fn cross_domain(a: &Url, b: &Url) -> bool {
    registrable_domain(a) != registrable_domain(b)
}

/// The registrable domain ("eTLD+1") of the URL's host, by the common public-suffix shapes: the
/// last two labels, or three under a two-letter country code whose second level is one of the
/// generic ones every registry uses (`example.co.uk`, `example.com.au`). Hosts under a private
/// suffix (`*.github.io`) therefore count as one domain, which at worst omits a warning the
/// issuer-mismatch log line still gives.
pub(crate) fn registrable_domain(url: &Url) -> String {
    let host = match url.host() {
        Some(url::Host::Domain(d)) => d.trim_end_matches('.').to_ascii_lowercase(),
        Some(other) => return other.to_string(),
        None => return String::new(),
    };
    let labels: Vec<&str> = host.split('.').collect();
    let n = labels.len();
    if n <= 2 {
        return host;
    }
    const GENERIC_SECOND_LEVEL: &[&str] = &["co", "com", "net", "org", "gov", "edu", "ac", "or", "ne", "go"];
    let country = labels[n - 1].len() == 2;
    let keep = if country && GENERIC_SECOND_LEVEL.contains(&labels[n - 2]) { 3 } else { 2 };
    labels[n - keep..].join(".")
}

#[cfg(test)]
mod tests;
