//! Secret redaction for text an outside agent reads (terminal screens, file contents): each
//! secret becomes `[REDACTED:<kind>]`, everything else passes through byte for byte.
//!
//! Two kinds of rule: token shapes that are secrets wherever they appear (AWS key ids, GitHub
//! tokens, private key blocks, ...), and `NAME=value` assignments whose name says secret
//! (`.env` lines, exports, YAML/JSON-ish `key: value`), where a placeholder value (`changeme`,
//! `<your-key>`, `${VAR}`, empty) is left alone so examples stay readable.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

struct Shape {
    kind: &'static str,
    pattern: Regex,
}

fn shape(kind: &'static str, pattern: &str) -> Shape {
    Shape { kind, pattern: Regex::new(pattern).expect("a valid built-in pattern") }
}

static SHAPES: LazyLock<Vec<Shape>> = LazyLock::new(|| {
    vec![
        // A whole PEM block; an unterminated one (cut by the screen or a page) to its end.
        shape(
            "private_key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)",
        ),
        shape("aws_access_key_id", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b"),
        shape("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
        shape("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}\b"),
        shape("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}\b"),
        shape("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}\b"),
        shape("openai_key", r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}\b"),
        shape("stripe_key", r"\b[rs]k_live_[A-Za-z0-9]{16,}\b"),
        shape("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
        shape("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        shape("bearer_token", r"(?i)\b(?:authorization:\s*)?bearer\s+[A-Za-z0-9._~+/\-]{16,}=*"),
    ]
});

/// `user:password@` in a URL: the password goes, the rest of the URL stays.
static URL_PASSWORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)([^\s@/]+)(@)").expect("valid"));

/// `NAME=value`, `NAME: value`, `"name": "value"` where NAME says secret.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?im)^([ \t]*(?:export[ \t]+)?["']?[A-Za-z0-9_.\-]*(?:secret|token|passw(?:or)?d|passwd|api[_\-]?key|access[_\-]?key|private[_\-]?key|credentials?|auth)[A-Za-z0-9_.\-]*["']?[ \t]*[=:][ \t]*)(["']?)([^\r\n"']*)(["']?)"#,
    )
    .expect("valid")
});

/// Values an example file carries instead of a secret.
fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() || v.len() < 6 {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    (v.starts_with('<') && v.ends_with('>'))
        || (v.starts_with("${") && v.ends_with('}'))
        || (v.starts_with('$') && v[1..].chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        || v.chars().all(|c| c == 'x' || c == 'X' || c == '*' || c == '.' || c == '-' || c == '_')
        || v.starts_with("[REDACTED")
        || [
            "changeme",
            "change-me",
            "change_me",
            "your",
            "example",
            "placeholder",
            "dummy",
            "todo",
            "replace",
            "none",
            "null",
            "false",
            "true",
        ]
        .iter()
        .any(|p| lower.starts_with(p) || lower.contains(&format!("-{p}")) || lower.contains(&format!("_{p}")))
}

/// `text` with every secret replaced by `[REDACTED:<kind>]`; borrowed when nothing matched.
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    let mut out: Cow<'_, str> = Cow::Borrowed(text);
    for s in SHAPES.iter() {
        if s.pattern.is_match(&out) {
            let replaced = s.pattern.replace_all(&out, format!("[REDACTED:{}]", s.kind).as_str()).into_owned();
            out = Cow::Owned(replaced);
        }
    }
    if URL_PASSWORD.is_match(&out) {
        out = Cow::Owned(URL_PASSWORD.replace_all(&out, "${1}[REDACTED:password]${3}").into_owned());
    }
    if ASSIGNMENT.is_match(&out) {
        let changed = std::cell::Cell::new(false);
        let replaced = ASSIGNMENT.replace_all(&out, |c: &Captures<'_>| {
            let value = &c[3];
            if is_placeholder(value) {
                c[0].to_owned()
            } else {
                changed.set(true);
                format!("{}{}[REDACTED:secret]{}", &c[1], &c[2], &c[4])
            }
        });
        if changed.get() {
            out = Cow::Owned(replaced.into_owned());
        }
    }
    out
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
