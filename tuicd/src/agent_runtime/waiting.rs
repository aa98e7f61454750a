//! "Waiting for input" for any program, not only known agents. A session with no known agent in
//! its foreground is waiting for input when both hold:
//! - the terminal's foreground process is asleep reading the terminal ([`super::probe::terminal_read`]:
//!   its wait channel is a tty read, or, in raw mode, a poll on its input; a shell's own line
//!   editor at its prompt never counts), and
//! - the screen ends with a question ([`question_on`]): the last non-blank row at or above the
//!   cursor, trimmed, ends with `?` or `:`, or with a choice hint in brackets (`[y/N]`, `(y/n)`,
//!   `[Y/n/q]`, `(yes/no)`), optionally followed by `?` or `:`. Numbered rows (`1) a`, `1. a`,
//!   `[1] a`) right above the question, or between it and the cursor, are its options; without
//!   them a choice hint's letters are.
//!
//! The question is reported as `awaiting_input` with `question_text` (and `choice_prompt` when it
//! has options). An option's `send` is what picks it: its key then Enter for a line read
//! (canonical mode), the key alone for a raw-mode program (a TUI menu).

use crate::agent::event::{ChoiceOption, ChoicePrompt};

/// How far above the cursor the question may be.
const QUESTION_ROWS_UP: usize = 12;
/// The longest question reported.
const QUESTION_MAX_CHARS: usize = 200;

/// A program waiting on the terminal after a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Waiting {
    pub question: String,
    /// Options, each with its `send`.
    pub options: Vec<ChoiceOption>,
}

impl Waiting {
    pub(crate) fn choice(&self) -> Option<ChoicePrompt> {
        (!self.options.is_empty()).then(|| ChoicePrompt {
            title: self.question.clone(),
            options: self.options.clone(),
            dismiss_key: None,
            amend_key: None,
        })
    }
}

/// The question the screen ends with (see the module docs); `line`: the program reads a line.
pub(crate) fn question_on(rows: &[String], cursor: (u16, u16), line: bool) -> Option<Waiting> {
    let last = usize::from(cursor.0).min(rows.len().checked_sub(1)?);
    let first = last.saturating_sub(QUESTION_ROWS_UP);
    let mut at = (first..=last).rev().find(|&i| !rows[i].trim().is_empty())?;
    let mut numbered = Vec::new();
    // Options between the question and the cursor.
    while let Some(option) = numbered_option(&rows[at]) {
        numbered.push(option);
        at = at.checked_sub(1).filter(|&i| i >= first)?;
    }
    let question = rows[at].trim();
    let hint = question_form(question)?;
    // Options right above the question.
    if numbered.is_empty() {
        numbered.extend((first..at).rev().map_while(|i| numbered_option(&rows[i])));
    }
    numbered.reverse();
    let enter = if line { "\r" } else { "" };
    let options: Vec<ChoiceOption> = if numbered.is_empty() {
        hint.iter()
            .map(|part| {
                let key = part.to_lowercase();
                let label = match key.as_str() {
                    "y" | "yes" => "Yes".to_owned(),
                    "n" | "no" => "No".to_owned(),
                    _ => part.clone(),
                };
                let default = part.chars().any(|c| c.is_uppercase()) && hint.iter().any(|p| p.to_lowercase() == *p);
                ChoiceOption {
                    send: Some(format!("{key}{enter}")),
                    destructive: key == "n" || key == "no",
                    key,
                    label,
                    highlighted: default,
                    hint: None,
                }
            })
            .collect()
    } else {
        numbered
            .into_iter()
            .map(|(key, label)| ChoiceOption {
                send: Some(format!("{key}{enter}")),
                key,
                label,
                highlighted: false,
                destructive: false,
                hint: None,
            })
            .collect()
    };
    Some(Waiting { question: question.chars().take(QUESTION_MAX_CHARS).collect(), options })
}

/// The question's choice hint's parts (empty without one), if `text` is a question at all.
fn question_form(text: &str) -> Option<Vec<String>> {
    let stripped = text.trim_end_matches(['?', ':']).trim_end();
    if let Some(parts) = choice_hint(stripped) {
        return Some(parts);
    }
    text.ends_with(['?', ':']).then(Vec::new)
}

/// `[y/N]`, `(y/n)`, `[Y/n/q]`, `(yes/no)` at the end of `text`: its parts.
fn choice_hint(text: &str) -> Option<Vec<String>> {
    let close = text.chars().last()?;
    let open = match close {
        ']' => '[',
        ')' => '(',
        _ => return None,
    };
    let inner = &text[text.rfind(open)? + 1..text.len() - 1];
    let parts: Vec<String> = inner.split('/').map(str::to_owned).collect();
    let word = |p: &String| (1..=5).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphabetic());
    ((2..=4).contains(&parts.len()) && parts.iter().all(word)).then_some(parts)
}

/// `1) label`, `1. label`, `[1] label` (one or two digits): (key, label).
fn numbered_option(row: &str) -> Option<(String, String)> {
    let row = row.trim();
    let (bracketed, rest) = match row.strip_prefix('[') {
        Some(rest) => (true, rest),
        None => (false, row),
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if !(1..=2).contains(&digits) {
        return None;
    }
    let (key, rest) = rest.split_at(digits);
    let rest = if bracketed { rest.strip_prefix(']')? } else { rest.strip_prefix(['.', ')'])? };
    let label = rest.strip_prefix(' ')?.trim();
    (!label.is_empty()).then(|| (key.to_owned(), label.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(rows: &[&str]) -> Vec<String> {
        rows.iter().map(|r| (*r).to_owned()).collect()
    }

    #[test]
    fn a_yes_no_line_read_is_a_question_whose_options_end_with_enter() {
        let rows = screen(&["$ ./deploy.sh", "Continue? [y/N] ", "", ""]);
        let waiting = question_on(&rows, (1, 16), true).unwrap();
        assert_eq!(waiting.question, "Continue? [y/N]");
        let sends: Vec<_> = waiting.options.iter().map(|o| (o.key.as_str(), o.send.as_deref().unwrap())).collect();
        assert_eq!(sends, [("y", "y\r"), ("n", "n\r")]);
        assert!(waiting.options[1].highlighted && waiting.options[1].destructive);
        // Raw mode: the key alone.
        let raw = question_on(&rows, (1, 16), false).unwrap();
        assert_eq!(raw.options[0].send.as_deref(), Some("y"));
    }

    #[test]
    fn a_colon_prompt_is_a_question_without_options() {
        let rows = screen(&["Name: "]);
        let waiting = question_on(&rows, (0, 6), true).unwrap();
        assert_eq!((waiting.question.as_str(), waiting.options.len()), ("Name:", 0));
        assert!(waiting.choice().is_none());
    }

    #[test]
    fn numbered_rows_above_the_prompt_or_before_the_cursor_are_the_options() {
        let rows = screen(&["1) apple", "2) pear", "#? "]);
        let waiting = question_on(&rows, (2, 3), true).unwrap();
        let picked: Vec<_> =
            waiting.options.iter().map(|o| (o.key.as_str(), o.label.as_str(), o.send.as_deref())).collect();
        assert_eq!(picked, [("1", "apple", Some("1\r")), ("2", "pear", Some("2\r"))]);
        let rows = screen(&["Pick one:", " [1] fast", " [2] safe", ""]);
        let waiting = question_on(&rows, (3, 0), false).unwrap();
        assert_eq!(waiting.question, "Pick one:");
        assert_eq!(waiting.choice().unwrap().options[1].send.as_deref(), Some("2"));
    }

    #[test]
    fn prompts_and_plain_output_are_not_questions() {
        for row in ["root@vm:/tmp# ", "$ ", "% ", "computing 42%", "done.", "> "] {
            assert_eq!(question_on(&screen(&[row]), (0, 2), true), None, "{row}");
        }
        assert_eq!(question_on(&[], (0, 0), true), None);
        // The question must be at or above the cursor.
        assert_eq!(question_on(&screen(&["", "Sure?"]), (0, 0), true), None);
    }
}
