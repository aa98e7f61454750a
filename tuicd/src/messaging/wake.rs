//! Orchestrator wake: a payload-free notice per unread-mail group, with an expiry, one retry and a
//! budget re-armed by a new busy-to-idle edge. Pure: every call takes `now_ms`.
//!
//! Lifecycle of one group: mail opens it; a ready orchestrator claims one notice (generic, or a
//! lifecycle summary when every message in the window is server-authored and it fits); the PTY layer
//! reports the attempt Confirmed, Uncertain (expires after 5 s, retried once) or NotStarted (no bytes
//! written: budget exhausted for this lifecycle, no retry loop). An `inbox` / `wait` observation
//! acknowledges the group; mail past the acknowledged cursor opens the next one.

use crate::limits::{LIFECYCLE_SUMMARY_MAX_CHARS, WAKE_ATTEMPTS_PER_GROUP, WAKE_NOTICE_EXPIRY};

use super::delivery::WakeGroupState;
use super::types::AgentMessage;

/// The generic notice: it names no sender and carries no payload.
pub(crate) const ORCHESTRATOR_WAKE_TEXT: &str = "[TUIC] message available \u{2014} read it with: agent action=inbox";

/// A notice the PTY layer should type, and the window it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WakeNotice {
    /// Echoed back in [`WakeState::report`], so a stale report cannot settle a newer attempt.
    pub attempt: u64,
    pub text: String,
    /// `Some(cursor)` for a lifecycle summary: confirming it acknowledges the inbox through `cursor`.
    pub acknowledges_through: Option<u64>,
}

/// How a typed notice went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WakeResult {
    /// The orchestrator started a turn.
    Confirmed,
    /// Bytes were written but no turn was observed; expires after [`WAKE_NOTICE_EXPIRY`].
    Uncertain,
    /// Nothing was written (composer refused the claim).
    NotStarted,
}

/// What a confirmed report asks the caller to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReportEffect {
    None,
    /// A confirmed lifecycle summary acknowledges the inbox through this cursor.
    Acknowledge(u64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct InFlight {
    attempt: u64,
    summary_through: Option<u64>,
    uncertain_since_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Group {
    /// Highest unread cursor the group covers.
    through: u64,
    attempts: u8,
    exhausted: bool,
    in_flight: Option<InFlight>,
    /// A confirmed generic notice covers the group until it is acknowledged.
    announced: bool,
}

impl Group {
    fn fresh(through: u64) -> Self {
        Self { through, attempts: 0, exhausted: false, in_flight: None, announced: false }
    }
}

/// One orchestrator's wake state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct WakeState {
    group: Option<Group>,
    next_attempt: u64,
}

impl WakeState {
    /// Where new mail would land, after expiring a stale uncertain attempt.
    pub(crate) fn state(&mut self, now_ms: u64) -> WakeGroupState {
        self.expire(now_ms);
        match &self.group {
            None => WakeGroupState::Open,
            Some(g) if g.exhausted => WakeGroupState::Exhausted,
            Some(g) if g.in_flight.is_some() || g.announced => WakeGroupState::Pending,
            Some(_) => WakeGroupState::Open,
        }
    }

    /// Records unread mail at `cursor` in the current group (opening one if needed).
    pub(crate) fn on_mail(&mut self, cursor: u64) {
        match &mut self.group {
            Some(g) => g.through = g.through.max(cursor),
            None => self.group = Some(Group::fresh(cursor)),
        }
    }

    /// The cursor the current group's window reaches, if mail is pending.
    pub(crate) fn window_through(&self) -> Option<u64> {
        self.group.as_ref().map(|g| g.through)
    }

    /// Claims one notice when the orchestrator is canonically idle/completed and the group is open.
    /// `window` is the unread mail the notice covers, oldest first.
    pub(crate) fn claim(&mut self, now_ms: u64, ready: bool, window: &[AgentMessage]) -> Option<WakeNotice> {
        self.expire(now_ms);
        let g = self.group.as_mut()?;
        if !ready || g.exhausted || g.announced || g.in_flight.is_some() || window.is_empty() {
            return None;
        }
        g.attempts += 1;
        self.next_attempt += 1;
        let attempt = self.next_attempt;
        let summary = lifecycle_summary(window);
        let summary_through = summary.as_ref().map(|_| window[window.len() - 1].timestamp);
        g.in_flight = Some(InFlight { attempt, summary_through, uncertain_since_ms: None });
        let text = summary.unwrap_or_else(|| ORCHESTRATOR_WAKE_TEXT.to_string());
        Some(WakeNotice { attempt, text, acknowledges_through: summary_through })
    }

    /// Settles an attempt. Reports for an attempt that is no longer in flight change nothing.
    pub(crate) fn report(&mut self, now_ms: u64, attempt: u64, result: WakeResult) -> ReportEffect {
        let Some(g) = self.group.as_mut() else { return ReportEffect::None };
        let Some(flight) = g.in_flight.as_mut().filter(|f| f.attempt == attempt) else {
            return ReportEffect::None;
        };
        match result {
            WakeResult::Confirmed => {
                let summary_through = flight.summary_through;
                g.in_flight = None;
                match summary_through {
                    // The summary acknowledges its own window; mail that coalesced while it was
                    // typed falls outside it and earns its own notice.
                    Some(through) => {
                        self.acknowledge(through);
                        return ReportEffect::Acknowledge(through);
                    }
                    None => g.announced = true,
                }
            }
            WakeResult::Uncertain => flight.uncertain_since_ms = Some(now_ms),
            WakeResult::NotStarted => {
                g.in_flight = None;
                g.exhausted = true;
            }
        }
        ReportEffect::None
    }

    /// A new busy-to-idle edge re-arms the budget: the lifecycle that refused is not the one being
    /// retried. A notice already in flight keeps its attempt.
    pub(crate) fn busy_to_idle_edge(&mut self) {
        if let Some(g) = self.group.as_mut() {
            g.exhausted = false;
            g.attempts = u8::from(g.in_flight.is_some());
        }
    }

    /// An `inbox` / `wait` observation through `cursor` acknowledges the group; later mail remains
    /// as a fresh group with a fresh budget.
    pub(crate) fn acknowledge(&mut self, cursor: u64) {
        let Some(g) = self.group.as_mut() else { return };
        if g.through <= cursor {
            // A notice in flight still finishes; its report then finds no group and changes nothing.
            self.group = None;
        } else {
            let in_flight = g.in_flight.take();
            let mut fresh = Group::fresh(g.through);
            fresh.attempts = u8::from(in_flight.is_some());
            fresh.in_flight = in_flight;
            *g = fresh;
        }
    }

    fn expire(&mut self, now_ms: u64) {
        let Some(g) = self.group.as_mut() else { return };
        let expired = g
            .in_flight
            .as_ref()
            .and_then(|f| f.uncertain_since_ms)
            .is_some_and(|since| now_ms.saturating_sub(since) >= WAKE_NOTICE_EXPIRY.as_millis() as u64);
        if expired {
            g.in_flight = None;
            if g.attempts >= WAKE_ATTEMPTS_PER_GROUP {
                g.exhausted = true;
            }
        }
    }
}

/// `[TUIC] child agent 8c261794 is now idle; child agent 8c261794 exited (exit 0)` when every
/// message is server-authored lifecycle mail and the line fits in [`LIFECYCLE_SUMMARY_MAX_CHARS`];
/// `None` otherwise (one peer message disqualifies the whole window).
pub(crate) fn lifecycle_summary(window: &[AgentMessage]) -> Option<String> {
    let mut parts = Vec::with_capacity(window.len());
    for message in window {
        if !message.is_lifecycle() {
            return None;
        }
        parts.push(lifecycle_phrase(message)?);
    }
    if parts.is_empty() {
        return None;
    }
    let text = format!("[TUIC] {}", parts.join("; "));
    (text.chars().count() <= LIFECYCLE_SUMMARY_MAX_CHARS).then_some(text)
}

fn lifecycle_phrase(message: &AgentMessage) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(&message.content).ok()?;
    let state = value.get("state")?.as_str()?;
    let session = value.get("session_id")?.as_str()?;
    let short: String = session.chars().take(8).collect();
    Some(match (state, value.get("exit_code").and_then(|c| c.as_i64())) {
        ("exited", Some(code)) => format!("child agent {short} exited (exit {code})"),
        ("exited", None) => format!("child agent {short} exited"),
        (state, _) => format!("child agent {short} is now {state}"),
    })
}

#[cfg(test)]
#[path = "tests/wake.rs"]
mod tests;
