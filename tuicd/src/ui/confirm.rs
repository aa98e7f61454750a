//! Confirmations: one pending entry per asking call, the first answer wins, and every outcome
//! (answered, timed out, orphaned, cancelled) is published once as `ui-confirm-resolved`.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::oneshot;

use super::{Capability, Ui};
use crate::limits::{
    UI_CONFIRM_MESSAGE_MAX_BYTES, UI_CONFIRM_ORPHAN_GRACE, UI_CONFIRM_PENDING_MAX, UI_CONFIRM_RECENT,
    UI_CONFIRM_TIMEOUT,
};

/// What a gated operation asks a person.
#[derive(Debug, Clone)]
pub(crate) struct ConfirmRequest {
    pub title: String,
    pub message: String,
    /// Who asks, in words a person reads ("agent tu-2 (claude-code)").
    pub requester: String,
    /// What is gated: "ui_confirm", "github_write", "worktree_force_remove", "ai_terminal",
    /// "oauth_consent".
    pub kind: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConfirmOutcome {
    Confirmed,
    Declined,
    /// Nobody connected could answer (at the start, or the last answerer left and did not
    /// come back within the grace period).
    NoClient,
    TimedOut,
    /// [`UI_CONFIRM_PENDING_MAX`] confirmations are already waiting.
    TooMany,
    /// The message is over [`UI_CONFIRM_MESSAGE_MAX_BYTES`]: a person would not see all of it.
    TooLarge,
}

impl ConfirmOutcome {
    pub(crate) fn confirmed(self) -> bool {
        self == Self::Confirmed
    }

    pub(crate) fn reason(self) -> Option<&'static str> {
        match self {
            Self::Confirmed => None,
            Self::Declined => Some("declined by the user"),
            Self::NoClient => Some("no UI client connected that can answer a confirmation"),
            Self::TimedOut => Some("no answer within 300s"),
            Self::TooMany => Some("too many confirmations are already waiting for an answer"),
            Self::TooLarge => Some("the request is too large for a person to read whole in a confirmation"),
        }
    }
}

/// A pending confirmation as clients see it (`ui-confirm-requested`, `GET /ui/confirms`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PendingConfirm {
    pub id: String,
    pub title: String,
    pub message: String,
    pub requester: String,
    pub kind: &'static str,
    pub expires_in_ms: u64,
}

#[derive(Debug, Serialize)]
struct Resolved<'a> {
    id: &'a str,
    confirmed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum AnswerError {
    NotFound,
    AlreadyResolved,
}

struct Entry {
    request: ConfirmRequest,
    deadline: Instant,
    answer: oneshot::Sender<bool>,
}

#[derive(Default)]
pub(super) struct Book {
    next: u64,
    pending: HashMap<String, Entry>,
    /// Ids resolved lately, so a second answer is told "already answered", not "unknown".
    recent: VecDeque<String>,
}

impl Book {
    fn retire(&mut self, id: &str) -> Option<Entry> {
        let entry = self.pending.remove(id)?;
        if self.recent.len() == UI_CONFIRM_RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(id.to_owned());
        Some(entry)
    }
}

fn view(id: &str, entry: &Entry, now: Instant) -> PendingConfirm {
    PendingConfirm {
        id: id.to_owned(),
        title: entry.request.title.clone(),
        message: entry.request.message.clone(),
        requester: entry.request.requester.clone(),
        kind: entry.request.kind,
        expires_in_ms: entry.deadline.saturating_duration_since(now).as_millis() as u64,
    }
}

impl Ui {
    /// Asks a person and waits for the first answer, at most [`UI_CONFIRM_TIMEOUT`]. Dropping
    /// the future (the caller gave up) resolves the request for every client too.
    pub(crate) async fn confirm(&self, request: ConfirmRequest) -> ConfirmOutcome {
        self.confirm_within(request, UI_CONFIRM_TIMEOUT, UI_CONFIRM_ORPHAN_GRACE).await
    }

    /// [`Ui::confirm`] with its two windows as arguments, so tests need not wait minutes.
    pub(super) async fn confirm_within(
        &self,
        request: ConfirmRequest,
        window: Duration,
        grace: Duration,
    ) -> ConfirmOutcome {
        // Shown whole or not asked: a dialog never cuts what a person confirms.
        if request.message.len() + request.title.len() > UI_CONFIRM_MESSAGE_MAX_BYTES {
            return ConfirmOutcome::TooLarge;
        }
        if !self.can_confirm() {
            return ConfirmOutcome::NoClient;
        }
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut book = self.book();
            if book.pending.len() >= UI_CONFIRM_PENDING_MAX {
                return ConfirmOutcome::TooMany;
            }
            book.next += 1;
            let id = format!("confirm-{}", book.next);
            let entry = Entry { request, deadline: Instant::now() + window, answer: tx };
            // Published under the book's lock, so a listing never shows an id whose event is
            // still to come, and the resolved event can never precede it.
            self.events().publish(proto::events::UI_CONFIRM_REQUESTED, &view(&id, &entry, Instant::now()));
            book.pending.insert(id.clone(), entry);
            id
        };
        let mut settle = Settle { ui: self, id: &id, outcome: None };
        let outcome = self.await_answer(rx, window, grace).await;
        settle.outcome = Some(outcome);
        outcome
    }

    async fn await_answer(&self, mut rx: oneshot::Receiver<bool>, window: Duration, grace: Duration) -> ConfirmOutcome {
        let expiry = tokio::time::sleep(window);
        tokio::pin!(expiry);
        let mut answerers = self.answerers.subscribe();
        let none_left =
            |counts: &HashMap<Capability, usize>| counts.get(&Capability::Confirm).copied().unwrap_or(0) == 0;
        loop {
            tokio::select! {
                answer = &mut rx => return answered(answer),
                () = &mut expiry => return ConfirmOutcome::TimedOut,
                left = answerers.wait_for(none_left) => if left.is_err() { return ConfirmOutcome::NoClient; },
            }
            // The last answerer left: give one the grace period to come back (a reconnect).
            let grace = tokio::time::sleep(grace);
            tokio::pin!(grace);
            tokio::select! {
                answer = &mut rx => return answered(answer),
                () = &mut expiry => return ConfirmOutcome::TimedOut,
                () = &mut grace => return ConfirmOutcome::NoClient,
                _ = answerers.wait_for(|counts| !none_left(counts)) => {}
            }
        }
    }

    /// The first answer to `id` wins; later ones are `AlreadyResolved`.
    pub(crate) fn answer(&self, id: &str, confirmed: bool) -> Result<(), AnswerError> {
        let mut book = self.book();
        match book.retire(id) {
            Some(entry) => {
                // The waiter publishes the resolution; if it is gone, its drop already did.
                let _ = entry.answer.send(confirmed);
                Ok(())
            }
            None if book.recent.iter().any(|r| r == id) => Err(AnswerError::AlreadyResolved),
            None => Err(AnswerError::NotFound),
        }
    }

    /// The confirmations still waiting, oldest first.
    pub(crate) fn pending_confirms(&self) -> Vec<PendingConfirm> {
        let book = self.book();
        let now = Instant::now();
        let mut list: Vec<PendingConfirm> = book.pending.iter().map(|(id, entry)| view(id, entry, now)).collect();
        list.sort_by_key(|p| p.id.trim_start_matches("confirm-").parse::<u64>().unwrap_or(u64::MAX));
        list
    }
}

fn answered(answer: Result<bool, oneshot::error::RecvError>) -> ConfirmOutcome {
    match answer {
        Ok(true) => ConfirmOutcome::Confirmed,
        Ok(false) => ConfirmOutcome::Declined,
        // The entry was retired without an answer: only the daemon's teardown does that.
        Err(_) => ConfirmOutcome::NoClient,
    }
}

/// Retires the entry and publishes `ui-confirm-resolved` exactly once, also when the asking
/// future is dropped before an outcome.
struct Settle<'a> {
    ui: &'a Ui,
    id: &'a str,
    outcome: Option<ConfirmOutcome>,
}

impl Drop for Settle<'_> {
    fn drop(&mut self) {
        let (confirmed, reason) = match self.outcome {
            Some(outcome) => (outcome.confirmed(), outcome.reason()),
            None => (false, Some("the asking call ended before an answer")),
        };
        let mut book = self.ui.book();
        book.retire(self.id);
        self.ui.events().publish(proto::events::UI_CONFIRM_RESOLVED, &Resolved { id: self.id, confirmed, reason });
    }
}

#[cfg(test)]
mod size_tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::events::EventBus;

    #[tokio::test]
    async fn a_message_too_large_to_show_whole_is_refused_before_it_is_published() {
        let ui = Arc::new(Ui::new(Arc::new(EventBus::new())));
        let _client = ui.answerer(vec![super::super::Capability::Confirm]);
        let request = ConfirmRequest {
            title: "Run?".into(),
            message: "x".repeat(UI_CONFIRM_MESSAGE_MAX_BYTES),
            requester: "agent tu-1".into(),
            kind: "ai_terminal",
        };
        let outcome = ui.confirm_within(request, Duration::from_millis(50), Duration::from_millis(50)).await;
        assert_eq!(outcome, ConfirmOutcome::TooLarge);
        assert!(ui.events().since(0).1.is_empty(), "nothing was published");
        assert!(outcome.reason().unwrap().contains("too large"));
    }
}
