//! The delivery-path decision: one pure function from recipient facts to the route `send` reports.

use serde::Serialize;

use super::liveness::{AgentKind, Lifecycle, TerminalFacts};

/// The single source of truth for a message's route (wire strings kept from the reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub(crate) enum DeliveryPath {
    /// An active `agent action=wait` owns the wake-up.
    #[serde(rename = "waiter_and_inbox")]
    Waiter,
    /// Pushed as `notifications/claude/channel` into a working Claude Code turn.
    #[serde(rename = "sse_channel_and_inbox")]
    SseChannel,
    /// Typed into an idle ordinary agent's terminal now, or queued for its next busy-to-idle edge.
    #[serde(rename = "terminal_or_queued_and_inbox")]
    TerminalOrQueued,
    /// An orchestrator gets the payload-free `[TUIC] message available` notice.
    #[serde(rename = "wake_notification_and_inbox")]
    WakeNotification,
    /// A notice already pending for the unread group covers this message too.
    #[serde(rename = "coalesced_wake_and_inbox")]
    CoalescedWake,
    /// Every message in the window is server-authored lifecycle mail: the notice types it.
    #[serde(rename = "lifecycle_summary_and_inbox")]
    LifecycleSummary,
    /// Stored only; the recipient reads it with `inbox` or `wait`.
    #[serde(rename = "inbox_only")]
    InboxOnly,
}

impl DeliveryPath {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            DeliveryPath::Waiter => "waiter_and_inbox",
            DeliveryPath::SseChannel => "sse_channel_and_inbox",
            DeliveryPath::TerminalOrQueued => "terminal_or_queued_and_inbox",
            DeliveryPath::WakeNotification => "wake_notification_and_inbox",
            DeliveryPath::CoalescedWake => "coalesced_wake_and_inbox",
            DeliveryPath::LifecycleSummary => "lifecycle_summary_and_inbox",
            DeliveryPath::InboxOnly => "inbox_only",
        }
    }

    /// `delivered` on the send response: some route beyond the inbox took the wake-up.
    pub(crate) fn delivered(self) -> bool {
        self != DeliveryPath::InboxOnly
    }
}

/// Where an orchestrator's unread-mail group stands (see [`super::wake::WakeState`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WakeGroupState {
    /// No notice pending: a ready orchestrator gets a fresh one.
    Open,
    /// A notice is in flight or announced and not yet acknowledged: new mail coalesces into it.
    Pending,
    /// Two uncertain or one unstarted attempt: inbox-only until acknowledged or re-armed.
    Exhausted,
}

/// Everything the decision reads about a recipient.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RecipientFacts {
    /// An `agent action=wait` is active for this identity.
    pub waiter: bool,
    /// Declared by `register orchestrator=true`, or the mail is lifecycle mail (routed the same way).
    pub orchestrator: bool,
    /// `None` for an external peer without a managed PTY.
    pub terminal: Option<TerminalFacts>,
    pub wake_group: WakeGroupState,
    /// The unread window including this message is all lifecycle mail and its summary fits.
    pub summary_fits: bool,
}

/// Decides the route. Orchestrators never get a payload in their terminal; ordinary agents get a
/// channel push only inside a working Claude Code turn, otherwise the terminal (now or queued).
pub(crate) fn decide(facts: RecipientFacts) -> DeliveryPath {
    if facts.waiter {
        return DeliveryPath::Waiter;
    }
    let Some(terminal) = facts.terminal else {
        return DeliveryPath::InboxOnly;
    };
    if facts.orchestrator {
        return match facts.wake_group {
            WakeGroupState::Pending => DeliveryPath::CoalescedWake,
            WakeGroupState::Exhausted => DeliveryPath::InboxOnly,
            // Working, awaiting-input, starting and unknown fail closed; the mail stays
            // eligible and is re-evaluated at the next idle/completed transition.
            WakeGroupState::Open if !terminal.lifecycle.is_ready() => DeliveryPath::InboxOnly,
            WakeGroupState::Open if facts.summary_fits => DeliveryPath::LifecycleSummary,
            WakeGroupState::Open => DeliveryPath::WakeNotification,
        };
    }
    match terminal.lifecycle {
        Lifecycle::Working if terminal.agent == AgentKind::ClaudeCode && terminal.channel_stream => {
            DeliveryPath::SseChannel
        }
        // Idle with an empty composer: typed now. Busy, drafting, asking or starting: queued for
        // the next busy-to-idle edge, in one FIFO with user commands.
        _ => DeliveryPath::TerminalOrQueued,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terminal(agent: AgentKind, lifecycle: Lifecycle, channel_stream: bool) -> Option<TerminalFacts> {
        Some(TerminalFacts { agent, lifecycle, composer_empty: true, channel_stream })
    }

    fn facts(orchestrator: bool, terminal: Option<TerminalFacts>) -> RecipientFacts {
        RecipientFacts { waiter: false, orchestrator, terminal, wake_group: WakeGroupState::Open, summary_fits: false }
    }

    #[test]
    fn an_active_waiter_owns_the_wake_up_whatever_the_terminal_says() {
        let mut f = facts(true, terminal(AgentKind::ClaudeCode, Lifecycle::Working, true));
        f.waiter = true;
        assert_eq!(decide(f), DeliveryPath::Waiter);
    }

    #[test]
    fn only_a_working_claude_code_with_a_live_stream_gets_the_channel() {
        let working_cc = facts(false, terminal(AgentKind::ClaudeCode, Lifecycle::Working, true));
        assert_eq!(decide(working_cc), DeliveryPath::SseChannel);
        let idle_cc = facts(false, terminal(AgentKind::ClaudeCode, Lifecycle::Idle, true));
        assert_eq!(decide(idle_cc), DeliveryPath::TerminalOrQueued);
        let working_codex = facts(false, terminal(AgentKind::Other, Lifecycle::Working, true));
        assert_eq!(decide(working_codex), DeliveryPath::TerminalOrQueued);
        let no_stream = facts(false, terminal(AgentKind::ClaudeCode, Lifecycle::Working, false));
        assert_eq!(decide(no_stream), DeliveryPath::TerminalOrQueued);
    }

    #[test]
    fn an_external_peer_is_inbox_only() {
        assert_eq!(decide(facts(false, None)), DeliveryPath::InboxOnly);
        assert_eq!(decide(facts(true, None)), DeliveryPath::InboxOnly);
    }

    #[test]
    fn an_orchestrator_is_never_typed_into_nor_pushed_a_payload() {
        for lifecycle in [
            Lifecycle::Idle,
            Lifecycle::Completed,
            Lifecycle::Working,
            Lifecycle::AwaitingInput,
            Lifecycle::Starting,
            Lifecycle::Unknown,
        ] {
            for wake_group in [WakeGroupState::Open, WakeGroupState::Pending, WakeGroupState::Exhausted] {
                let mut f = facts(true, terminal(AgentKind::ClaudeCode, lifecycle, true));
                f.wake_group = wake_group;
                let path = decide(f);
                assert_ne!(path, DeliveryPath::SseChannel, "{lifecycle:?} {wake_group:?}");
                assert_ne!(path, DeliveryPath::TerminalOrQueued, "{lifecycle:?} {wake_group:?}");
            }
        }
    }

    #[test]
    fn an_orchestrator_wake_follows_its_group_and_lifecycle() {
        let idle = terminal(AgentKind::Other, Lifecycle::Idle, false);
        assert_eq!(decide(facts(true, idle)), DeliveryPath::WakeNotification);
        let mut summary = facts(true, idle);
        summary.summary_fits = true;
        assert_eq!(decide(summary), DeliveryPath::LifecycleSummary);
        let busy = facts(true, terminal(AgentKind::Other, Lifecycle::Working, false));
        assert_eq!(decide(busy), DeliveryPath::InboxOnly);
        let mut pending = facts(true, idle);
        pending.wake_group = WakeGroupState::Pending;
        assert_eq!(decide(pending), DeliveryPath::CoalescedWake);
        let mut exhausted = facts(true, idle);
        exhausted.wake_group = WakeGroupState::Exhausted;
        assert_eq!(decide(exhausted), DeliveryPath::InboxOnly);
    }

    #[test]
    fn delivery_path_strings_match_the_wire() {
        let json = serde_json::to_string(&DeliveryPath::CoalescedWake).unwrap();
        assert_eq!(json, "\"coalesced_wake_and_inbox\"");
        assert_eq!(DeliveryPath::LifecycleSummary.as_str(), "lifecycle_summary_and_inbox");
        assert!(!DeliveryPath::InboxOnly.delivered());
    }
}
