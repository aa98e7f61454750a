//! Confident questions on screen: numbered choice dialogs (`❯ 1. Yes` / `  2. No`) and
//! single-row letter prompts (`(Y)es/(N)o [Yes]:`).
//!
//! A numbered list alone is prose. A dialog needs all of: 2 to [`CHOICE_MAX_OPTIONS`] options
//! numbered 1, 2, 3... in consecutive rows, a highlighted option or a dialog footer, a title
//! above that asks (ends with `?` or uses a question verb), and nothing but footer rows below.

use super::super::adapters::{is_border, normalise_row};
use super::super::event::{ChoiceOption, ChoicePrompt};
use crate::limits::CHOICE_MAX_OPTIONS;

/// Glyphs that mark the highlighted option.
const HIGHLIGHT: &[char] = &['❯', '›', '●', '>', '▶', '→', '▸'];
/// Words a dialog footer uses; any other row under the options means they are prose.
const FOOTER_WORDS: &[&str] = &["esc", "enter", "tab", "cancel", "confirm", "shortcuts", "select", "navigate"];
const TITLE_PHRASES: &[&str] =
    &["do you want", "would you like", "proceed", "allow", "approve", "confirm", "select", "choose", "permission"];
/// How far above the options the title may be: descriptions, commands and diffs sit in between
/// (Claude Code's trust dialog puts nine rows there).
const TITLE_SEARCH_ROWS: usize = 12;
const FOOTER_MAX_ROWS: usize = 3;
/// Rows one option may wrap onto (a long path in Claude Code's "don't ask again for ..." option).
const OPTION_WRAP_ROWS: usize = 2;

pub(super) struct OptionRow {
    pub(super) number: usize,
    pub(super) label: String,
    pub(super) highlighted: bool,
}

/// Finds a numbered choice dialog in `rows` (the bottom of the screen, top to bottom).
pub(crate) fn numbered_choice(raw: &[&str]) -> Option<ChoicePrompt> {
    let rows: Vec<&str> = raw.iter().map(|r| normalise_row(r)).collect();
    let is_option: Vec<bool> = rows.iter().map(|r| option_row(r).is_some()).collect();
    let last = is_option.iter().rposition(|o| *o)?;
    let first = first_option(raw, &rows, &is_option, last);
    let mut options: Vec<OptionRow> = Vec::new();
    for row in &rows[first..=last] {
        match (option_row(row), options.last_mut()) {
            (Some(parsed), _) => options.push(parsed),
            // A long option wraps onto the next row, indented under its label.
            (None, Some(previous)) => previous.label = format!("{} {row}", previous.label),
            (None, None) => {}
        }
    }
    let numbered_in_order = options.iter().enumerate().all(|(i, o)| o.number == i + 1);
    if !numbered_in_order || !(2..=CHOICE_MAX_OPTIONS).contains(&options.len()) {
        return None;
    }
    let below: Vec<&str> = rows[last + 1..].iter().copied().filter(|r| !is_border(r)).collect();
    let footer_only = below.len() <= FOOTER_MAX_ROWS && below.iter().all(|r| is_footer(r));
    let has_footer = !below.is_empty();
    if !footer_only || !(options.iter().any(|o| o.highlighted) || has_footer) {
        return None;
    }
    // The dialog's own question outranks a nearer row that merely ends with `?` (Codex shows the
    // model's `Reason: ...?` between its question and the options).
    let above = &rows[first.saturating_sub(TITLE_SEARCH_ROWS)..first];
    let title = above
        .iter()
        .rev()
        .find(|r| !is_border(r) && dialog_phrase(r))
        .or_else(|| above.iter().rev().find(|r| !is_border(r) && asks(r)))?
        .to_string();
    let all_text = rows[first..].join("\n").to_lowercase();
    let mut prompt = ChoicePrompt {
        title,
        options: options.into_iter().map(|o| to_option(o.number.to_string(), &o.label, o.highlighted)).collect(),
        dismiss_key: None,
        amend_key: all_text.contains("tab to amend").then(|| "tab".to_owned()),
    };
    let esc_dismisses =
        all_text.contains("esc to cancel") || prompt.options.iter().any(|o| o.hint.as_deref() == Some("esc"));
    prompt.dismiss_key = esc_dismisses.then(|| "cancel".to_owned());
    Some(prompt)
}

/// The first row of the option block ending at `last`: option rows in a row, where a wrapped
/// option may continue on up to [`OPTION_WRAP_ROWS`] rows indented deeper than its own row.
fn first_option(raw: &[&str], rows: &[&str], is_option: &[bool], last: usize) -> usize {
    let indent = |i: usize| {
        let row = raw[i].trim_start_matches(' ');
        let row = row.strip_prefix(['│', '┃', '║']).unwrap_or(row);
        raw[i].len() - row.trim_start_matches(' ').len()
    };
    let mut first = last;
    while first > 0 {
        let above = first - 1;
        if is_option[above] {
            first = above;
            continue;
        }
        let owner = (above.saturating_sub(OPTION_WRAP_ROWS)..above).rev().find(|&j| is_option[j]);
        match owner {
            Some(j) if (j + 1..=above).all(|k| !rows[k].is_empty() && indent(k) > indent(j)) => first = j,
            _ => break,
        }
    }
    first
}

/// Parses a letter prompt row: `Add foo.py to the chat? (Y)es/(N)o/(A)ll [Yes]:`.
pub(crate) fn letter_choice(row: &str) -> ChoicePrompt {
    let row = normalise_row(row);
    let title = row.find(" (").map_or(row, |at| &row[..at]).trim().to_owned();
    let default = row.rfind('[').and_then(|at| row[at + 1..].split(']').next()).unwrap_or("").to_lowercase();
    let options = row
        .split(['/', ' '])
        .filter_map(|word| {
            let rest = word.strip_prefix('(')?;
            let (key, tail) = rest.split_once(')')?;
            let key = key.chars().next().filter(|c| c.is_alphanumeric() && key.chars().count() == 1)?;
            let label = format!("{key}{tail}");
            let highlighted = !default.is_empty() && label.to_lowercase() == default;
            Some(to_option(key.to_lowercase().to_string(), &label, highlighted))
        })
        .collect();
    ChoicePrompt { title, options, dismiss_key: None, amend_key: None }
}

pub(super) fn option_row(row: &str) -> Option<OptionRow> {
    let (highlighted, rest) = match row.strip_prefix(HIGHLIGHT) {
        Some(rest) => (true, rest.trim_start()),
        None => (false, row),
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 2 {
        return None;
    }
    let number = rest[..digits].parse().ok()?;
    let label = rest[digits..].strip_prefix(['.', ')'])?.strip_prefix(' ')?.trim();
    (!label.is_empty()).then(|| OptionRow { number, label: label.to_owned(), highlighted })
}

fn is_footer(row: &str) -> bool {
    let row = row.to_lowercase();
    FOOTER_WORDS.iter().any(|w| row.contains(w))
}

pub(super) fn asks(row: &str) -> bool {
    row.trim_end().ends_with('?') || dialog_phrase(row)
}

/// A row using one of the words dialogs ask with (`Do you want`, `Allow`, ...).
fn dialog_phrase(row: &str) -> bool {
    let lower = row.to_lowercase();
    TITLE_PHRASES.iter().any(|p| lower.contains(p))
}

pub(super) fn to_option(key: String, label: &str, highlighted: bool) -> ChoiceOption {
    let (label, hint) = match label.strip_suffix(')').and_then(|l| l.rfind(" (").map(|at| (at, l))) {
        Some((at, l)) if l.len() - at <= 24 => (l[..at].trim_end(), Some(l[at + 2..].to_owned())),
        _ => (label, None),
    };
    let lower = label.to_lowercase();
    let destructive = lower == "no"
        || lower.starts_with("no,")
        || lower.starts_with("no ")
        || ["reject", "deny", "abort", "cancel"].iter().any(|w| lower.starts_with(w));
    ChoiceOption { key, label: label.to_owned(), highlighted, destructive, hint, send: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_wrapped_onto_a_second_row_still_makes_a_dialog() {
        // Claude Code 2.1.197 asking to run an MCP tool (tests/agents, the spawn check).
        let rows = [
            " Tool use",
            "   tuic - session(action: \"list\") (MCP)",
            " Do you want to proceed?",
            " ❯ 1. Yes",
            "   2. Yes, and don't ask again for tuic - session commands in",
            "      /work/main/target/agents-bed/bed-wnnvcn3g/repo",
            "   3. No",
            " Esc to cancel · Tab to amend",
        ];
        let prompt = numbered_choice(&rows).expect("a dialog");
        assert_eq!(prompt.title, "Do you want to proceed?");
        assert_eq!(prompt.options.len(), 3);
        assert!(prompt.options[1].label.ends_with("commands in /work/main/target/agents-bed/bed-wnnvcn3g/repo"));
        let prose = ["Steps?", "1. Build", "   then wait", "2. Test", "Done."];
        assert!(numbered_choice(&prose).is_none(), "prose with an indented line stays prose");
    }

    #[test]
    fn a_claude_permission_dialog_is_a_confident_choice() {
        let rows = [
            "│ Bash command                                     │",
            "│   rm -rf build                                   │",
            "│ Do you want to proceed?                          │",
            "│ ❯ 1. Yes                                         │",
            "│   2. Yes, and don't ask again for rm commands    │",
            "│   3. No, and tell Claude what to do differently (esc) │",
            "╰──────────────────────────────────────────────────╯",
        ];
        let prompt = numbered_choice(&rows).unwrap();
        assert_eq!(prompt.title, "Do you want to proceed?");
        assert_eq!(prompt.options.len(), 3);
        assert!(prompt.options[0].highlighted && !prompt.options[0].destructive);
        assert!(!prompt.options[1].destructive);
        assert_eq!(prompt.options[2].label, "No, and tell Claude what to do differently");
        assert_eq!(prompt.options[2].hint.as_deref(), Some("esc"));
        assert!(prompt.options[2].destructive);
        assert_eq!(prompt.dismiss_key.as_deref(), Some("cancel"));
    }

    #[test]
    fn a_dialog_footer_names_the_dismiss_and_amend_keys() {
        let rows = [
            " Would you like to proceed?",
            "",
            " ❯ 1. Yes",
            "   2. No, keep planning",
            "",
            " Esc to cancel · Tab to amend",
        ];
        let prompt = numbered_choice(&rows).unwrap();
        assert_eq!((prompt.dismiss_key.as_deref(), prompt.amend_key.as_deref()), (Some("cancel"), Some("tab")));
        // A footer alone (no highlight) is enough to make it a dialog.
        let rows = ["Pick a model?", "1. fast", "2. smart", "Enter to confirm"];
        assert_eq!(numbered_choice(&rows).unwrap().options.len(), 2);
    }

    #[test]
    fn a_numbered_list_in_prose_is_not_a_dialog() {
        let plan = ["Here is the plan:", "1. Add the parser", "2. Wire it in", "", "> "];
        assert!(numbered_choice(&plan).is_none());
        let asked = ["Which approach do you prefer?", "1. Rewrite it", "2. Patch it", "", "> "];
        assert!(numbered_choice(&asked).is_none(), "a composer below means the agent wants free text");
        let no_title = ["Steps:", "❯ 1. Yes", "  2. No"];
        assert!(numbered_choice(&no_title).is_none());
        let skipped = ["Proceed?", "❯ 1. Yes", "  3. No"];
        assert!(numbered_choice(&skipped).is_none());
    }

    #[test]
    fn aider_letter_prompts_keep_keys_and_the_default() {
        let prompt = letter_choice("Add src/app.py to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: ");
        assert_eq!(prompt.title, "Add src/app.py to the chat?");
        let keys: Vec<_> = prompt.options.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["y", "n", "d"]);
        assert!(prompt.options[0].highlighted);
        assert!(prompt.options[1].destructive);
    }
}
