//! `session action=wait`, resolved in the seed's three steps:
//! 1. Already met? Answer at once. `until=exited` reads the exit code the session keeps after it
//!    ends (a tombstone), so a just-reaped child satisfies the wait instead of failing a liveness
//!    check. This step subscribes to nothing.
//! 2. Otherwise the reference must name a live session; an unknown one is an error at once.
//! 3. Subscribe, then re-check (inside `Session::wait`), so a transition landing between step 1
//!    and the subscription still wakes the waiter.

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::params::{Until, Wait};
use super::session_error;
use crate::limits::{SESSION_WAIT_CAP_MS, SESSION_WAIT_DEFAULT, SESSION_WAIT_RUN_MAX_MS};
use crate::mcp::tools::{CallContext, ToolError, to_value};
use crate::session::{WaitFor, WaitOutcome};

#[derive(Debug, Serialize)]
struct WaitResult {
    met: bool,
    timed_out: bool,
    until: &'static str,
    /// The wait that actually ran, after the default and the cap were applied.
    timeout_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    shell_state: Option<proto::session::ShellState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
}

/// The wait that runs for a requested `timeout_ms`.
pub(super) fn effective_timeout_ms(requested: Option<u64>) -> u64 {
    match requested {
        None => SESSION_WAIT_DEFAULT.as_millis() as u64,
        Some(ms) if ms >= SESSION_WAIT_CAP_MS => SESSION_WAIT_RUN_MAX_MS,
        Some(ms) => ms,
    }
}

pub(super) async fn wait(ctx: &CallContext, p: Wait) -> Result<Value, ToolError> {
    let until = p.until.unwrap_or_default();
    let timeout_ms = effective_timeout_ms(p.timeout_ms);
    let label = match until {
        Until::Idle => "idle",
        Until::Exited => "exited",
    };
    let answer = |met: bool, session: Option<&crate::session::Session>| {
        let exit_code = session.and_then(|s| s.exit_info()).and_then(|e| e.exit_code);
        let shell_state = session.and_then(|s| s.shell_state());
        to_value(&WaitResult { met, timed_out: !met, until: label, timeout_ms, shell_state, exit_code })
    };
    // A detected agent: until=idle is a confirmed idle (see `agent_runtime::wait`).
    if until == Until::Idle
        && let Ok(session) = ctx.app.sessions.resolve(&p.session_id)
        && crate::agent_runtime::AgentLink::of(&session).and_then(crate::agent_runtime::AgentLink::adapter).is_some()
    {
        let outcome = crate::agent_runtime::wait::wait_settled(
            &session,
            Duration::from_millis(timeout_ms),
            crate::agent_runtime::wait::FirstTurn::Await,
        )
        .await;
        return super::agent::wait_answer(&session, outcome == WaitOutcome::Reached, timeout_ms);
    }
    // Step 1: tombstones included, nothing subscribed.
    if let Ok(session) = ctx.app.sessions.resolve(&p.session_id) {
        let exited = session.exit_info().is_some();
        let idle = session.shell_state() == Some(proto::session::ShellState::Idle);
        if exited || (until == Until::Idle && idle) {
            return answer(true, Some(&session));
        }
    }
    // Step 2: a live session, or an error now.
    let session = ctx.app.sessions.resolve(&p.session_id).map_err(session_error)?;
    // Step 3: `Session::wait` subscribes, then re-checks.
    let wait_for = match until {
        Until::Idle => WaitFor::Idle,
        Until::Exited => WaitFor::Exited,
    };
    let started = Instant::now();
    let outcome = session.wait(wait_for, Duration::from_millis(timeout_ms)).await;
    tracing::debug!(source = "mcp", session = %session.id, waited_ms = started.elapsed().as_millis() as u64, "session wait ended");
    answer(outcome == WaitOutcome::Reached, Some(&session))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_runs_five_seconds_short_and_the_default_is_a_minute() {
        assert_eq!(effective_timeout_ms(None), 60_000);
        assert_eq!(effective_timeout_ms(Some(1_000)), 1_000);
        assert_eq!(effective_timeout_ms(Some(299_999)), 299_999);
        assert_eq!(effective_timeout_ms(Some(300_000)), 295_000);
        assert_eq!(effective_timeout_ms(Some(u64::MAX)), 295_000);
    }
}
