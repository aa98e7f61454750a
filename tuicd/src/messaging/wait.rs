//! `agent action=wait`: sleeps on the recipient's `Notify`, never polls. Holding the delivery
//! lease while it waits makes it the wake-up owner of mail that arrives meanwhile.

use std::time::Duration;

use uuid::Uuid;

use tokio::sync::Notify;

use crate::limits::{
    INBOX_CAPACITY, WAIT_ADVERTISED_MAX_MS, WAIT_DEFAULT, WAIT_EFFECTIVE_MAX, WAIT_GATHER_MAX, WAIT_GATHER_QUIET,
};

use super::handle::{Messaging, State};
use super::types::{MessagingError, TransportId, WaitOutcome};

/// The duration a wait really runs: 60 s by default; at or above the advertised 300000 ms cap it
/// runs 295000 ms so the answer beats a client that aborts at exactly 300 s.
pub(crate) fn effective_wait(timeout_ms: Option<u64>) -> Duration {
    match timeout_ms {
        None => WAIT_DEFAULT,
        Some(ms) if ms >= WAIT_ADVERTISED_MAX_MS => WAIT_EFFECTIVE_MAX,
        Some(ms) => Duration::from_millis(ms).min(WAIT_EFFECTIVE_MAX),
    }
}

/// Releases the lease if the wait future is dropped (client cancelled): unobserved waiter-owned
/// mail goes back to terminal delivery, so cancellation never strands a wake-up.
struct LeaseGuard<'a> {
    messaging: &'a Messaging,
    recipient: Uuid,
    held: bool,
}

impl Drop for LeaseGuard<'_> {
    fn drop(&mut self) {
        if !self.held {
            return;
        }
        let handed_back = {
            let mut guard = self.messaging.lock();
            let st = &mut *guard;
            st.release_lease(self.recipient)
        };
        if handed_back > 0 {
            self.messaging.signal_deliveries();
        }
    }
}

impl Messaging {
    /// Blocks until fresh mail after `since` (the stored cursor when omitted, re-read on every
    /// wake so concurrent waiters of one identity never both return the same message) or until the
    /// deadline. Success acknowledges the snapshot; a timeout still reports `next_since`.
    pub(crate) async fn wait(
        &self,
        waiter: &TransportId,
        since: Option<u64>,
        timeout_ms: Option<u64>,
    ) -> Result<WaitOutcome, MessagingError> {
        let deadline = tokio::time::Instant::now() + effective_wait(timeout_ms);
        let (recipient, notify) = {
            let mut guard = self.lock();
            let st = &mut *guard;
            let recipient = st.identities.route(waiter).ok_or(MessagingError::NotRegistered)?;
            let mailbox = st.mailboxes.get_mut(&recipient).ok_or(MessagingError::NotRegistered)?;
            mailbox.active_waiters += 1;
            (recipient, mailbox.notify.clone())
        };
        let mut lease = LeaseGuard { messaging: self, recipient, held: true };
        loop {
            // Subscribe first, then check: a send between the check and the sleep still wakes us.
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.lock().has_fresh(recipient, since)? {
                gather(&notify, deadline).await;
                if let Some(outcome) = self.lock().observe(recipient, since, false)? {
                    lease.held = false;
                    return Ok(outcome);
                }
                // Another waiter of this identity took the burst: wait on.
                continue;
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        // The deadline path: the final check and the lease release share one critical section, so
        // a message landing at the boundary is either returned here or owned by the terminal route.
        let outcome = self.lock().observe(recipient, since, true)?;
        lease.held = false;
        let outcome = outcome.expect("a final observe always answers");
        if outcome.timed_out {
            self.signal_deliveries();
        }
        Ok(outcome)
    }
}

/// Lets a burst finish: returns once no mail has arrived for [`WAIT_GATHER_QUIET`], after
/// [`WAIT_GATHER_MAX`], or at the deadline. Mail keeps the waiter's lease meanwhile, so nothing
/// arriving in the window is typed into a terminal as well.
async fn gather(notify: &Notify, deadline: tokio::time::Instant) {
    let until = (tokio::time::Instant::now() + WAIT_GATHER_MAX).min(deadline);
    loop {
        let more = notify.notified();
        tokio::pin!(more);
        more.as_mut().enable();
        let quiet = (tokio::time::Instant::now() + WAIT_GATHER_QUIET).min(until);
        tokio::select! {
            _ = &mut more => {}
            _ = tokio::time::sleep_until(quiet) => return,
        }
        if tokio::time::Instant::now() >= until {
            return;
        }
    }
}

impl State {
    /// Whether mail after `since` (the stored cursor when omitted) is waiting.
    fn has_fresh(&self, recipient: Uuid, since: Option<u64>) -> Result<bool, MessagingError> {
        let mailbox =
            self.mailboxes.get(&recipient).ok_or_else(|| MessagingError::UnknownRecipient(recipient.to_string()))?;
        Ok(!mailbox.after(since.unwrap_or(mailbox.read_cursor()), 1).is_empty())
    }

    /// One check by a waiter. Fresh mail: acknowledge, release the lease, answer `met`. Nothing and
    /// `last`: release the lease and answer `timed_out`. Nothing otherwise: keep waiting (`None`).
    fn observe(
        &mut self,
        recipient: Uuid,
        since: Option<u64>,
        last: bool,
    ) -> Result<Option<WaitOutcome>, MessagingError> {
        let Some(mailbox) = self.mailboxes.get_mut(&recipient) else {
            // Retired or reaped while waiting: the lease died with the mailbox.
            return Err(MessagingError::UnknownRecipient(recipient.to_string()));
        };
        let since = since.unwrap_or(mailbox.read_cursor());
        let messages = mailbox.after(since, INBOX_CAPACITY);
        if messages.is_empty() && !last {
            return Ok(None);
        }
        let next_since = mailbox.next_since(since, &messages);
        let met = !messages.is_empty();
        if met {
            mailbox.acknowledge(next_since);
        }
        self.release_lease(recipient);
        Ok(Some(WaitOutcome { met, timed_out: !met, new_messages: messages.len(), messages, next_since }))
    }

    /// Drops one waiter; returns how many waiter-owned messages went back to terminal delivery.
    pub(super) fn release_lease(&mut self, recipient: Uuid) -> usize {
        let Some(mailbox) = self.mailboxes.get_mut(&recipient) else { return 0 };
        let handed_back = mailbox.release_waiter();
        if handed_back > 0 || mailbox.has_terminal_pending() {
            self.pending_delivery.insert(recipient);
        }
        handed_back
    }
}
