//! Send, inbox, the terminal-delivery hand-off and the orchestrator wake calls.

use std::sync::Arc;

use tokio::sync::Notify;
use uuid::Uuid;

use crate::limits::{INBOX_CAPACITY, INBOX_DEFAULT_LIMIT, MAX_MESSAGE_BYTES};

use super::delivery::{DeliveryPath, RecipientFacts, WakeGroupState, decide};
use super::handle::{Messaging, State};
use super::liveness::Liveness;
use super::mailbox::WakeOwner;
use super::types::{AgentMessage, InboxPage, InboxQuery, MessagingError, SendOutcome, TransportId};
use super::wake::{ReportEffect, WakeNotice, WakeResult, lifecycle_summary};

/// What the SSE / PTY delivery task takes for one recipient.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Deliveries {
    /// Payloads for an ordinary managed recipient: channel push or PTY injection queue.
    pub payloads: Vec<AgentMessage>,
    /// Mail joined an orchestrator's wake group: call [`Messaging::claim_wake`] when it is ready.
    pub wake_pending: bool,
}

impl Messaging {
    /// `agent action=send`: validates, resolves `to` (tuic_session, PTY id or alias), appends to
    /// the recipient's inbox and assigns the one wake-up owner, all in one critical section.
    pub(crate) fn send(
        &self,
        sender: &TransportId,
        to: &str,
        content: String,
        live: &dyn Liveness,
    ) -> Result<SendOutcome, MessagingError> {
        if content.len() > MAX_MESSAGE_BYTES {
            return Err(MessagingError::MessageTooLarge { size: content.len(), limit: MAX_MESSAGE_BYTES });
        }
        if content.trim().is_empty() {
            return Err(MessagingError::EmptyMessage);
        }
        let now = self.now_ms();
        let (outcome, notify) = {
            let mut guard = self.lock();
            let st = &mut *guard;
            let from = st.identities.route(sender).ok_or(MessagingError::NotRegistered)?;
            let from_name = st.identities.get(from).map(|i| i.name.clone()).unwrap_or_default();
            let recipient = st.resolve(to, live).ok_or_else(|| MessagingError::UnknownRecipient(to.to_string()))?;
            let message = AgentMessage {
                id: Uuid::new_v4().to_string(),
                from_tuic_session: from,
                from_name,
                content,
                timestamp: 0,
            };
            st.deliver(recipient, message, now, live).ok_or_else(|| MessagingError::UnknownRecipient(to.to_string()))?
        };
        notify.notify_waiters();
        if outcome.delivery_path != DeliveryPath::Waiter {
            self.signal_deliveries();
        }
        Ok(outcome)
    }

    /// `agent action=inbox`: a snapshot after `since` (stored cursor when omitted), acknowledged
    /// atomically with the snapshot, `next_since` always present, `missed_count` when eviction hit
    /// unread mail since the last read.
    pub(crate) fn inbox(&self, reader: &TransportId, query: InboxQuery) -> Result<InboxPage, MessagingError> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let recipient = st.identities.route(reader).ok_or(MessagingError::NotRegistered)?;
        let mailbox = st.mailboxes.get_mut(&recipient).ok_or(MessagingError::NotRegistered)?;
        let since = query.since.unwrap_or(mailbox.read_cursor());
        let limit = query.limit.unwrap_or(INBOX_DEFAULT_LIMIT).clamp(1, INBOX_CAPACITY);
        let messages = mailbox.after(since, limit);
        let next_since = mailbox.next_since(since, &messages);
        mailbox.acknowledge(next_since);
        let missed = mailbox.take_missed();
        Ok(InboxPage { messages, next_since, missed_count: (missed > 0).then_some(missed) })
    }

    /// Recipients with terminal-owned mail since the last call (drained). Pair with
    /// [`Messaging::deliveries_notify`] to sleep until there is some.
    pub(crate) fn pending_deliveries(&self) -> Vec<Uuid> {
        std::mem::take(&mut self.lock().pending_delivery).into_iter().collect()
    }

    /// Woken whenever [`Messaging::pending_deliveries`] gains a recipient.
    pub(crate) fn deliveries_notify(&self) -> &Notify {
        &self.shared.deliveries
    }

    /// Takes a recipient's unobserved terminal-owned mail. Orchestrators and lifecycle mail never
    /// yield a payload: they join the wake group. External peers keep it inbox-only.
    /// `wake_pending` says an unread group awaits a notice: call [`Messaging::claim_wake`].
    pub(crate) fn take_deliveries(&self, recipient: Uuid, live: &dyn Liveness) -> Deliveries {
        let mut guard = self.lock();
        let st = &mut *guard;
        let orchestrator = st.identities.get(recipient).is_some_and(|i| i.orchestrator);
        let has_terminal = live.terminal_facts(recipient).is_some();
        let Some(mailbox) = st.mailboxes.get_mut(&recipient) else { return Deliveries::default() };
        let mut out = Deliveries::default();
        for message in mailbox.take_terminal() {
            if !has_terminal {
                continue;
            }
            if orchestrator || message.is_lifecycle() {
                mailbox.wake.on_mail(message.timestamp);
            } else {
                out.payloads.push(message);
            }
        }
        out.wake_pending = has_terminal && mailbox.wake.window_through().is_some();
        out
    }

    /// Asks for one wake notice for an orchestrator (or a parent's lifecycle mail). Call on every
    /// authoritative idle/completed transition and after `take_deliveries` reports `wake_pending`.
    /// `None` when not ready, a waiter owns delivery, a notice is pending, or the budget is spent.
    pub(crate) fn claim_wake(&self, recipient: Uuid, live: &dyn Liveness) -> Option<WakeNotice> {
        let now = self.now_ms();
        let ready = live.terminal_facts(recipient).is_some_and(|f| f.lifecycle.is_ready() && f.composer_empty);
        let mut guard = self.lock();
        let mailbox = guard.mailboxes.get_mut(&recipient)?;
        if mailbox.active_waiters > 0 {
            return None;
        }
        let window = mailbox.unread_through(mailbox.wake.window_through()?);
        mailbox.wake.claim(now, ready, &window)
    }

    /// Settles a notice attempt. A confirmed lifecycle summary acknowledges its own window.
    pub(crate) fn report_wake(&self, recipient: Uuid, attempt: u64, result: WakeResult) {
        let now = self.now_ms();
        let mut guard = self.lock();
        let Some(mailbox) = guard.mailboxes.get_mut(&recipient) else { return };
        if let ReportEffect::Acknowledge(cursor) = mailbox.wake.report(now, attempt, result) {
            mailbox.acknowledge(cursor);
        }
    }

    /// A new busy-to-idle edge of the recipient's managed PTY re-arms its wake budget.
    pub(crate) fn busy_to_idle_edge(&self, recipient: Uuid) {
        if let Some(mailbox) = self.lock().mailboxes.get_mut(&recipient) {
            mailbox.wake.busy_to_idle_edge();
        }
    }

    /// The recipient's stored read cursor (`agent_read_cursor`), e.g. to drop observed entries
    /// from its injection queue.
    pub(crate) fn read_cursor(&self, recipient: Uuid) -> Option<u64> {
        self.lock().mailboxes.get(&recipient).map(|m| m.read_cursor())
    }

    pub(super) fn signal_deliveries(&self) {
        self.shared.deliveries.notify_waiters();
    }
}

impl State {
    /// `to` as a registered tuic_session first, then as a live terminal's PTY id or alias.
    pub(super) fn resolve(&self, to: &str, live: &dyn Liveness) -> Option<Uuid> {
        if let Ok(id) = Uuid::parse_str(to.trim())
            && self.identities.contains(id)
        {
            return Some(id);
        }
        live.terminal_identity(to.trim()).filter(|id| self.identities.contains(*id))
    }

    /// Appends `message` to `recipient`'s inbox and assigns its wake-up owner. `None` when the
    /// recipient has no identity (retired or never registered).
    pub(super) fn deliver(
        &mut self,
        recipient: Uuid,
        message: AgentMessage,
        now: u64,
        live: &dyn Liveness,
    ) -> Option<(SendOutcome, Arc<Notify>)> {
        let identity = self.identities.get(recipient)?;
        let lifecycle = message.is_lifecycle();
        // Lifecycle mail takes the orchestrator route whatever the parent: never a payload typed.
        let orchestrator = identity.orchestrator || lifecycle;
        let terminal = live.terminal_facts(recipient);
        let mailbox = self.mailboxes.entry(recipient).or_default();
        let waiter = mailbox.active_waiters > 0;
        let wake_group =
            if orchestrator && terminal.is_some() { mailbox.wake.state(now) } else { WakeGroupState::Open };
        let summary_fits = orchestrator && {
            let mut window = mailbox.unread_through(u64::MAX);
            window.push(message.clone());
            lifecycle_summary(&window).is_some()
        };
        let path = decide(RecipientFacts { waiter, orchestrator, terminal, wake_group, summary_fits });
        let woken_by_wake = orchestrator && terminal.is_some() && !waiter;
        let owner = match path {
            DeliveryPath::Waiter => WakeOwner::Waiter,
            DeliveryPath::SseChannel | DeliveryPath::TerminalOrQueued => WakeOwner::Terminal,
            _ if woken_by_wake => WakeOwner::Wake,
            _ => WakeOwner::InboxOnly,
        };
        let id = message.id.clone();
        let cursor = mailbox.push(message, owner, now);
        if woken_by_wake {
            // Busy or exhausted orchestrators keep the mail eligible for the next idle transition.
            mailbox.wake.on_mail(cursor);
        }
        if matches!(owner, WakeOwner::Terminal | WakeOwner::Wake) {
            // One delivery loop serves both: payloads to SSE / PTY, notices to claim_wake.
            self.pending_delivery.insert(recipient);
        }
        let notify = mailbox.notify.clone();
        let outcome = SendOutcome {
            message_id: id,
            recipient,
            delivered: path.delivered(),
            delivery_path: path,
            recipient_has_terminal: terminal.is_some(),
            timestamp: cursor,
        };
        Some((outcome, notify))
    }
}
