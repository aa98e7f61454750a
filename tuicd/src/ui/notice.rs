//! What `ui action=toast` and `ui action=tab` publish, checked before anything goes out: the
//! toast's level and sound (the seed's names, resolved to a concrete sound), and the tab's URL
//! (the three schemes a client can open).

use serde::Serialize;

/// Notification sounds a client plays through the user's settings (the seed's list).
pub(crate) const SOUNDS: [&str; 6] = ["question", "completion", "error", "warning", "info", "attention"];
pub(crate) const LEVELS: [&str; 3] = ["info", "warn", "error"];

/// `mcp-toast`: `{title, message?, level, sound?, origin_repo_path?, origin_session_id?}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Toast {
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub level: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sound: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_repo_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_session_id: Option<String>,
}

/// `ui-tab`: `{id, title, html?, url?, pinned, focus, origin_repo_path?}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Tab {
    pub id: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub pinned: bool,
    pub focus: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_repo_path: Option<String>,
}

/// The toast's level by name.
pub(crate) fn level(name: Option<&str>) -> Result<&'static str, String> {
    let name = name.unwrap_or("info");
    LEVELS.into_iter().find(|l| *l == name).ok_or_else(|| format!("level '{name}' is not one of {}", LEVELS.join(", ")))
}

/// The sound a toast carries: none for false or absent, the level's own for true, else the
/// named one. An unknown name is an error, never a silent toast.
pub(crate) fn sound(level: &'static str, sound: Option<&serde_json::Value>) -> Result<Option<&'static str>, String> {
    use serde_json::Value;
    let expected = || format!("sound must be true, false or one of {}", SOUNDS.join(", "));
    match sound {
        None | Some(Value::Bool(false)) => Ok(None),
        Some(Value::Bool(true)) => Ok(Some(match level {
            "warn" => "warning",
            "error" => "error",
            _ => "info",
        })),
        Some(Value::String(name)) => SOUNDS
            .into_iter()
            .find(|s| s == name)
            .map(Some)
            .ok_or_else(|| format!("sound '{name}' is unknown; {}", expected())),
        Some(_) => Err(expected()),
    }
}

/// Checks a tab's URL against the schemes a client opens: `http(s)://` and `file://` (a
/// sandboxed frame), `tuic://edit/<path>?line=N` (an editor tab; `//` before an absolute path),
/// `tuic://open/<path>` (a preview tab).
pub(crate) fn check_tab_url(url: &str) -> Result<(), String> {
    const SCHEMES: &str = "http://, https://, file://, tuic://edit/<path>?line=N or tuic://open/<path>";
    let bad = |why: &str| Err(format!("url {why}; use {SCHEMES}"));
    if url.chars().any(char::is_control) {
        return bad("contains a control character");
    }
    let lower = url.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("http://").or_else(|| lower.strip_prefix("https://")) {
        return if rest.is_empty() { bad("has no host") } else { Ok(()) };
    }
    if let Some(rest) = lower.strip_prefix("file://") {
        return if rest.starts_with('/') { Ok(()) } else { bad("is a file:// URL without an absolute path") };
    }
    if let Some(rest) = url.strip_prefix("tuic://edit/") {
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        if path.is_empty() {
            return bad("names no file to edit");
        }
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("line", n)) if n.parse::<u32>().is_ok_and(|n| n > 0) => {}
                _ => return bad(&format!("has '{pair}' where only line=N (a positive number) is allowed")),
            }
        }
        return Ok(());
    }
    if let Some(path) = url.strip_prefix("tuic://open/") {
        return if path.is_empty() { bad("names no file to open") } else { Ok(()) };
    }
    let scheme = url.split_once("://").map_or(url, |(s, _)| s);
    bad(&format!("scheme '{scheme}' cannot be opened in a tab"))
}

/// What a caller over remote access (TCP) may open in a tab: `http(s)://` only. `file://` and
/// `tuic://` show files of this machine on the person's screen, which a remote caller must not
/// choose.
pub(crate) fn check_remote_tab_url(url: &str) -> Result<(), String> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(());
    }
    let scheme = url.split_once("://").map_or(url, |(s, _)| s);
    Err(format!(
        "url scheme '{scheme}' opens files of this machine; over remote access only http:// and https:// URLs open in a tab"
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn true_resolves_from_the_level_and_a_name_overrides_it() {
        assert_eq!(sound("warn", Some(&json!(true))), Ok(Some("warning")));
        assert_eq!(sound("error", Some(&json!(true))), Ok(Some("error")));
        assert_eq!(sound("info", Some(&json!(true))), Ok(Some("info")));
        assert_eq!(sound("info", Some(&json!("attention"))), Ok(Some("attention")));
        assert_eq!(sound("info", Some(&json!(false))), Ok(None));
        assert_eq!(sound("info", None), Ok(None));
        assert!(sound("info", Some(&json!("beep"))).unwrap_err().contains("'beep' is unknown"));
        assert!(sound("info", Some(&json!(1))).unwrap_err().contains("true, false or one of"));
        assert!(level(Some("fatal")).unwrap_err().contains("info, warn, error"));
    }

    #[test]
    fn a_tab_opens_the_three_schemes_and_nothing_else() {
        for ok in [
            "https://example.com/x",
            "http://127.0.0.1:8080",
            "file:///tmp/report.html",
            "tuic://edit//Users/x/file.rs?line=42",
            "tuic://edit/src/main.rs",
            "tuic://open/README.md",
        ] {
            assert_eq!(check_tab_url(ok), Ok(()), "{ok}");
        }
        for (bad, named) in [
            ("vscode://file/x", "scheme 'vscode'"),
            ("javascript:alert(1)", "scheme 'javascript:alert(1)'"),
            ("file://relative", "absolute path"),
            ("tuic://edit/", "no file"),
            ("tuic://edit/a.rs?line=x", "line=N"),
            ("tuic://open/", "no file"),
            ("https://a/\nb", "control character"),
        ] {
            let error = check_tab_url(bad).unwrap_err();
            assert!(error.contains(named), "{bad}: {error}");
        }
    }
}
