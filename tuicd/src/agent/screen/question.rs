//! Questions drawn without a dialog: plain numbered options (`Do you want to proceed?` / `1. Yes`
//! / `2. No`, the question line before or after them), a `[y/N]` prompt, and rows that only look
//! like a question.
//!
//! Typing into an agent answers whatever it is asking, so the last rows are read twice: a
//! confident form is an open question (`awaiting_input`); a weaker one (a last row that asks, or
//! options next to a row that asks) is only *suspected*, which is still enough to hold typed
//! delivery. Rows above the last few, and anything above a ready composer, are output, never a
//! question: the composer is where the agent wants free text.
//!
//! The callers pass content rows: normalised, non-empty, without borders and the adapter's chrome.

use super::super::event::{ChoiceOption, ChoicePrompt};
use super::ScreenQuestion;
use super::choice::{asks, option_row};
use crate::limits::CHOICE_MAX_OPTIONS;

/// How many of the last content rows a suspected question may sit in.
const SUSPECT_ROWS: usize = 3;
/// Yes/no suffixes of a line prompt, lower-cased.
const YES_NO: &[&str] = &["[y/n]", "(y/n)", "[yes/no]", "(yes/no)", "[y/n/a]"];

/// A question in plain form on the last rows, when its form leaves no doubt.
pub(super) fn plain_question(rows: &[&str]) -> Option<ScreenQuestion> {
    let last = *rows.last()?;
    if let Some(question) = yes_no(last) {
        return Some(question);
    }
    // The options end the screen, or only the question line follows them.
    let asked_after = asks(last) && option_row(last).is_none();
    let options_end = if asked_after { rows.len().checked_sub(2)? } else { rows.len() - 1 };
    let first = (0..=options_end).rev().take_while(|&i| option_row(rows[i]).is_some()).last()?;
    let options: Vec<_> = rows[first..=options_end].iter().filter_map(|r| option_row(r)).collect();
    let in_order = options.iter().enumerate().all(|(i, o)| o.number == i + 1);
    if !in_order || !(2..=CHOICE_MAX_OPTIONS).contains(&options.len()) {
        return None;
    }
    let title = if asked_after {
        last
    } else {
        let above = *rows.get(first.checked_sub(1)?)?;
        if !asks(above) || option_row(above).is_some() {
            return None;
        }
        above
    };
    let options =
        options.into_iter().map(|o| super::choice::to_option(o.number.to_string(), &o.label, o.highlighted)).collect();
    let choice = ChoicePrompt { title: title.to_owned(), options, dismiss_key: None, amend_key: None };
    Some(ScreenQuestion { prompt_text: title.to_owned(), choice })
}

/// The row that makes the last rows look like a question, when no confident form matched.
pub(super) fn suspected_question(rows: &[&str]) -> Option<String> {
    let tail = &rows[rows.len().saturating_sub(SUSPECT_ROWS)..];
    let last = *tail.last()?;
    if asks_plainly(last) {
        return Some(last.to_owned());
    }
    let has_options = tail.iter().any(|r| option_row(r).is_some());
    let asking = tail.iter().rev().find(|r| option_row(r).is_none() && asks_plainly(r));
    asking.filter(|_| has_options).map(|r| (*r).to_owned())
}

/// A row ending in a question mark (a trailing colon or prompt glyph allowed) or a yes/no suffix.
fn asks_plainly(row: &str) -> bool {
    let end = row.trim_end().trim_end_matches([':', '>', ' ']);
    end.ends_with('?') || yes_no(row).is_some()
}

fn yes_no(row: &str) -> Option<ScreenQuestion> {
    let lower = row.to_lowercase();
    let (at, suffix) = YES_NO.iter().filter_map(|s| lower.find(s).map(|at| (at, *s))).min()?;
    let title = row[..at].trim().to_owned();
    let original = &row[at..at + suffix.len()];
    let options = [("y", "Yes"), ("n", "No")]
        .into_iter()
        .map(|(key, label)| ChoiceOption {
            key: key.to_owned(),
            label: label.to_owned(),
            highlighted: original.contains(&key.to_uppercase()) && original != original.to_uppercase(),
            destructive: key == "n",
            hint: None,
            send: None,
        })
        .collect();
    let prompt_text = if title.is_empty() { row.trim().to_owned() } else { title.clone() };
    Some(ScreenQuestion { prompt_text, choice: ChoicePrompt { title, options, dismiss_key: None, amend_key: None } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_options_with_the_question_before_or_after_are_confident() {
        let before = ["Working on it", "Do you want to proceed?", "1. Yes", "2. No"];
        let question = plain_question(&before).unwrap();
        assert_eq!((question.prompt_text.as_str(), question.choice.options.len()), ("Do you want to proceed?", 2));
        let after = ["Working on it", "1. Yes", "2. No", "Do you want to proceed?"];
        assert_eq!(plain_question(&after).unwrap().prompt_text, "Do you want to proceed?");
    }

    #[test]
    fn a_yes_no_prompt_is_confident_and_names_its_default() {
        let question = plain_question(&["Deleting 3 files", "Proceed? [y/N] "]).unwrap();
        assert_eq!(question.prompt_text, "Proceed?");
        let keys: Vec<_> = question.choice.options.iter().map(|o| (o.key.as_str(), o.highlighted)).collect();
        assert_eq!(keys, [("y", false), ("n", true)]);
    }

    #[test]
    fn a_numbered_list_in_prose_is_neither_a_question_nor_suspected() {
        let plan = ["Here is the plan:", "1. Add the parser", "2. Wire it in"];
        assert!(plain_question(&plan).is_none());
        assert!(suspected_question(&plan).is_none());
        let done = ["Is the cache warm? Yes, it is.", "1. Add the parser", "2. Wire it in", "All done."];
        assert!(plain_question(&done).is_none() && suspected_question(&done).is_none());
    }

    #[test]
    fn a_question_scrolled_above_the_last_rows_is_output() {
        let rows = ["Should I check the logs?", "checked a", "checked b", "checked c", "all good"];
        assert!(plain_question(&rows).is_none());
        assert!(suspected_question(&rows).is_none());
    }

    #[test]
    fn a_last_row_that_asks_is_suspected_but_not_confident() {
        let rows = ["Built 3 crates", "Shall I also run the tests?"];
        assert!(plain_question(&rows).is_none());
        assert_eq!(suspected_question(&rows).as_deref(), Some("Shall I also run the tests?"));
        let numbered = ["Which one?", "1) fast", "3) smart"];
        assert!(plain_question(&numbered).is_none(), "options out of order");
        assert_eq!(suspected_question(&numbered).as_deref(), Some("Which one?"));
    }
}
