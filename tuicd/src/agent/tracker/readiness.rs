//! [`Readiness`]: the one definition of a confirmed idle, derived from the tracker's observations.

use super::super::event::{AgentState, ShellState};
use super::AgentTracker;

/// Where the agent stands for anyone who would type into it or wait for it: the one definition of
/// a confirmed idle, read by `session status` (`idle_confirmed`), `session action=wait
/// until=idle`, lifecycle mail, typed delivery and `session action=submit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Readiness {
    /// Idle or completed, proven by a hook, a shell-integration prompt, the end-of-task marker or
    /// a ready prompt that stayed stable; no background work; nothing on the last rows that looks
    /// like a question.
    ConfirmedIdle,
    /// A question is open: `confident` ones are `awaiting_input`; the others only hold typing.
    Question { confident: bool },
    /// Working, starting, or running background work.
    Busy,
    /// Quiet, but only silence says it is idle.
    Unconfirmed,
}

impl Readiness {
    /// Whether a waiter for idle wakes: the agent is done, or waits for someone to answer it.
    pub(crate) fn settled(self) -> bool {
        matches!(self, Readiness::ConfirmedIdle | Readiness::Question { .. })
    }
}

impl AgentTracker {
    /// See [`Readiness`]. For an agent the end-of-task marker is proof too; a plain shell is
    /// proven only by its hook or its shell-integration prompt.
    pub(super) fn derive_readiness(
        &self,
        shell: Option<ShellState>,
        agent_state: Option<AgentState>,
        proven: bool,
    ) -> Readiness {
        if self.question.is_some() {
            return Readiness::Question { confident: true };
        }
        let idle = match self.adapter {
            Some(_) => matches!(agent_state, Some(AgentState::Idle | AgentState::Completed)),
            None => shell == Some(ShellState::Idle),
        };
        let proven = proven || agent_state == Some(AgentState::Completed);
        if idle && self.suspected_question.is_some() {
            Readiness::Question { confident: false }
        } else if idle && proven {
            Readiness::ConfirmedIdle
        } else if idle || (self.adapter.is_none() && shell.is_none()) {
            Readiness::Unconfirmed
        } else {
            Readiness::Busy
        }
    }
}
