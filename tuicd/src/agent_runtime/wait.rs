//! `session action=wait until=idle` for a session running a detected agent: a *confirmed* idle
//! (the engine's one definition, [`crate::agent::Readiness`]: not silence alone), an open or
//! suspected question, or the exit.

use std::time::{Duration, Instant};

use super::AgentLink;
use crate::limits::AGENT_TICK_INTERVAL;
use crate::session::{Session, WaitOutcome};

/// Whether the agent is where a waiter for idle should be woken. A freshly spawned agent whose
/// initial prompt's turn has not started yet is not (its ready prompt before that turn is not
/// the idle the waiter means), unless `first_turn` is [`FirstTurn::Ignore`] (the deferred
/// prompt's own delivery waits for exactly that ready prompt).
pub(crate) fn settled(session: &Session, first_turn: FirstTurn) -> bool {
    if session.exit_info().is_some() {
        return true;
    }
    AgentLink::of(session).is_none_or(|link| {
        link.with_tracker(|t| t.readiness().settled() && (first_turn == FirstTurn::Ignore || !t.first_turn_pending()))
    })
}

/// Whether a wait for idle also waits for a spawned agent's first turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstTurn {
    Await,
    Ignore,
}

/// Waits until [`settled`] or `timeout`. Re-checks on every engine change and on the tick interval
/// (silence timers resolve on reads), only while someone waits.
pub(crate) async fn wait_settled(session: &Session, timeout: Duration, first_turn: FirstTurn) -> WaitOutcome {
    let deadline = Instant::now() + timeout;
    let Some(link) = AgentLink::of(session) else { return WaitOutcome::Reached };
    let mut changes = link.subscribe();
    loop {
        if settled(session, first_turn) {
            return WaitOutcome::Reached;
        }
        let now = Instant::now();
        if now >= deadline {
            return WaitOutcome::TimedOut;
        }
        let wake = (now + AGENT_TICK_INTERVAL).min(deadline);
        tokio::select! {
            () = tokio::time::sleep_until(wake.into()) => {}
            _ = changes.changed() => {}
            () = session.finished() => {}
        }
    }
}
