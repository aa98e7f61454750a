//! `session action=submit`, the managed-agent command surface (seed: "Atomic Submission").
//!
//! Under the session's writer lock: refresh the engine, refuse before the first byte unless the
//! agent is confirmed idle with an empty composer, then write the framed plan (Ctrl-U, bracketed
//! paste, the gap, Enter), every byte fed to the engine, so the turn epoch advances once at the
//! Enter. Then, with the lock released, wait for child output past the offset taken just before
//! the Enter and return the one receipt. Nothing is ever queued.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

use super::AgentLink;
use crate::agent::submit::{self, AckOutcome, SubmitReceipt};
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

/// Submits `text` to `session`. `Ok` means the whole framed write went out.
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
        return Err(SubmitError::Refused(Box::new(SubmitReceipt::refused(submission_id, refusal, epoch, composer))));
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
    drop(writer);
    let outcome = acknowledgement(session, link, offset, epoch, timeout).await;
    Ok(SubmitReceipt::written(submission_id, outcome, epoch))
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
