//! `session action=submit`, the managed-agent command surface (seed: "Atomic Submission").
//!
//! Under the session's writer lock: refresh the engine, refuse before the first byte unless the
//! agent is confirmed idle with an empty composer, then write the framed plan (Ctrl-U, bracketed
//! paste, the gap, Enter), every byte fed to the engine, so the turn epoch advances once at the
//! Enter. For a known agent CLI the receipt then waits to see the agent take the line: it
//! announces or shows work in the new turn and its composer no longer holds the text. Not seen
//! within [`SUBMIT_START_WAIT`], the Enter is sent once more (CLIs that read a fast text-then-CR
//! as a paste drop it); still not seen, the leftover text is cleared, the turn is abandoned and
//! the receipt says `submitted: false` with the reason. Nothing is ever queued.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

use super::AgentLink;
use crate::agent::SubmitRefusal;
use crate::agent::submit::{self, AckOutcome, SubmitReceipt};
use crate::limits::{SUBMIT_START_POLL, SUBMIT_START_WAIT};
use crate::session::Session;

/// `session action=submit` parameters.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SubmitParams {
    /// PTY session_id, tuic_session or alias (tu-1).
    pub session_id: String,
    /// The prompt or command (no Enter needed; multiline text is pasted).
    pub input: String,
    /// ms to wait for output after Enter (default 3000, clamped 250..=10000).
    pub timeout_ms: Option<u64>,
    /// The PTY's short work description; "" or null clears it, omitted keeps it.
    #[serde(default, deserialize_with = "present")]
    pub pty_description: Option<Option<String>>,
}

fn present<'de, D: Deserializer<'de>>(de: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(de).map(Some)
}

/// Why submit did not produce a written receipt.
#[derive(Debug)]
pub(crate) enum SubmitError {
    /// Refused before the first byte; the receipt says why (retry_safe).
    Refused(Box<SubmitReceipt>),
    /// The request itself was wrong (empty input).
    Invalid(String),
}

/// Submits `text` to `session`. `Ok` means the whole framed write went out; the receipt says
/// `submitted: true` only when the agent was seen taking the line (see [`verify_start`]).
pub(crate) async fn submit(
    session: &Arc<Session>,
    text: &str,
    timeout_ms: Option<u64>,
) -> Result<SubmitReceipt, SubmitError> {
    if text.trim().is_empty() {
        return Err(SubmitError::Invalid("session action=submit: input must not be empty".into()));
    }
    let submission_id = uuid::Uuid::new_v4().to_string();
    let timeout = submit::ack_timeout(timeout_ms);
    let Some(link) = AgentLink::of(session) else {
        return Err(SubmitError::Invalid(format!("session {} has no agent engine attached", session.id)));
    };
    let writer = session.writer().await;
    let checked = link.with_tracker(|t| (t.check_submit(), t.turn_epoch(), t.composer_state(), t.adapter()));
    let (check, epoch, composer, adapter) = checked;
    if let Err(refusal) = check {
        let mut receipt = SubmitReceipt::refused(submission_id, refusal, epoch, composer);
        if let (Some(adapter), SubmitRefusal::ComposerNotEmpty(_)) = (adapter, refusal) {
            receipt.reason = Some(format!(
                "the composer holds text (typed, or put back by {} after a cancel); clear it first with {}",
                adapter.name,
                submit::key_names(adapter.submit.clear)
            ));
        }
        return Err(SubmitError::Refused(Box::new(receipt)));
    }
    if session.exit_info().is_some() {
        return Err(SubmitError::Invalid(format!("session {} has exited; it takes no input", session.id)));
    }
    let plan = submit::plan(adapter, text);
    if let Err(e) = session.write_held(Bytes::from(plan.before_enter)).await {
        return Err(SubmitError::Invalid(format!("session action=submit: nothing was written: {e}")));
    }
    tokio::time::sleep(plan.gap).await;
    let offset = session.total_written().max(link.fed());
    if let Err(e) = session.write_held(Bytes::from_static(plan.enter)).await {
        let epoch = link.with_tracker(|t| t.turn_epoch());
        return Ok(SubmitReceipt::uncertain(submission_id, &e.to_string(), epoch));
    }
    let epoch = link.with_tracker(|t| t.turn_epoch());
    let Some(adapter) = adapter.filter(|a| submit::verifies_start(a)) else {
        drop(writer);
        let outcome = acknowledgement(session, link, offset, epoch, timeout).await;
        return Ok(SubmitReceipt::written(submission_id, outcome, epoch));
    };
    // `timeout` is already clamped to the acknowledgement window; seeing a start takes at least two
    // start waits whatever the caller asked (a too short wait would clear a taken prompt).
    let deadline = Instant::now() + timeout.max(2 * SUBMIT_START_WAIT);
    let mut start = verify_start(session, link, epoch, (Instant::now() + SUBMIT_START_WAIT).min(deadline)).await;
    let mut retried = false;
    let asking = link.with_tracker(|t| t.readiness() == crate::agent::Readiness::Question { confident: true });
    // An Enter into an open question would answer it.
    if start == Start::NotSeen && !asking && link.with_tracker(|t| t.turn_epoch()) == epoch {
        // The CLI read the Enter as part of a paste (or missed it): one more Enter, as the
        // recipe says, before anything else writes.
        retried = true;
        if let Err(e) = session.write_held(Bytes::from_static(plan.enter)).await {
            return Ok(SubmitReceipt::uncertain(submission_id, &e.to_string(), epoch));
        }
        start = verify_start(session, link, epoch, deadline).await;
    }
    if start == Start::NotSeen {
        // Leave the composer as it was: what the agent never took must not prefix the next line.
        // Cleared only when the screen shows text there (or the CLI's composer cannot be read):
        // the clearing key on an empty composer can do something else (arm an exit, open a menu).
        let leftover = link.with_tracker(|t| match t.screen_composer_text() {
            Some(text) => !text.is_empty(),
            None => adapter.composer.is_none(),
        });
        if leftover && session.exit_info().is_none() {
            for key in adapter.submit.clear {
                tokio::time::sleep(plan.gap).await;
                let _ = session.write_held(Bytes::from_static(key)).await;
            }
        }
        link.abandon_turn();
        drop(writer);
        let epoch = link.with_tracker(|t| t.turn_epoch());
        return Ok(SubmitReceipt::not_taken(submission_id, epoch, adapter.name, retried, leftover));
    }
    drop(writer);
    let outcome = match start {
        Start::Exited => AckOutcome::SessionExited,
        Start::Superseded => AckOutcome::Superseded,
        _ => AckOutcome::Moved { bytes: link.fed().saturating_sub(offset) },
    };
    Ok(SubmitReceipt::started(submission_id, outcome, epoch, retried))
}

/// What [`verify_start`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// The agent announced or showed work in this turn, with the composer no longer holding it.
    Seen,
    NotSeen,
    Exited,
    Superseded,
}

/// Waits until the agent is seen starting the turn `epoch` opened (an announcement, a hook or a
/// working screen, and the composer no longer holding the text), or `deadline`.
async fn verify_start(session: &Session, link: &AgentLink, epoch: u64, deadline: Instant) -> Start {
    let mut output = link.subscribe_fed();
    let mut changes = link.subscribe();
    loop {
        let (started, current, holding) = link.with_tracker(|t| {
            (t.turn_started(), t.turn_epoch(), t.screen_composer_text().is_some_and(|text| !text.is_empty()))
        });
        if current != epoch {
            return Start::Superseded;
        }
        if started && !holding {
            return Start::Seen;
        }
        if session.exit_info().is_some() {
            return Start::Exited;
        }
        if Instant::now() >= deadline {
            // Work announced or shown is the agent's own word that it took a line, even where a
            // row the screen reader takes for its composer still shows the text.
            return if started { Start::Seen } else { Start::NotSeen };
        }
        tokio::select! {
            () = tokio::time::sleep_until(deadline.into()) => {}
            () = tokio::time::sleep(SUBMIT_START_POLL) => {}
            _ = output.changed() => {}
            _ = changes.changed() => {}
            () = session.finished() => {}
        }
    }
}

/// Waits until the engine has read output past `offset` (so a state read right after the receipt
/// already reflects the agent's answer), the session's end, a newer turn, or the timeout.
async fn acknowledgement(
    session: &Session,
    link: &AgentLink,
    offset: u64,
    epoch: u64,
    timeout: Duration,
) -> AckOutcome {
    let deadline = Instant::now() + timeout;
    let mut output = link.subscribe_fed();
    let mut changes = link.subscribe();
    loop {
        let total = link.fed();
        if total > offset {
            return AckOutcome::Moved { bytes: total - offset };
        }
        if session.exit_info().is_some() {
            return AckOutcome::SessionExited;
        }
        if link.with_tracker(|t| t.turn_epoch()) != epoch {
            return AckOutcome::Superseded;
        }
        if Instant::now() >= deadline {
            return AckOutcome::TimedOut;
        }
        tokio::select! {
            () = tokio::time::sleep_until(deadline.into()) => {}
            _ = output.changed() => {}
            _ = changes.changed() => {}
            () = session.finished() => {}
        }
    }
}
