//! The plain-text markers an agent prints at the start of a line, shared by the byte-stream
//! parser and the screen reader:
//!
//! - `suggest: [ Run the tests | Open a PR ]` — the explicit end-of-task marker: 2 to
//!   [`SUGGEST_MAX_ITEMS`] items separated by `|`, nothing after the closing `]`. A renderer may
//!   soft-wrap it; the caller joins continuation lines while [`parse_suggest`] says `Open`.
//! - `intent: Reading the auth module (Auth review)` — what the agent is about to do, with an
//!   optional short title in trailing parentheses.
//!
//! Before matching, leading whitespace, box borders (`│`) and one agent bullet (`⏺`, `●`, `•`,
//! `✦`, ...) are removed, because agents print their prose behind such a bullet. Anything else in
//! front (a backtick, a quote, `- `) means the text merely talks about a marker, and it is ignored.

use super::super::event::Intent;
use crate::limits::{INTENT_MAX_CHARS, INTENT_TITLE_MAX_CHARS, SUGGEST_ITEM_MAX_CHARS, SUGGEST_MAX_ITEMS};

/// Bullets that agents put in front of their prose (Claude Code, Codex, Gemini CLI, OpenCode).
const BULLETS: &[char] = &['⏺', '●', '•', '✦', '◆', '▌', '┃', '⎿'];

/// Result of looking for a suggestion marker on one (possibly joined) line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SuggestParse {
    Complete(Vec<String>),
    /// `suggest: [` without its `]` yet: the next line may continue it.
    Open,
    No,
}

/// The line without its leading whitespace, box border and one agent bullet, and without a
/// trailing box border.
pub(crate) fn strip_decoration(line: &str) -> &str {
    let mut s = line.trim_start();
    if let Some(rest) = s.strip_prefix('│') {
        s = rest.trim_start();
    }
    if let Some(rest) = s.strip_prefix(BULLETS) {
        s = rest.trim_start();
    }
    let s = s.trim_end();
    s.strip_suffix('│').map_or(s, str::trim_end)
}

pub(crate) fn parse_suggest(line: &str) -> SuggestParse {
    let s = strip_decoration(line);
    let Some(rest) = s.strip_prefix("suggest:") else { return SuggestParse::No };
    let Some(body) = rest.trim_start().strip_prefix('[') else { return SuggestParse::No };
    let Some(end) = body.find(']') else { return SuggestParse::Open };
    if !body[end + 1..].trim().is_empty() {
        return SuggestParse::No;
    }
    match split_items(&body[..end], 2) {
        Some(items) => SuggestParse::Complete(items),
        None => SuggestParse::No,
    }
}

/// `a | b | c` into items; see [`clean_items`].
pub(crate) fn split_items(body: &str, min: usize) -> Option<Vec<String>> {
    clean_items(body.split('|').map(str::to_owned).collect(), min)
}

/// Items with their whitespace collapsed and cut to [`SUGGEST_ITEM_MAX_CHARS`]; `None` when one
/// is empty or the count is outside `min..=SUGGEST_MAX_ITEMS`.
pub(crate) fn clean_items(items: Vec<String>, min: usize) -> Option<Vec<String>> {
    let items: Vec<String> = items
        .iter()
        .map(|item| cut(item.split_whitespace().collect::<Vec<_>>().join(" "), SUGGEST_ITEM_MAX_CHARS))
        .collect();
    if items.iter().any(String::is_empty) || !(min..=SUGGEST_MAX_ITEMS).contains(&items.len()) {
        return None;
    }
    Some(items)
}

pub(crate) fn parse_intent(line: &str) -> Option<Intent> {
    let rest = strip_decoration(line).strip_prefix("intent:")?.trim();
    if rest.is_empty() {
        return None;
    }
    Some(intent_from(rest, None))
}

/// Builds an intent from its text, taking a trailing `(title)` when no title was given apart.
pub(crate) fn intent_from(text: &str, title: Option<&str>) -> Intent {
    let text = text.trim();
    if let Some(title) = title.map(str::trim).filter(|t| !t.is_empty()) {
        return Intent {
            text: cut(text.to_owned(), INTENT_MAX_CHARS),
            title: Some(cut(title.to_owned(), INTENT_TITLE_MAX_CHARS)),
        };
    }
    if let Some(open) = text.strip_suffix(')').and_then(|t| t.rfind(" (")) {
        let title = &text[open + 2..text.len() - 1];
        let body = text[..open].trim_end();
        if !title.trim().is_empty() && title.chars().count() <= INTENT_TITLE_MAX_CHARS && !body.is_empty() {
            return Intent { text: cut(body.to_owned(), INTENT_MAX_CHARS), title: Some(title.trim().to_owned()) };
        }
    }
    Intent { text: cut(text.to_owned(), INTENT_MAX_CHARS), title: None }
}

fn cut(mut s: String, max_chars: usize) -> String {
    if let Some((at, _)) = s.char_indices().nth(max_chars) {
        s.truncate(at);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(v: &[&str]) -> SuggestParse {
        SuggestParse::Complete(v.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn a_suggestion_marker_behind_an_agent_bullet_is_found() {
        assert_eq!(
            parse_suggest("⏺ suggest: [ Run tests | Open PR | Review diff ]"),
            items(&["Run tests", "Open PR", "Review diff"])
        );
        assert_eq!(parse_suggest("  suggest:[a|b]  "), items(&["a", "b"]));
        assert_eq!(parse_suggest("│ suggest: [ a | b ] │"), items(&["a", "b"]));
    }

    #[test]
    fn text_that_only_mentions_the_marker_is_not_one() {
        assert_eq!(parse_suggest("Print `suggest: [ A | B ]` when done"), SuggestParse::No);
        assert_eq!(parse_suggest("- suggest: [ a | b ]"), SuggestParse::No);
        assert_eq!(parse_suggest("suggest: [ a | b ] and more"), SuggestParse::No);
        assert_eq!(parse_suggest("suggest: [ only one ]"), SuggestParse::No);
        assert_eq!(parse_suggest("suggest: [ a | b | c | d | e ]"), SuggestParse::No);
        assert_eq!(parse_suggest("suggest: [ a | | c ]"), SuggestParse::No);
        assert_eq!(parse_suggest("suggest: [ Run tests | Open"), SuggestParse::Open);
    }

    #[test]
    fn an_intent_line_gives_text_and_an_optional_title() {
        let intent = parse_intent("● intent: Reading the auth module (Auth review)").unwrap();
        assert_eq!(intent, Intent { text: "Reading the auth module".into(), title: Some("Auth review".into()) });
        let intent = parse_intent("intent: Fix the parser (again) for real").unwrap();
        assert_eq!(intent.title, None);
        assert_eq!(parse_intent("intent:   "), None);
        assert_eq!(parse_intent("The intent: is set by tuicd"), None);
        let long = format!("intent: {}", "x".repeat(500));
        assert_eq!(parse_intent(&long).unwrap().text.len(), INTENT_MAX_CHARS);
    }
}
