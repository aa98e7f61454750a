//! Where a `ui-tab` URL goes: the system browser, or the user's editor (through the daemon's
//! `/agents/open-in-app`).

#[derive(Debug, PartialEq)]
pub(crate) enum Link {
    Browser(String),
    Editor { path: String, line: Option<u32> },
    Unsupported(String),
}

pub(crate) fn classify(url: &str) -> Link {
    if url.starts_with("http://") || url.starts_with("https://") || url.starts_with("file://") {
        return Link::Browser(url.to_owned());
    }
    let rest = url.strip_prefix("tuic://edit/").or_else(|| url.strip_prefix("tuic://open/"));
    let Some(rest) = rest else {
        return Link::Unsupported(format!("cannot open {url}: only http(s), file and tuic://edit URLs"));
    };
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let line = query.split('&').find_map(|pair| pair.strip_prefix("line=")).and_then(|n| n.parse().ok());
    // `tuic://edit//abs/path` and `tuic://edit/abs/path` both name `/abs/path`.
    let path = format!("/{}", path.trim_start_matches('/'));
    Link::Editor { path, line }
}

/// The upstream and the URL of an `mcp-oauth-start` event: the page where a person authorizes
/// tuicd at an upstream's authorization server. Only an http(s) URL is opened.
pub(crate) fn authorization(payload: &serde_json::Value) -> Result<(String, String), String> {
    let name = payload["name"].as_str().unwrap_or("an upstream").to_owned();
    match payload["authorization_url"].as_str() {
        Some(url) if url.starts_with("https://") || url.starts_with("http://") => Ok((name, url.to_owned())),
        Some(url) => Err(format!("not opening the authorization page of {name}: {url} is not an http(s) URL")),
        None => Err(format!("the authorization of {name} started without a URL")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authorization_page_opens_only_when_it_is_http() {
        let event = |url: &str| serde_json::json!({"name": "docs", "authorization_url": url});
        assert_eq!(
            authorization(&event("https://as.example/authorize?x=1")),
            Ok(("docs".into(), "https://as.example/authorize?x=1".into()))
        );
        assert!(authorization(&event("file:///etc/passwd")).unwrap_err().contains("not an http(s) URL"));
        assert!(authorization(&serde_json::json!({"name": "docs"})).unwrap_err().contains("without a URL"));
    }

    #[test]
    fn web_and_file_urls_go_to_the_browser_and_edit_urls_to_the_editor() {
        assert_eq!(classify("https://x.dev/a"), Link::Browser("https://x.dev/a".into()));
        assert_eq!(classify("file:///tmp/r.html"), Link::Browser("file:///tmp/r.html".into()));
        assert_eq!(
            classify("tuic://edit/home/me/src/main.rs?line=42"),
            Link::Editor { path: "/home/me/src/main.rs".into(), line: Some(42) }
        );
        assert_eq!(classify("tuic://open//tmp/x"), Link::Editor { path: "/tmp/x".into(), line: None });
        assert!(matches!(classify("javascript:alert(1)"), Link::Unsupported(_)));
    }
}
