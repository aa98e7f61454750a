//! The people's side of the daemon: requests that a connected UI client (the GUI, `/mobile`)
//! answers on a person's behalf. Clients that can answer say so when they open `/events`
//! (`?ui=confirm,screenshot`); while such a stream is open they count as answerers.
//!
//! `confirm` is the one gate for everything the spec calls UI-gated: it publishes
//! `ui-confirm-requested`, waits for the first answer (`POST /ui/confirm/:id`) at most
//! [`UI_CONFIRM_TIMEOUT`], and publishes `ui-confirm-resolved` whatever the outcome, so every
//! client drops the dialog. With nobody able to answer it returns at once instead of waiting.

mod confirm;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

pub(crate) use confirm::{AnswerError, ConfirmOutcome, ConfirmRequest, PendingConfirm};

use crate::events::EventBus;
use crate::lock::Recover;

/// What a UI client can answer, declared by `/events?ui=...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Capability {
    Confirm,
    Screenshot,
}

impl Capability {
    pub(crate) const NAMES: &'static str = "confirm, screenshot";

    pub(crate) fn parse(name: &str) -> Option<Self> {
        match name {
            "confirm" => Some(Self::Confirm),
            "screenshot" => Some(Self::Screenshot),
            _ => None,
        }
    }
}

pub(crate) struct Ui {
    events: Arc<EventBus>,
    confirms: Mutex<confirm::Book>,
    /// Connected answerers per capability; a watch so a waiting confirm sees the last one leave.
    answerers: watch::Sender<HashMap<Capability, usize>>,
}

impl std::fmt::Debug for Ui {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ui").finish_non_exhaustive()
    }
}

impl Ui {
    pub(crate) fn new(events: Arc<EventBus>) -> Self {
        Self { events, confirms: Mutex::new(confirm::Book::default()), answerers: watch::Sender::new(HashMap::new()) }
    }

    /// Counts the caller as an answerer of `caps` until the guard drops (its stream closed).
    pub(crate) fn answerer(self: &Arc<Self>, caps: Vec<Capability>) -> AnswererGuard {
        self.answerers.send_modify(|counts| {
            for cap in &caps {
                *counts.entry(*cap).or_default() += 1;
            }
        });
        AnswererGuard { ui: self.clone(), caps }
    }

    /// How many connected clients can answer `cap` now.
    pub(crate) fn answerers(&self, cap: Capability) -> usize {
        self.answerers.borrow().get(&cap).copied().unwrap_or(0)
    }

    /// Whether a connected client can answer a confirmation now.
    pub(crate) fn can_confirm(&self) -> bool {
        self.answerers(Capability::Confirm) > 0
    }

    pub(crate) fn events(&self) -> &EventBus {
        &self.events
    }

    fn book(&self) -> std::sync::MutexGuard<'_, confirm::Book> {
        self.confirms.locked()
    }
}

/// Held by an `/events` stream that declared `?ui=`; dropping it withdraws the answerer.
pub(crate) struct AnswererGuard {
    ui: Arc<Ui>,
    caps: Vec<Capability>,
}

impl Drop for AnswererGuard {
    fn drop(&mut self) {
        self.ui.answerers.send_modify(|counts| {
            for cap in &self.caps {
                if let Some(n) = counts.get_mut(cap) {
                    *n = n.saturating_sub(1);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests;
