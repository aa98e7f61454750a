//! The OSC payloads the engine understands (the bytes between `ESC ]` and BEL or `ESC \`).
//!
//! - `133;A` prompt shown, `133;B` command line begins, `133;C` command runs,
//!   `133;D[;<exit>]` command finished (FinalTerm / VS Code shell integration).
//! - `9;4;<state>;<value>` progress (ConEmu / Windows Terminal), state 0..=4, value 0..=100.
//! - `7770;<key>=<value>[;<key>=<value>...]`, tuic's own marker for agent hooks. Keys:
//!   - `state=busy|idle|awaiting` — the agent's own word on its state; `awaiting` may carry
//!     `question=<text>`.
//!   - `suggest=<item>|<item>...` — the end-of-task marker, 1 to 4 items.
//!   - `intent=<text>` with optional `title=<text>`.
//!
//!   Several keys may share one marker. Values are percent-decoded (`%3B` for `;`, `%7C` for `|`,
//!   `%25` for `%`), so any text can be carried. Unknown keys and values are ignored, so older
//!   tuicd versions accept newer hooks.
//! - `0;<title>` and `2;<title>`: the window title. Agent CLIs put their state there (a spinner
//!   while working, a ready or "action required" word); the adapter's title rules read it.
//! - `7501;state=<working|idle|done|blocked>[:kind=<kind>]...`: Codex's own state announcement.

use super::super::event::Intent;
use super::text::{clean_items, intent_from};

/// The agent's own word on its state (OSC 7770 `state=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookState {
    Busy,
    Idle,
    Awaiting,
}

/// One explicit signal found in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Marker {
    /// OSC 133;A: the shell shows its prompt.
    Prompt,
    /// OSC 133;B: the command line begins (the user is typing).
    CommandStart,
    /// OSC 133;C: a command runs.
    CommandExecuted,
    /// OSC 133;D: a command finished.
    CommandFinished(Option<i32>),
    Hook {
        state: HookState,
        question: Option<String>,
    },
    /// OSC 7770 `suggest=`: explicit, never repainted.
    Suggest(Vec<String>),
    /// OSC 7770 `intent=`.
    Intent(Intent),
    /// A `suggest: [ ... ]` line in the text: a repaint can bring an old one back.
    TextSuggest(Vec<String>),
    /// An `intent:` line in the text.
    TextIntent(Intent),
    Progress {
        state: u8,
        value: u8,
    },
    /// OSC 0 / OSC 2: the window title the program set.
    Title(String),
    /// OSC 7501 `state=`: the CLI's own word on its state.
    Announce(Announced),
}

/// A state a CLI announces itself (OSC 7501, or its window title read through the adapter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Announced {
    Working,
    Idle,
    /// Waiting on the person: an approval or a question.
    Blocked,
}

/// Appends the markers one OSC payload carries.
pub(super) fn dispatch(payload: &[u8], out: &mut Vec<Marker>) {
    let payload = String::from_utf8_lossy(payload);
    let (code, rest) = payload.split_once(';').unwrap_or((&payload, ""));
    match code {
        "133" => out.extend(shell_integration(rest)),
        "9" => out.extend(progress(rest)),
        "7770" => tuic_marker(rest, out),
        "0" | "2" => out.push(Marker::Title(rest.to_owned())),
        "7501" => out.extend(announcement(rest).map(Marker::Announce)),
        _ => {}
    }
}

fn shell_integration(rest: &str) -> Option<Marker> {
    let mut parts = rest.split(';');
    Some(match parts.next()? {
        "A" => Marker::Prompt,
        "B" => Marker::CommandStart,
        "C" => Marker::CommandExecuted,
        "D" => Marker::CommandFinished(parts.next().and_then(|code| code.trim().parse().ok())),
        _ => return None,
    })
}

fn progress(rest: &str) -> Option<Marker> {
    let mut parts = rest.split(';');
    if parts.next()? != "4" {
        return None;
    }
    let state: u8 = parts.next()?.trim().parse().ok().filter(|s| *s <= 4)?;
    let value: u8 = parts.next().and_then(|v| v.trim().parse().ok()).unwrap_or(0).min(100);
    Some(Marker::Progress { state, value })
}

/// `state=working|idle|done|blocked[:kind=...]` among `;`-separated fields; `done` is the end of
/// a turn, which for the tracker is idle (completion stays the end-of-task marker's word).
fn announcement(rest: &str) -> Option<Announced> {
    let state = rest.split(';').find_map(|field| field.trim().strip_prefix("state="))?;
    let word = state.split([':', ',', ' ']).next().unwrap_or("");
    Some(match word {
        "working" | "busy" | "running" => Announced::Working,
        "idle" | "done" | "ready" => Announced::Idle,
        "blocked" | "waiting" | "awaiting" => Announced::Blocked,
        _ => return None,
    })
}

fn tuic_marker(rest: &str, out: &mut Vec<Marker>) {
    let (mut state, mut question, mut suggest, mut intent, mut title) = (None, None, None, None, None);
    for field in rest.split(';') {
        let Some((key, value)) = field.split_once('=') else { continue };
        match key.trim() {
            "state" => state = Some(value.trim().to_owned()),
            "question" => question = Some(percent_decode(value)),
            // Items are split before decoding, so an encoded `%7C` stays inside its item.
            "suggest" => suggest = Some(value.split('|').map(percent_decode).collect::<Vec<_>>()),
            "intent" => intent = Some(percent_decode(value)),
            "title" => title = Some(percent_decode(value)),
            _ => {}
        }
    }
    let state = match state.as_deref() {
        Some("busy") => Some(HookState::Busy),
        Some("idle") => Some(HookState::Idle),
        Some("awaiting") => Some(HookState::Awaiting),
        _ => None,
    };
    if let Some(state) = state {
        let question = question.filter(|q| !q.trim().is_empty() && state == HookState::Awaiting);
        out.push(Marker::Hook { state, question });
    }
    if let Some(items) = suggest.and_then(|items| clean_items(items, 1)) {
        out.push(Marker::Suggest(items));
    }
    if let Some(text) = intent.filter(|t| !t.trim().is_empty()) {
        out.push(Marker::Intent(intent_from(&text, title.as_deref())));
    }
}

fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) =
                (bytes.get(i + 1).and_then(|b| hex(*b)), bytes.get(i + 2).and_then(|b| hex(*b)))
        {
            decoded.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        decoded.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(payload: &str) -> Vec<Marker> {
        let mut out = Vec::new();
        dispatch(payload.as_bytes(), &mut out);
        out
    }

    #[test]
    fn shell_integration_markers_carry_the_exit_code() {
        assert_eq!(parse("133;A"), vec![Marker::Prompt]);
        assert_eq!(parse("133;C"), vec![Marker::CommandExecuted]);
        assert_eq!(parse("133;D;2"), vec![Marker::CommandFinished(Some(2))]);
        assert_eq!(parse("133;D"), vec![Marker::CommandFinished(None)]);
        assert_eq!(parse("133;Z"), vec![]);
    }

    #[test]
    fn a_tuic_marker_can_carry_state_suggestions_and_intent_at_once() {
        assert_eq!(
            parse("7770;state=awaiting;question=Deploy%3B now?"),
            vec![Marker::Hook { state: HookState::Awaiting, question: Some("Deploy; now?".into()) }]
        );
        assert_eq!(
            parse("7770;suggest=Run tests|Open a%7Cb PR;intent=Fixing CI;title=CI"),
            vec![
                Marker::Suggest(vec!["Run tests".into(), "Open a|b PR".into()]),
                Marker::Intent(Intent { text: "Fixing CI".into(), title: Some("CI".into()) }),
            ]
        );
        assert_eq!(parse("7770;state=sleeping;color=blue"), vec![]);
        assert_eq!(parse("7770;suggest="), vec![]);
    }

    #[test]
    fn titles_and_codex_state_announcements_are_read() {
        assert_eq!(parse("0;✳ Claude Code"), vec![Marker::Title("✳ Claude Code".into())]);
        assert_eq!(parse("2;a;b"), vec![Marker::Title("a;b".into())]);
        assert_eq!(parse("7501;state=working"), vec![Marker::Announce(Announced::Working)]);
        assert_eq!(parse("7501;state=done"), vec![Marker::Announce(Announced::Idle)]);
        assert_eq!(parse("7501;state=blocked:kind=permission"), vec![Marker::Announce(Announced::Blocked)]);
        assert_eq!(parse("7501;state=exploding"), vec![]);
        assert_eq!(parse("7501;color=red"), vec![]);
    }

    #[test]
    fn progress_is_clamped_and_bad_states_dropped() {
        assert_eq!(parse("9;4;1;150"), vec![Marker::Progress { state: 1, value: 100 }]);
        assert_eq!(parse("9;4;0"), vec![Marker::Progress { state: 0, value: 0 }]);
        assert_eq!(parse("9;4;7;10"), vec![]);
        assert_eq!(parse("9;1;hello"), vec![]);
    }
}
