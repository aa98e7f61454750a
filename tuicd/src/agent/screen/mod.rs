//! Reads one screen (plain rows from the session's vt100 grid) through an [`Adapter`]'s rules.
//!
//! Pure: the caller passes rows, the cursor and the alternate-screen flag, never a vt100 type.
//! Precedence, strongest first: a confident question, a working indicator, the ready composer.

mod choice;
mod question;

pub(crate) use choice::{letter_choice, numbered_choice};

use super::adapters::{Adapter, any_match, is_border, normalise_row};
use super::event::{ChoicePrompt, Intent};
use super::markers::text::{SuggestParse, parse_intent, parse_suggest};
use crate::limits::{SCREEN_SCAN_ROWS, SUGGEST_WRAP_MAX_BYTES, SUGGEST_WRAP_MAX_LINES};

/// One screen as the session's terminal model shows it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Screen<'a> {
    /// Visible rows, top to bottom, as plain text.
    pub rows: &'a [String],
    /// Cursor row and column, zero-based.
    pub cursor: (u16, u16),
    /// The alternate screen is active (a full-screen TUI). No adapter rule needs it yet; it is
    /// part of the contract so one can without changing the session's call.
    pub alternate: bool,
}

/// A confident question read from the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScreenQuestion {
    pub prompt_text: String,
    pub choice: ChoicePrompt,
}

/// What the screen says about the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Question(ScreenQuestion),
    Working,
    Ready,
    Unknown,
}

/// The bottom rows that matter: up to [`SCREEN_SCAN_ROWS`] rows ending at the last non-empty row,
/// and the index of the first of them.
fn bottom<'a>(screen: &Screen<'a>) -> (usize, Vec<&'a str>) {
    let end = screen.rows.iter().rposition(|r| !r.trim().is_empty()).map_or(0, |i| i + 1);
    let start = end.saturating_sub(SCREEN_SCAN_ROWS);
    (start, screen.rows[start..end].iter().map(String::as_str).collect())
}

/// Classifies the screen for `adapter`.
pub(crate) fn read(adapter: &Adapter, screen: &Screen<'_>) -> Verdict {
    let (start, rows) = bottom(screen);
    let non_empty: Vec<(usize, &str)> =
        rows.iter().enumerate().map(|(i, r)| (start + i, normalise_row(r))).filter(|(_, r)| !r.is_empty()).collect();
    let cursor_row = usize::from(screen.cursor.0);
    let ready = non_empty
        .iter()
        .rev()
        .filter(|(_, r)| !is_border(r))
        .take(adapter.ready_scope)
        .any(|(index, r)| any_match(adapter.ready, r) && (!adapter.ready_at_cursor || *index == cursor_row));
    // A line-oriented CLI (Aider) draws its prompt at the cursor only once it reads a new line
    // again: a question or a spinner row above it is what an answered question or an
    // interrupted turn left behind.
    if ready && adapter.ready_at_cursor {
        return Verdict::Ready;
    }
    // A status bar under a dialog is the adapter's chrome, not text that turns the options into prose.
    let without_chrome: Vec<&str> =
        rows.iter().copied().filter(|r| !any_match(adapter.chrome, normalise_row(r))).collect();
    if let Some(choice) = numbered_choice(&without_chrome) {
        return Verdict::Question(ScreenQuestion { prompt_text: choice.title.clone(), choice });
    }
    if !adapter.confirm_prompts.is_empty()
        && let Some((_, row)) =
            non_empty.iter().rev().take(adapter.ready_scope.max(3)).find(|(_, r)| any_match(adapter.confirm_prompts, r))
    {
        let choice = letter_choice(row);
        let prompt_text = if choice.title.is_empty() { row.to_string() } else { choice.title.clone() };
        return Verdict::Question(ScreenQuestion { prompt_text, choice });
    }
    if let Some(asked) = question::plain_question(&content_rows(adapter, &rows)) {
        return Verdict::Question(asked);
    }
    if non_empty.iter().any(|(_, r)| any_match(adapter.working, r)) {
        return Verdict::Working;
    }
    if ready { Verdict::Ready } else { Verdict::Unknown }
}

/// The row that makes the last rows look like a question although no confident form matched
/// (see [`question`]). A ready composer at the bottom asks for free text: nothing above it counts.
pub(crate) fn suspected_question(adapter: &Adapter, screen: &Screen<'_>) -> Option<String> {
    let (_, rows) = bottom(screen);
    let rows = content_rows(adapter, &rows);
    if rows.last().is_some_and(|row| any_match(adapter.ready, row)) {
        return None;
    }
    question::suspected_question(&rows)
}

/// The bottom rows that carry text: normalised, without empty rows, borders and the adapter's chrome.
fn content_rows<'a>(adapter: &Adapter, rows: &[&'a str]) -> Vec<&'a str> {
    rows.iter()
        .map(|row| normalise_row(row))
        .filter(|row| !row.is_empty() && !is_border(row) && !any_match(adapter.chrome, row))
        .collect()
}

/// Rows that change without being output: the adapter's chrome, working and ready rows, and
/// borders. Movement in any other row is real output.
pub(crate) fn is_chrome(adapter: &Adapter, row: &str) -> bool {
    let row = normalise_row(row);
    is_border(row) || any_match(adapter.chrome, row) || any_match(adapter.working, row) || any_match(adapter.ready, row)
}

/// The plain-text markers visible on a screen.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ScreenMarkers {
    /// Every complete `suggest: [ ... ]` marker, top to bottom (soft-wrapped rows joined).
    pub suggests: Vec<Vec<String>>,
    /// The bottom-most `intent:` line: the latest one.
    pub intent: Option<Intent>,
}

pub(crate) fn markers(rows: &[String]) -> ScreenMarkers {
    let mut found = ScreenMarkers::default();
    let mut i = 0;
    while i < rows.len() {
        match parse_suggest(&rows[i]) {
            SuggestParse::Complete(items) => found.suggests.push(items),
            SuggestParse::Open => {
                let mut joined = rows[i].trim_end().to_owned();
                for next in rows.iter().skip(i + 1).take(SUGGEST_WRAP_MAX_LINES) {
                    joined = format!("{joined} {}", next.trim());
                    if joined.len() > SUGGEST_WRAP_MAX_BYTES {
                        break;
                    }
                    match parse_suggest(&joined) {
                        SuggestParse::Complete(items) => {
                            found.suggests.push(items);
                            break;
                        }
                        SuggestParse::Open => {}
                        SuggestParse::No => break,
                    }
                }
            }
            SuggestParse::No => {
                if let Some(intent) = parse_intent(&rows[i]) {
                    found.intent = Some(intent);
                }
            }
        }
        i += 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::adapters::by_id;

    fn screen(rows: &[&str]) -> Vec<String> {
        rows.iter().map(|r| r.to_string()).collect()
    }

    #[test]
    fn a_working_spinner_beats_the_visible_composer() {
        let rows = screen(&[
            "⏺ Reading src/main.rs",
            "",
            "✢ Reading files… (12s · esc to interrupt)",
            "",
            "> ",
            "  ? for shortcuts",
        ]);
        let verdict = read(by_id("claude").unwrap(), &Screen { rows: &rows, cursor: (4, 2), alternate: false });
        assert_eq!(verdict, Verdict::Working);
    }

    #[test]
    fn aider_is_ready_only_when_the_prompt_is_at_the_cursor() {
        let rows = screen(&["> add tests", "Sure, here is the plan", "> "]);
        let aider = by_id("aider").unwrap();
        assert_eq!(read(aider, &Screen { rows: &rows, cursor: (2, 2), alternate: false }), Verdict::Ready);
        assert_eq!(read(aider, &Screen { rows: &rows, cursor: (1, 0), alternate: false }), Verdict::Unknown);
    }

    #[test]
    fn wrapped_screen_suggestions_are_joined_and_the_latest_intent_wins() {
        let rows = screen(&["intent: First (One)", "⏺ suggest: [ Run tests |", "  Open PR ]", "intent: Second"]);
        let found = markers(&rows);
        assert_eq!(found.suggests, vec![vec!["Run tests".to_string(), "Open PR".to_string()]]);
        assert_eq!(found.intent.unwrap().text, "Second");
    }
}
