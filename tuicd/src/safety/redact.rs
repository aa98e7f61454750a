//! Secret redaction for text an outside agent reads (terminal screens, command output, file
//! contents, file names): each secret becomes `[REDACTED:<kind>]`, everything else passes through
//! byte for byte, and every line break inside a secret is kept, so line numbers and cursors that
//! count lines mean the same before and after.
//!
//! It is a scanner over the text a reader sees, not a list of line-start patterns:
//! - ANSI escapes are taken out first (a view with a map back to the original bytes), so a
//!   coloured token is the same token;
//! - known token shapes (`ghp_`, `xoxb-`, `sk-ant-`, `AKIA`, ...) are looked for on a view where
//!   a line broken inside a run is joined to the next, so a token split by a terminal's wrap is
//!   still one token; long runs that read as random (Shannon entropy) are secrets too;
//! - `key = value`, `key: value`, `"key": "value"` pairs whose key names a secret are found
//!   anywhere on a line (after `12:`, `+`, `path:line:` prefixes, inside one-line JSON), with
//!   quoted values read to their real closing quote;
//! - private key blocks are tracked by state across the lines: a block whose BEGIN line is above
//!   the window is found from its END line back over its base64 body;
//! - a value is taken for a placeholder only when that is unmistakable (`<...>`, `xxx`, `***`,
//!   `changeme`, `your-...`, `${VAR}`, empty).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// A byte range of the original text that is a secret, and what kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    pub kind: &'static str,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid built-in pattern")
}

/// Token shapes that are secrets wherever they appear.
static SHAPES: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    vec![
        ("aws_access_key_id", re(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b")),
        ("github_token", re(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})")),
        ("gitlab_token", re(r"\bgl(?:pat|dt|soat|ptt|rt|cbt|imt|ft|oas|agent)-[A-Za-z0-9_\-]{20,}")),
        ("slack_token", re(r"\bxox[abposre]-[A-Za-z0-9\-]{10,}")),
        ("slack_token", re(r"\bxapp-[0-9]-[A-Za-z0-9\-]{10,}")),
        ("slack_webhook", re(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/\-]{20,}")),
        ("anthropic_key", re(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
        ("openai_key", re(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
        ("stripe_key", re(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")),
        ("google_api_key", re(r"\bAIza[0-9A-Za-z_\-]{35}")),
        ("npm_token", re(r"\bnpm_[A-Za-z0-9]{36}")),
        ("pypi_token", re(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}")),
        ("vault_token", re(r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}")),
        ("sendgrid_key", re(r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}")),
        ("digitalocean_token", re(r"\bdo[por]_v1_[a-f0-9]{64}")),
        ("shopify_token", re(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}")),
        ("square_token", re(r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}")),
        ("telegram_token", re(r"\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}")),
        ("jwt", re(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ]
});

/// `Authorization: Bearer x` / `Basic x`: the credential after the scheme.
static AUTH_HEADER: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(?:bearer|basic)\s+([A-Za-z0-9._~+/\-]{16,}=*)"));

/// `user:password@` in a URL: the password goes, the rest of the URL stays.
static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:([^\s@/]+)@"));

/// A word that, as (the end of) a key's name, says its value is a secret.
static SECRET_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)passw(?:or)?d|passwd|passphrase|pass|pwd|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|credential|auth",
    )
});

/// Characters of a key's name.
fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.'
}

/// Characters a token or encoded blob is made of; a run of them broken by a line break is joined.
fn is_run_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+' | b'/' | b'=')
}

/// Private key armour lines.
static PEM_BEGIN: LazyLock<Regex> = LazyLock::new(|| re(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"));
static PEM_END: LazyLock<Regex> = LazyLock::new(|| re(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"));

/// What a reader's tools put before a line: `12:` / `12-` (grep -n), `    12\t` (cat -n),
/// `path:12:` / `path:` (grep -r), `+` / `-` (diff). Tried in order on a private key's body lines.
static LINE_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:\s*\d+(?:\t|:|-|\s+)|[^\s:]+:\d+[:\-]|[^\s:]+[:\-]|[+\-! ])"));

/// Quoted strings, for the entropy detector: only what is quoted, as a literal in code is.
static QUOTED_RUN: LazyLock<Regex> = LazyLock::new(|| re(r#"["'`]([A-Za-z0-9+/=_\-]{20,})["'`]"#));
/// `name=value` / `name: value` with a bare value, for the entropy detector.
static ASSIGNED_RUN: LazyLock<Regex> =
    LazyLock::new(|| re(r"[A-Za-z0-9_\-]\s*[=:]\s*(?:!!binary\s+)?([A-Za-z0-9+/=_\-]{20,})"));
/// Long runs anywhere on a line, for the entropy detector (not on the joined view: there a run
/// ending one `.env` line would swallow the next line's name).
static LONG_RUN: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z0-9+/_\-]{32,}={0,2}"));

/// `text` with every secret replaced by `[REDACTED:<kind>]` (line breaks inside a secret kept);
/// borrowed when nothing was found.
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    let spans = scan(text);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        out.push_str(&text[at..span.start]);
        out.push_str("[REDACTED:");
        out.push_str(span.kind);
        out.push(']');
        out.extend(std::iter::repeat_n('\n', text[span.start..span.end].matches('\n').count()));
        at = span.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// The secrets in `text`: sorted, merged where they overlap, on character boundaries.
pub(crate) fn scan(text: &str) -> Vec<Span> {
    let seen = View::without_escapes(text);
    let joined = seen.joined();
    let view = &seen.text;
    let mut spans = Vec::new();
    for (kind, shape) in SHAPES.iter() {
        // On the lines as they are, and joined where a token may have been cut by a line break.
        // A joined match where the lines as they are already hold one is that token running
        // into the next line's first word (`GITHUB_TOKEN=ghp_...` then `DEBUG=1`): not taken.
        let whole: Vec<Span> = shape.find_iter(view).map(|m| seen.span(m.start(), m.end(), kind)).collect();
        for m in shape.find_iter(&joined.text) {
            let span = joined.span(m.start(), m.end(), kind);
            if !whole.iter().any(|w| w.start == span.start) {
                spans.push(span);
            }
        }
        spans.extend(whole);
    }
    for (kind, shape) in [("password", &*URL_PASSWORD), ("bearer_token", &*AUTH_HEADER)] {
        for c in shape.captures_iter(view) {
            let g = c.get(1).expect("group 1");
            // `Bearer realm="..."`, `bearer resource_metadata=https://...`: a parameter of a
            // challenge, not a credential.
            let parameter = view[g.end()..].starts_with(|c: char| c.is_alphanumeric() || c == '"' || c == '\\');
            if !is_placeholder(g.as_str()) && !too_short(g.as_str()) && !parameter {
                spans.push(seen.span(g.start(), g.end(), kind));
            }
        }
    }
    for (start, end) in assignments(view) {
        spans.push(seen.span(start, end, "secret"));
    }
    for (start, end) in private_keys(view) {
        spans.push(seen.span(start, end, "private_key"));
    }
    // Entropy only where no detector that knows what it found has spoken: a long run around a
    // known token would otherwise take the key's name with it.
    let mut random = Vec::new();
    for c in QUOTED_RUN.captures_iter(view).chain(ASSIGNED_RUN.captures_iter(view)) {
        let g = c.get(1).expect("group 1");
        if is_random(g.as_str(), 4.0) || is_random_hex(g.as_str()) {
            random.push(seen.span(g.start(), g.end(), "high_entropy"));
        }
    }
    for m in LONG_RUN.find_iter(view) {
        if is_random(m.as_str(), 4.5) {
            random.push(seen.span(m.start(), m.end(), "high_entropy"));
        }
    }
    random.retain(|r| !spans.iter().any(|s| s.start < r.end && r.start < s.end));
    spans.extend(random);
    merge(text, spans)
}

fn merge(text: &str, mut spans: Vec<Span>) -> Vec<Span> {
    spans.retain(|s| s.start < s.end);
    // The earliest start first; at one start the longest, so a block wins over a part of it.
    spans.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for mut span in spans {
        while !text.is_char_boundary(span.start) {
            span.start -= 1;
        }
        while !text.is_char_boundary(span.end) {
            span.end += 1;
        }
        match merged.last_mut() {
            Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}

/// A text as scanned, with the original byte offset of each of its bytes.
struct View {
    text: String,
    /// `map[i]` is the original offset of `text`'s byte `i`; one more entry for the end.
    map: Vec<usize>,
}

impl View {
    /// `text` without ANSI escape sequences (CSI, OSC, two-byte escapes).
    fn without_escapes(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut map = Vec::with_capacity(bytes.len() + 1);
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == 0x1b {
                i = escape_end(bytes, i);
                continue;
            }
            out.push(bytes[i]);
            map.push(i);
            i += 1;
        }
        map.push(bytes.len());
        // Only whole escape sequences (all ASCII) are taken out, so the rest is still UTF-8.
        let text = String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Self { text, map }
    }

    /// This view with a line break removed wherever a run of token characters (8 or more)
    /// ends a line and the next line starts with one: a token wrapped or split over two lines.
    fn joined(&self) -> Self {
        let bytes = self.text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut map = Vec::with_capacity(bytes.len() + 1);
        let mut run = 0usize;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let cr = b == b'\r' && bytes.get(i + 1) == Some(&b'\n');
            if (b == b'\n' || cr) && run >= 8 {
                let next = i + if cr { 2 } else { 1 };
                if bytes.get(next).is_some_and(|c| is_run_char(*c)) {
                    i = next;
                    continue;
                }
            }
            run = if is_run_char(b) { run + 1 } else { 0 };
            out.push(b);
            map.push(self.map[i]);
            i += 1;
        }
        map.push(self.map[bytes.len()]);
        let text = String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Self { text, map }
    }

    /// The original range of this view's `start..end`.
    fn span(&self, start: usize, end: usize, kind: &'static str) -> Span {
        if end <= start {
            // Empty: dropped by `merge`.
            return Span { start: self.map[start], end: self.map[start], kind };
        }
        Span { start: self.map[start], end: self.map[end - 1] + 1, kind }
    }
}

/// Where the escape sequence starting at `bytes[i]` (an ESC) ends.
fn escape_end(bytes: &[u8], i: usize) -> usize {
    match bytes.get(i + 1) {
        // CSI: parameters and intermediates, then one final byte.
        Some(b'[') => {
            let mut j = i + 2;
            while j < bytes.len() && (0x20..0x40).contains(&bytes[j]) {
                j += 1;
            }
            // Only a final byte is taken with it: never half of a character that follows.
            if bytes.get(j).is_some_and(|b| (0x40..0x7f).contains(b)) { j + 1 } else { j }
        }
        // OSC, DCS, APC, PM, SOS: to BEL or ST.
        Some(b']' | b'P' | b'_' | b'^' | b'X') => {
            let mut j = i + 2;
            while j < bytes.len() {
                if bytes[j] == 0x07 {
                    return j + 1;
                }
                if bytes[j] == 0x1b && bytes.get(j + 1) == Some(&b'\\') {
                    return j + 2;
                }
                j += 1;
            }
            j
        }
        // Charset designations take one more byte.
        Some(b'(' | b')' | b'*' | b'+') => {
            if bytes.get(i + 2).is_some_and(u8::is_ascii) {
                i + 3
            } else {
                i + 2
            }
        }
        Some(c) if c.is_ascii() => i + 2,
        _ => i + 1,
    }
}

/// Shannon entropy in bits per character.
pub(crate) fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts.iter().filter(|c| **c > 0).map(|c| f64::from(*c) / n).map(|p| -p * p.log2()).sum()
}

/// A run of base64-ish characters that reads as random: letters and digits mixed, entropy over
/// `threshold`, and not an identifier (words joined by `_` or `-`).
fn is_random(s: &str, threshold: f64) -> bool {
    let digits = s.bytes().filter(u8::is_ascii_digit).count();
    let upper = s.bytes().any(|b| b.is_ascii_uppercase());
    let lower = s.bytes().any(|b| b.is_ascii_lowercase());
    if digits == 0 || !(upper && lower) {
        return false;
    }
    // `SOME_LONG_NAME_V2`, `some-long-name-2024`: every piece a word, not a secret.
    let pieces: Vec<&str> = s.split(['_', '-', '/', '.']).filter(|p| !p.is_empty()).collect();
    if pieces.len() > 1 && pieces.iter().all(|p| p.len() <= 12 && is_wordlike(p)) {
        return false;
    }
    entropy(s) >= threshold
}

/// `Word`, `word`, `WORD`, `word2`: one case run with at most a few trailing digits.
fn is_wordlike(p: &str) -> bool {
    let letters = p.trim_end_matches(|c: char| c.is_ascii_digit());
    p.len() - letters.len() <= 4
        && !letters.is_empty()
        && (letters.bytes().all(|b| b.is_ascii_lowercase())
            || letters.bytes().all(|b| b.is_ascii_uppercase())
            || (letters.as_bytes()[0].is_ascii_uppercase() && letters[1..].bytes().all(|b| b.is_ascii_lowercase())))
}

/// A hex string long enough to be a key (32+), quoted or assigned, with digits and letters.
fn is_random_hex(s: &str) -> bool {
    s.len() >= 32
        && s.bytes().all(|b| b.is_ascii_hexdigit())
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_alphabetic())
        && entropy(s) >= 3.0
}

/// Values that stand in for a secret, unmistakably: empty, `<...>`, `xxx...`, `***`, `...`,
/// `changeme`, `your-...`, `${VAR}`, `$VAR`, `%VAR%`, `{{ var }}`, `{}` holes, `[REDACTED...]`.
pub(crate) fn is_placeholder(value: &str) -> bool {
    static TEMPLATE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^(?:\$\{[A-Za-z0-9_:\-.]*\}|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%|\{\{\s*[A-Za-z0-9_.\-]+\s*\}\}|\{[A-Za-z0-9_:.]*\}|%[sd]|<[^<>]*>|\[REDACTED[^\]]*\])$",
        )
    });
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    v.is_empty()
        || TEMPLATE.is_match(v)
        || v.chars().all(|c| matches!(c, 'x' | 'X' | '*' | '.' | '…' | '#'))
        || ["changeme", "change-me", "change_me", "changeit"].contains(&lower.as_str())
        || lower.starts_with("your-")
        || lower.starts_with("your_")
        || lower.starts_with("<your")
}

/// Words an unquoted value is when it is code, not a secret (`password: String`, `token = None`).
const CODE_WORDS: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "self",
    "this",
    "string",
    "str",
    "bool",
    "int",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "usize",
    "isize",
    "f32",
    "f64",
    "number",
    "object",
    "any",
    "bytes",
    "vec",
    "option",
    "required",
    "optional",
];

/// Whether `key` names a secret: it ends in a word that does (`DB_PASSWORD`, `authToken`,
/// `theapikey`, `client_secret`), it is one run of letters holding one (`fooapikeyfoo`), or it
/// ends in `key`/`hash`/`value` after one (`aws_secret_access_key`, `password_hash`), or it is an
/// environment-style name ending in `_KEY` or `_PASS`.
fn is_secret_key(key: &str) -> bool {
    let key = key.trim_start_matches(['-', '_', '.', '$', '@']);
    let words = words_of(key);
    let Some(last) = words.last().map(String::as_str) else { return false };
    let squashed = words.concat();
    const ENDINGS: &[&str] = &[
        "password",
        "passwd",
        "passphrase",
        "secret",
        "apikey",
        "privatekey",
        "accesskey",
        "secretkey",
        "token",
        "credentials",
        "credential",
    ];
    const INSIDE: &[&str] = &["password", "passwd", "apikey", "privatekey", "secret"];
    const QUALIFIERS: &[&str] = &[
        "password",
        "passwd",
        "secret",
        "token",
        "api",
        "private",
        "access",
        "auth",
        "signing",
        "encryption",
        "master",
        "client",
        "credential",
        "credentials",
    ];
    let env_style = words.len() > 1 && key.bytes().all(|b| !b.is_ascii_lowercase());
    ENDINGS.iter().any(|w| squashed.ends_with(w))
        || words.len() == 1 && INSIDE.iter().any(|w| squashed.contains(w))
        || last == "auth"
        // `$PWD` is the working directory; `DB_PWD` a password.
        || last == "pwd" && words.len() > 1
        || matches!(last, "key" | "hash" | "value" | "pw")
            && words[..words.len() - 1].iter().any(|w| QUALIFIERS.contains(&w.as_str()))
        || env_style && matches!(last, "key" | "pass")
}

/// A name's words, lowercase: split at `_`, `-`, `.` and lower-to-upper case changes.
fn words_of(key: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if matches!(c, '_' | '-' | '.') {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// A value of one to three characters protects nothing; test fixtures use them (`"token": "t"`).
fn too_short(value: &str) -> bool {
    value.trim().chars().count() < 4
}

/// A quoted value that is a sentence for a person (`"needs authorization"`), not a credential.
fn is_prose(value: &str) -> bool {
    value.contains(' ') && value.chars().all(|c| c.is_alphabetic() || " .,'…!?-".contains(c))
}

/// The same name written another way (`NeedsAuth => "needs_auth"`): a label, not a secret.
fn names_itself(value: &str, key: &str) -> bool {
    let squash = |s: &str| s.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
    squash(value) == squash(key)
}

/// The values of `key = value` pairs whose key names a secret, as view ranges.
fn assignments(view: &str) -> Vec<(usize, usize)> {
    let bytes = view.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(m) = SECRET_WORD.find_at(view, from) {
        from = m.end();
        // The whole key around the word.
        let mut start = m.start();
        while start > 0 && is_key_char(bytes[start - 1]) {
            start -= 1;
        }
        let mut end = m.end();
        while end < bytes.len() && is_key_char(bytes[end]) {
            end += 1;
        }
        from = from.max(end);
        let key = &view[start..end];
        if !is_secret_key(key) {
            continue;
        }
        if let Some(range) = value_after(view, start, end) {
            from = from.max(range.1);
            found.push(range);
        }
    }
    found
}

/// The secret value after the key at `view[key_start..key_end]`, if a separator and a value
/// that is not a placeholder or code follow.
fn value_after(view: &str, key_start: usize, key_end: usize) -> Option<(usize, usize)> {
    let bytes = view.as_bytes();
    let line_start = view[..key_start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = view[key_end..].find('\n').map_or(view.len(), |i| key_end + i);
    let line = &bytes[..line_end];
    let key = &view[key_start..key_end];
    let before = &view[line_start..key_start];
    // `Status::NeedsAuth`, `cli_token::create`: a path, not a key.
    if before.ends_with("::") {
        return None;
    }
    let open_quote = before.bytes().last().filter(|b| matches!(b, b'"' | b'\''));
    let mut i = key_end;
    // A quoted key's closing quote, `["secret"]`, PHP's `key[]`, then spaces.
    let key_closed = open_quote.is_some() && line.get(i) == open_quote.as_ref();
    if key_closed {
        i += 1;
    }
    if line.get(i) == Some(&b']') {
        i += 1;
    }
    if line.get(i..i + 2) == Some(b"[]") {
        i += 2;
    }
    let after_key = i;
    while line.get(i).is_some_and(|b| *b == b' ' || *b == b'\t') {
        i += 1;
    }
    let rest = line.get(i..).unwrap_or_default();
    let sep: &[u8] = if rest.starts_with(b"::") || rest.starts_with(b"==") || rest.starts_with(b"=~") {
        return None;
    } else if rest.starts_with(b":=") || rest.starts_with(b"=>") {
        &rest[..2]
    } else if rest.starts_with(b"=") || rest.starts_with(b":") {
        &rest[..1]
    } else if rest.starts_with(b">") && before.ends_with('<') {
        // `<password>value</password>`
        &rest[..1]
    } else if matches!(rest.first(), Some(b'"' | b'\'')) || i > after_key {
        // `apikey "value";`, `apikey'value';`, `--password value`.
        b" "
    } else {
        return None;
    };
    let spaced = sep == b" ";
    if !spaced {
        i += sep.len();
    }
    while line.get(i).is_some_and(|b| *b == b' ' || *b == b'\t') {
        i += 1;
    }
    if line.get(i) == Some(&b'@') && matches!(line.get(i + 1), Some(b'"')) {
        i += 1;
    }
    let first = *line.get(i)?;
    let secret = |start: usize, end: usize| {
        let value = &view[start..end];
        (!is_placeholder(value) && !too_short(value) && !names_itself(value, key)).then_some((start, end))
    };
    if matches!(first, b'"' | b'\'' | b'`') {
        // The key sits inside a string this quote closes (`eprint!("password: ")`, `` `?token=` ``).
        let enclosing = match open_quote {
            Some(q) if !key_closed => q == first,
            Some(_) => before[..before.len() - 1].bytes().filter(|b| *b == first).count() % 2 == 1,
            None => before.bytes().filter(|b| *b == first).count() % 2 == 1,
        };
        if enclosing {
            return None;
        }
        let (start, end, closed_at) = quoted(view, i, line_end);
        if spaced && !key_is_flag(view, key_start) && bytes.get(closed_at) != Some(&b';') {
            return None;
        }
        if is_prose(&view[start..end]) {
            return None;
        }
        return secret(start, end);
    }
    if sep == b">" {
        let close = format!("</{key}");
        let end = view[i..line_end].find(&close).map(|e| i + e)?;
        return secret(i, end);
    }
    if spaced && !key_is_flag(view, key_start) || sep == b"=>" {
        return None;
    }
    // `let token = next;`, `const secret = make()`: code, where only a quoted literal is a value.
    if CODE_ASSIGNMENT.is_match(before) {
        return None;
    }
    // A bare value: to the end of the line after `key:` at the start of a line (YAML, INI), else
    // to the next space (or `&` in a URL's query); trailing quotes and punctuation of the code
    // around it are not part of it.
    let line_keyed = sep == b":" && starts_line(before);
    if sep == b":" && !line_keyed {
        return None;
    }
    let mut end = if line_keyed {
        let rest = &view[i..line_end];
        rest.find(" #").or_else(|| rest.find(" //")).map_or(line_end, |e| i + e)
    } else {
        let stops: &[char] = if before.ends_with(['?', '&']) { &[' ', '\t', '&', '#'] } else { &[' ', '\t'] };
        view[i..line_end].find(stops).map_or(line_end, |e| i + e)
    };
    // Inside a string (`` `GET /mobile?token=...` ``) the value ends where that string does.
    for q in ['"', '\'', '`'] {
        if before.matches(q).count() % 2 == 1 {
            end = view[i..end].find(q).map_or(end, |e| i + e);
        }
    }
    while end > i && matches!(bytes[end - 1], b' ' | b'\t' | b'\r' | b',' | b';' | b'"' | b'\'' | b'`' | b')') {
        end -= 1;
    }
    if is_code(&view[i..end], key, sep == b":") {
        return None;
    }
    secret(i, end)
}

/// What starts a line that declares a variable in code: `let`, `let mut`, `const`, `var`, ...
static CODE_ASSIGNMENT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?:^|[\s(])(?:let(?:\s+mut)?|const|var|val|static|my|local|auto)\s+$"));

/// Whether a key is a command-line flag (`--password`), which takes its value after a space.
fn key_is_flag(view: &str, key_start: usize) -> bool {
    view[..key_start].ends_with("--") || view[key_start..].starts_with("--")
}

/// Whether what precedes a key on its line is only what starts a line: indentation, a YAML
/// list dash, `export`, or a reader's prefix (`12:`, `+`, `path:12:`).
fn starts_line(before: &str) -> bool {
    static START: LazyLock<Regex> = LazyLock::new(|| {
        re(r#"^(?:\s*\d+[\t:\-]|[^\s:]+:(?:\d+[:\-])?|[+\-])?\s*(?:-\s+)?(?:export\s+|set\s+|\$\s*)?["']?$"#)
    });
    START.is_match(before)
}

/// A quoted value starting at `view[open]`: its content range, and where its closing quote ends.
/// The closing quote is the first unescaped one followed by what ends a value (`,`, `;`, `)`,
/// `}`, `]`, a space, the line's end); failing that, the last one on the line; failing that, the
/// line's end. So a quote inside a value does not end it early.
fn quoted(view: &str, open: usize, line_end: usize) -> (usize, usize, usize) {
    let bytes = view.as_bytes();
    let q = bytes[open];
    let mut last = None;
    let mut i = open + 1;
    while i < line_end {
        let b = bytes[i];
        if b == b'\\' {
            i += 2;
            continue;
        }
        if b == q {
            last = Some(i);
            let next = bytes[i + 1..line_end].iter().find(|c| **c != b' ' && **c != b'\t');
            if matches!(next, None | Some(b',' | b';' | b')' | b'}' | b']' | b'#' | b'/' | b'\r' | b'>')) {
                return (open + 1, i, i + 1);
            }
        }
        i += 1;
    }
    match last {
        Some(close) => (open + 1, close, close + 1),
        None => (open + 1, line_end.max(open + 1), line_end),
    }
}

/// Whether a bare value is code rather than a literal: a call, an index, a path, a variable, a
/// type (after `:`), the key's own name.
fn is_code(value: &str, key: &str, colon: bool) -> bool {
    static EXPRESSION: LazyLock<Regex> =
        LazyLock::new(|| re(r"^[&*!]?[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)*(?:[(\[<{?!].*)?$"));
    static PATH: LazyLock<Regex> =
        LazyLock::new(|| re(r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)+$"));
    let lower = value.to_ascii_lowercase();
    match value.as_bytes().first() {
        // A variable, a reference, a call's or a list's opening.
        Some(b'$' | b'&' | b'(' | b'[' | b'%') => return true,
        // An object's opening or a format hole; only `{{...` (not a template) is a literal.
        Some(b'{') => return !value.starts_with("{{"),
        _ => {}
    }
    let is_call = EXPRESSION.is_match(value) && value.contains(['(', '[', '<', '{', '?', '!']);
    let word = value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    CODE_WORDS.contains(&lower.as_str())
        || is_call
        || PATH.is_match(value) && !value.bytes().any(|b| b.is_ascii_digit())
        || lower == key.to_ascii_lowercase()
        // After `:` a capitalised word with no digit is a type (`token: Token`).
        || colon && word && value.as_bytes()[0].is_ascii_uppercase() && !value.bytes().any(|b| b.is_ascii_digit())
            && value.bytes().any(|b| b.is_ascii_lowercase())
}

/// Private key blocks as view ranges: BEGIN to END; BEGIN to the last body line when the END is
/// not in the text; the body lines above an END whose BEGIN is not in the text.
fn private_keys(view: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut open: Option<usize> = None;
    let mut body_start: Option<usize> = None;
    let mut last_body_end = 0;
    let mut at = 0;
    for line in view.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let text = line.trim_end_matches(['\n', '\r']);
        let end = start + text.len();
        if let Some(begin) = open {
            if let Some(m) = PEM_END.find(text) {
                found.push((begin, start + m.end()));
                open = None;
                body_start = None;
                continue;
            }
            if is_body(text) {
                last_body_end = end;
                continue;
            }
            found.push((begin, last_body_end.max(begin)));
            open = None;
        }
        if let Some(m) = PEM_BEGIN.find(text) {
            let rest = &text[m.end()..];
            match PEM_END.find(rest) {
                Some(e) => found.push((start + m.start(), start + m.end() + e.end())),
                None => {
                    open = Some(start + m.start());
                    last_body_end = end;
                }
            }
            body_start = None;
            continue;
        }
        if let Some(m) = PEM_END.find(text) {
            if let Some(body) = body_start {
                found.push((body, start + m.end()));
            }
            body_start = None;
            continue;
        }
        if is_body(text) && text.trim().len() >= 16 {
            body_start.get_or_insert(start);
        } else {
            body_start = None;
        }
    }
    if let Some(begin) = open {
        found.push((begin, last_body_end.max(begin)));
    }
    found
}

/// A private key's body line as a reader sees it: base64, a header (`Proc-Type:`), or blank,
/// after any reader's prefix.
fn is_body(line: &str) -> bool {
    let base64 = |s: &str| s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    let trimmed = line.trim();
    if trimmed.is_empty() || base64(trimmed) {
        return true;
    }
    if ["Proc-Type:", "DEK-Info:", "Comment:", "Version:"].iter().any(|h| trimmed.starts_with(h)) {
        return true;
    }
    LINE_PREFIX.find(line).is_some_and(|p| {
        let rest = line[p.end()..].trim();
        rest.is_empty() || base64(rest)
    })
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
