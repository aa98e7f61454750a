//! The pure parts of `session action=submit`: the bytes to write and where to pause, the
//! acknowledgement timeout, and the receipt. The session holds the PTY writer across the whole
//! plan, feeds every byte it writes to [`super::AgentTracker::on_input`] (which advances the turn
//! epoch exactly once, at the Enter), then waits for output past the offset taken just before
//! the Enter and builds the receipt from what happened.

use std::time::Duration;

use serde::Serialize;

use super::adapters::{Adapter, Paste, SubmitRecipe};
use super::event::ComposerState;
use super::tracker::SubmitRefusal;
use crate::limits::{SUBMIT_ACK_TIMEOUT_DEFAULT, SUBMIT_ACK_TIMEOUT_MAX, SUBMIT_ACK_TIMEOUT_MIN};

/// The recipe for a session without a known agent: text then Enter, paste only when multiline.
const PLAIN: SubmitRecipe =
    SubmitRecipe { clear_first: false, paste: Paste::Multiline, enter_gap_ms: 50, clear: &[b"\x15"] };

/// What to write: `before_enter`, then a pause of `gap`, then `enter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SubmitPlan {
    pub before_enter: Vec<u8>,
    pub gap: Duration,
    pub enter: &'static [u8],
}

/// The plan for submitting `text` to `adapter`'s agent (or a plain session).
pub(crate) fn plan(adapter: Option<&Adapter>, text: &str) -> SubmitPlan {
    let recipe = adapter.map_or(PLAIN, |a| a.submit);
    let (before_enter, enter) = recipe.frame(text);
    SubmitPlan { before_enter, gap: Duration::from_millis(recipe.enter_gap_ms), enter }
}

/// Whether a submit to `adapter`'s CLI waits to see the agent take the line: a CLI that
/// announces its state or whose composer tuicd reads (a dropped Enter leaves the text there).
/// Seeing a working screen alone is no proof either way: a quick answer comes and goes between
/// two screens (Aider), so for the others the receipt says the bytes went in and output moved.
pub(crate) fn verifies_start(adapter: &Adapter) -> bool {
    !adapter.titles.is_empty() || adapter.composer.is_some()
}

/// Keys as a person would name them (`ctrl+u`, `esc esc`), for refusal messages.
pub(crate) fn key_names(keys: &[&[u8]]) -> String {
    let names: Vec<String> = keys
        .iter()
        .flat_map(|key| key.iter())
        .map(|&b| match b {
            0x1b => "esc".to_owned(),
            0x01..=0x1a => format!("ctrl+{}", (b'a' + b - 1) as char),
            0x7f => "backspace".to_owned(),
            _ => (b as char).to_string(),
        })
        .collect();
    names.join(" ")
}

/// The acknowledgement wait for a requested `timeout_ms`: default 3 s, clamped to 250 ms..10 s.
pub(crate) fn ack_timeout(requested_ms: Option<u64>) -> Duration {
    requested_ms.map_or(SUBMIT_ACK_TIMEOUT_DEFAULT, |ms| {
        Duration::from_millis(ms).clamp(SUBMIT_ACK_TIMEOUT_MIN, SUBMIT_ACK_TIMEOUT_MAX)
    })
}

/// How much of the framed write reached the PTY.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WriteState {
    NotWritten,
    Complete,
    /// Some bytes may have been written: a retry may duplicate them.
    Uncertain,
}

/// The composer as the receipt reports it (the seed's four words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReceiptComposer {
    /// The submit's own Ctrl-U and Enter left it empty.
    Cleared,
    Partial,
    Empty,
    Unknown,
}

/// What happened after a complete write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AckOutcome {
    /// Output moved after the Enter: `bytes` arrived past the offset.
    Moved {
        bytes: u64,
    },
    TimedOut,
    SessionExited,
    /// Another input opened a newer turn before output moved.
    Superseded,
}

/// The one response of `session action=submit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SubmitReceipt {
    pub submission_id: String,
    pub submitted: bool,
    pub write_state: WriteState,
    /// Child output moved after the Enter. Not semantic acceptance, not task success.
    pub acknowledged: bool,
    /// True only when no byte was written.
    pub retry_safe: bool,
    pub turn_epoch: u64,
    pub composer_state: ReceiptComposer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acknowledgement: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SubmitReceipt {
    /// Rejected before the first byte.
    pub(crate) fn refused(
        submission_id: String,
        refusal: SubmitRefusal,
        turn_epoch: u64,
        composer: ComposerState,
    ) -> Self {
        Self {
            submission_id,
            submitted: false,
            write_state: WriteState::NotWritten,
            acknowledged: false,
            retry_safe: true,
            turn_epoch,
            composer_state: receipt_composer(composer),
            acknowledgement: None,
            reason: Some(refusal.reason().to_owned()),
        }
    }

    /// The write failed part-way: bytes may be in the composer or even submitted.
    pub(crate) fn uncertain(submission_id: String, error: &str, turn_epoch: u64) -> Self {
        Self {
            submission_id,
            submitted: false,
            write_state: WriteState::Uncertain,
            acknowledged: false,
            retry_safe: false,
            turn_epoch,
            composer_state: ReceiptComposer::Unknown,
            acknowledgement: None,
            reason: Some(format!("the write failed part-way ({error}); a retry may duplicate input")),
        }
    }

    /// The agent took the line: it was seen starting the turn (`retried`: after a second Enter).
    pub(crate) fn started(submission_id: String, outcome: AckOutcome, turn_epoch: u64, retried: bool) -> Self {
        let mut receipt = Self::written(submission_id, outcome, turn_epoch);
        let seen = "the agent started the turn and its composer emptied";
        receipt.acknowledgement = Some(match (retried, receipt.acknowledgement.take()) {
            (false, Some(moved)) => format!("{seen}; {moved}"),
            (true, Some(moved)) => format!("{seen} after a second Enter; {moved}"),
            (false, None) => seen.to_owned(),
            (true, None) => format!("{seen} after a second Enter"),
        });
        receipt
    }

    /// The whole text was written but the agent never took it, even after one more Enter.
    pub(crate) fn not_taken(submission_id: String, turn_epoch: u64, agent: &str, retried: bool, cleared: bool) -> Self {
        let enters = if retried { "two Enters" } else { "the Enter" };
        let leftover = if cleared { "; the leftover text was cleared" } else { "" };
        Self {
            submission_id,
            submitted: false,
            write_state: WriteState::Complete,
            acknowledged: false,
            retry_safe: true,
            turn_epoch,
            composer_state: if cleared { ReceiptComposer::Cleared } else { ReceiptComposer::Unknown },
            acknowledgement: None,
            reason: Some(format!(
                "not_taken: {agent} did not start a turn after {enters} (no work announced or shown, or the text stayed in its composer){leftover}"
            )),
        }
    }

    /// The whole framed write went out; `turn_epoch` is the epoch it opened.
    pub(crate) fn written(submission_id: String, outcome: AckOutcome, turn_epoch: u64) -> Self {
        let (acknowledged, acknowledgement, reason) = match outcome {
            AckOutcome::Moved { bytes } => {
                (true, Some(format!("terminal output moved {bytes} bytes after Enter")), None)
            }
            AckOutcome::TimedOut => (false, None, Some("ack_timeout: no terminal output after Enter".to_owned())),
            AckOutcome::SessionExited => (false, None, Some("the session exited after the write".to_owned())),
            AckOutcome::Superseded => (false, None, Some("a newer input superseded this turn".to_owned())),
        };
        Self {
            submission_id,
            submitted: true,
            write_state: WriteState::Complete,
            acknowledged,
            retry_safe: false,
            turn_epoch,
            composer_state: ReceiptComposer::Cleared,
            acknowledgement,
            reason,
        }
    }
}

fn receipt_composer(state: ComposerState) -> ReceiptComposer {
    match state {
        ComposerState::Empty => ReceiptComposer::Empty,
        ComposerState::Partial => ReceiptComposer::Partial,
        ComposerState::Unknown => ReceiptComposer::Unknown,
    }
}

impl SubmitRefusal {
    /// The sentence a refused receipt carries.
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            SubmitRefusal::AwaitingInput => {
                "the agent is waiting on a question or approval; answer it with session action=input"
            }
            SubmitRefusal::QuestionSuspected => {
                "the agent's last lines look like a question; read them with session action=status and answer with session action=input"
            }
            SubmitRefusal::Busy => "the agent is not idle; wait with session action=wait until=idle",
            SubmitRefusal::Unconfirmed => "the agent is quiet but no ready prompt or marker confirms it is idle yet",
            SubmitRefusal::ComposerNotEmpty(ComposerState::Unknown) => {
                "the composer was edited in ways that cannot be tracked; clear it with ctrl+u first"
            }
            SubmitRefusal::ComposerNotEmpty(_) => "the composer holds typed input; clear it with ctrl+u first",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::adapters::by_id;

    #[test]
    fn the_timeout_defaults_to_three_seconds_and_is_clamped() {
        assert_eq!(ack_timeout(None), Duration::from_millis(3000));
        assert_eq!(ack_timeout(Some(1)), Duration::from_millis(250));
        assert_eq!(ack_timeout(Some(60_000)), Duration::from_millis(10_000));
        assert_eq!(ack_timeout(Some(1234)), Duration::from_millis(1234));
    }

    #[test]
    fn a_plain_agent_gets_text_then_enter_after_the_gap() {
        let plan = plan(by_id("claude"), "run the tests");
        assert_eq!(plan.before_enter, b"run the tests");
        assert_eq!((plan.gap, plan.enter), (Duration::from_millis(50), &b"\r"[..]));
    }

    #[test]
    fn a_refused_receipt_is_retry_safe_and_says_why() {
        let receipt = SubmitReceipt::refused("s-1".into(), SubmitRefusal::Busy, 4, ComposerState::Empty);
        let json = serde_json::to_value(&receipt).unwrap();
        assert_eq!(json["write_state"], "not_written");
        assert_eq!(json["retry_safe"], true);
        assert_eq!(json["composer_state"], "empty");
        assert!(json["reason"].as_str().unwrap().contains("wait"));
        assert!(json.get("acknowledgement").is_none());
    }

    #[test]
    fn a_written_receipt_is_never_retry_safe() {
        let moved = SubmitReceipt::written("s-2".into(), AckOutcome::Moved { bytes: 42 }, 5);
        assert!(moved.acknowledged && !moved.retry_safe && moved.reason.is_none());
        let timed_out = SubmitReceipt::written("s-3".into(), AckOutcome::TimedOut, 5);
        assert!(!timed_out.acknowledged && !timed_out.retry_safe);
        assert!(timed_out.reason.unwrap().starts_with("ack_timeout"));
        assert!(!SubmitReceipt::uncertain("s-4".into(), "EIO", 5).retry_safe);
    }
}
