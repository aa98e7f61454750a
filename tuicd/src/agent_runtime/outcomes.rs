//! `agent action=wait sessions=[...]`: waits until every session of a set has an outcome, and
//! answers each one's status (the status first: complete, question, failed, idle, or where it
//! stands when the wait ran out), its agent state and the tail of its output, in one answer.
//!
//! An outcome is what an orchestrator acts on: the end-of-task marker (`complete`), an open
//! question (`question`), an exit (`complete` for code 0, else `failed`), a spawn prompt that never
//! went in (`failed`), or a confirmed idle after the agent was seen working (`idle`: it stopped
//! without the end-of-task marker). A confirmed idle the wait never saw follow work is not one: a
//! freshly started agent sits at its ready prompt before its task begins.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::AgentLink;
use crate::agent::{AgentState, Readiness};
use crate::limits::{AGENT_TICK_INTERVAL, WAIT_SET_OUTPUT_BYTES};
use crate::session::Session;
use crate::state::App;

/// One session of the set, as the answer reports it. `status` comes first: it is the prefix a
/// reader acts on.
#[derive(Debug, Serialize)]
pub(crate) struct MemberReport {
    pub status: &'static str,
    pub session_id: String,
    pub alias: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_state: Option<AgentState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// The newest text output, at most [`WAIT_SET_OUTPUT_BYTES`].
    pub output: String,
    /// The text line cursor just past `output`, for `session action=output since_cursor`.
    pub cursor: u64,
}

/// The answer: every member, in the order asked; `pending` names those without an outcome yet
/// (pass them again to go on waiting).
#[derive(Debug, Serialize)]
pub(crate) struct SetOutcome {
    pub met: bool,
    pub timed_out: bool,
    pub results: Vec<MemberReport>,
    pub pending: Vec<String>,
}

struct Member {
    session: Arc<Session>,
    /// Seen working (or already past a submitted turn): a confirmed idle now ends its turn.
    worked: bool,
}

impl Member {
    /// The member's outcome, if it has one.
    fn outcome(&mut self, app: &App) -> Option<&'static str> {
        if let Some(exit) = self.session.exit_info() {
            return Some(if exit.exit_code == Some(0) { "complete" } else { "failed" });
        }
        let delivery = app.agents.spawn_info(&self.session.id).map(|info| info.prompt_delivery);
        if delivery == Some("undelivered") {
            return Some("failed");
        }
        let link = AgentLink::of(&self.session)?;
        let (readiness, status) = link.with_tracker(|t| (t.readiness(), t.snapshot()));
        self.worked |= status.agent_state == Some(AgentState::Working) || status.turn_epoch > 0;
        match readiness {
            Readiness::Question { .. } => Some("question"),
            Readiness::ConfirmedIdle if status.agent_state == Some(AgentState::Completed) => Some("complete"),
            Readiness::ConfirmedIdle if self.worked && delivery != Some("deferred") => Some("idle"),
            _ => None,
        }
    }

    fn report(&self, app: &App, outcome: Option<&'static str>) -> MemberReport {
        let session = &self.session;
        let status = AgentLink::of(session).map(AgentLink::status);
        let agent_state = status.as_ref().and_then(|s| s.agent_state);
        let read = session.text_within(None, WAIT_SET_OUTPUT_BYTES);
        let waiting = match agent_state {
            Some(AgentState::Starting) => "starting",
            Some(AgentState::Idle) => "idle_unconfirmed",
            _ => "working",
        };
        MemberReport {
            status: outcome.unwrap_or(waiting),
            session_id: session.id.clone(),
            alias: session.alias.clone(),
            name: app.agents.spawn_info(&session.id).map(|info| info.name),
            agent_state,
            exit_code: read.exit_code,
            question: status.and_then(|s| s.question_text).filter(|_| outcome == Some("question")),
            output: read.data,
            cursor: read.cursor,
        }
    }
}

/// Waits until every session has an outcome or `timeout` passes; sleeps on each engine's changes
/// and each exit, re-reading on the tick interval (silence timers resolve on reads).
pub(crate) async fn wait_all(app: &App, sessions: Vec<Arc<Session>>, timeout: Duration) -> SetOutcome {
    let deadline = Instant::now() + timeout;
    let mut members: Vec<Member> = sessions.into_iter().map(|session| Member { session, worked: false }).collect();
    let mut changes: Vec<_> = members.iter().map(|m| AgentLink::of(&m.session).map(AgentLink::subscribe)).collect();
    let outcomes = loop {
        // Subscribed above, marked seen here, then read: a change after the read still wakes us.
        changes.iter_mut().flatten().for_each(|rx| {
            rx.borrow_and_update();
        });
        let outcomes: Vec<_> = members.iter_mut().map(|m| m.outcome(app)).collect();
        let now = Instant::now();
        if outcomes.iter().all(Option::is_some) || now >= deadline {
            break outcomes;
        }
        let mut wakes: Vec<Pin<Box<dyn Future<Output = ()> + Send + '_>>> = Vec::new();
        for ((member, rx), outcome) in members.iter().zip(changes.iter_mut()).zip(&outcomes) {
            if outcome.is_some() {
                continue;
            }
            wakes.push(Box::pin(member.session.finished()));
            if let Some(rx) = rx {
                wakes.push(Box::pin(async move {
                    if rx.changed().await.is_err() {
                        // The engine is gone with its session: the exit wakes this member.
                        std::future::pending::<()>().await;
                    }
                }));
            }
        }
        let wake = (now + AGENT_TICK_INTERVAL).min(deadline);
        tokio::select! {
            _ = futures_util::future::select_all(wakes) => {}
            () = tokio::time::sleep_until(wake.into()) => {}
        }
    };
    let met = outcomes.iter().all(Option::is_some);
    let results: Vec<MemberReport> = members.iter().zip(&outcomes).map(|(m, o)| m.report(app, *o)).collect();
    let pending = members.iter().zip(&outcomes).filter(|(_, o)| o.is_none()).map(|(m, _)| m.session.id.clone());
    SetOutcome { met, timed_out: !met, pending: pending.collect(), results }
}
