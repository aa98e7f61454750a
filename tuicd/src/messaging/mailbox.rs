//! One recipient's inbox: bounded FIFO, logical cursors, the stored read cursor and the per-message
//! wake-up owner (the delivery lease). Pure data; the handle (`handle.rs`) locks it.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::Notify;

use crate::limits::INBOX_CAPACITY;

use super::types::AgentMessage;
use super::wake::WakeState;

/// Who owns a message's wake-up. Exactly one at a time; only the lease moves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WakeOwner {
    /// An active `wait` will return it.
    Waiter,
    /// The SSE / PTY route must deliver it; not yet taken.
    Terminal,
    /// The SSE / PTY route has taken it.
    TerminalTaken,
    /// The orchestrator wake machine announces it.
    Wake,
    /// No route beyond the inbox.
    InboxOnly,
}

#[derive(Clone, Debug)]
pub(crate) struct Stored {
    pub message: AgentMessage,
    pub owner: WakeOwner,
}

pub(crate) struct Mailbox {
    messages: VecDeque<Stored>,
    /// Last cursor handed out; the next is `max(now, last + 1)`.
    last_cursor: u64,
    /// `agent_read_cursor`: everything at or below it has been observed.
    read_cursor: u64,
    /// Unobserved messages evicted since the last inbox read reported them.
    missed: u64,
    pub active_waiters: usize,
    pub wake: WakeState,
    /// Woken on every append and on retire; waiters subscribe before they check.
    pub notify: Arc<Notify>,
}

impl Default for Mailbox {
    fn default() -> Self {
        Self {
            messages: VecDeque::new(),
            last_cursor: 0,
            read_cursor: 0,
            missed: 0,
            active_waiters: 0,
            wake: WakeState::default(),
            notify: Arc::new(Notify::new()),
        }
    }
}

impl Mailbox {
    /// The next strictly increasing logical millisecond for this recipient.
    pub(crate) fn next_cursor(&mut self, now_ms: u64) -> u64 {
        self.last_cursor = now_ms.max(self.last_cursor + 1);
        self.last_cursor
    }

    /// Appends with a fresh cursor, evicting per the FIFO rule when full. Returns the cursor.
    pub(crate) fn push(&mut self, mut message: AgentMessage, owner: WakeOwner, now_ms: u64) -> u64 {
        message.timestamp = self.next_cursor(now_ms);
        if self.messages.len() >= INBOX_CAPACITY {
            // Oldest peer message first; lifecycle mail only when nothing else is left.
            let victim = self.messages.iter().position(|s| !s.message.is_lifecycle()).unwrap_or(0);
            if let Some(evicted) = self.messages.remove(victim)
                && evicted.message.timestamp > self.read_cursor
            {
                self.missed += 1;
            }
        }
        let cursor = message.timestamp;
        self.messages.push_back(Stored { message, owner });
        cursor
    }

    pub(crate) fn read_cursor(&self) -> u64 {
        self.read_cursor
    }

    #[cfg(test)]
    pub(crate) fn last_cursor(&self) -> u64 {
        self.last_cursor
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.messages.len()
    }

    /// Messages after `since`, oldest first, at most `limit`.
    pub(crate) fn after(&self, since: u64, limit: usize) -> Vec<AgentMessage> {
        self.messages.iter().filter(|s| s.message.timestamp > since).take(limit).map(|s| s.message.clone()).collect()
    }

    /// Unobserved messages, oldest first (the orchestrator's wake window).
    pub(crate) fn unread_through(&self, through: u64) -> Vec<AgentMessage> {
        self.messages
            .iter()
            .filter(|s| s.message.timestamp > self.read_cursor && s.message.timestamp <= through)
            .map(|s| s.message.clone())
            .collect()
    }

    /// The cursor a response reports: the last returned message, or (for an empty batch) the stored
    /// position — never past the last cursor handed out, never behind the stored one.
    pub(crate) fn next_since(&self, since: u64, batch: &[AgentMessage]) -> u64 {
        match batch.last() {
            Some(last) => last.timestamp.max(self.read_cursor),
            None => since.min(self.last_cursor).max(self.read_cursor),
        }
    }

    /// Acknowledges everything through `cursor` atomically with the snapshot that produced it.
    /// The stored cursor only moves forward, so a replay never rewinds it.
    pub(crate) fn acknowledge(&mut self, cursor: u64) {
        self.read_cursor = self.read_cursor.max(cursor.min(self.last_cursor));
        self.wake.acknowledge(self.read_cursor);
    }

    /// Reports and resets the eviction count (inbox reads only).
    pub(crate) fn take_missed(&mut self) -> u64 {
        std::mem::take(&mut self.missed)
    }

    /// Releases the waiter lease when the last waiter leaves: unobserved waiter-owned messages go
    /// back to the terminal route. Returns how many were handed back.
    pub(crate) fn release_waiter(&mut self) -> usize {
        self.active_waiters = self.active_waiters.saturating_sub(1);
        if self.active_waiters > 0 {
            return 0;
        }
        let read = self.read_cursor;
        let mut handed = 0;
        for s in self.messages.iter_mut().filter(|s| s.owner == WakeOwner::Waiter && s.message.timestamp > read) {
            s.owner = WakeOwner::Terminal;
            handed += 1;
        }
        handed
    }

    /// Takes unobserved terminal-owned messages for SSE / PTY delivery, marking them taken.
    pub(crate) fn take_terminal(&mut self) -> Vec<AgentMessage> {
        let read = self.read_cursor;
        let mut out = Vec::new();
        for s in self.messages.iter_mut().filter(|s| s.owner == WakeOwner::Terminal && s.message.timestamp > read) {
            s.owner = WakeOwner::TerminalTaken;
            out.push(s.message.clone());
        }
        out
    }

    pub(crate) fn has_terminal_pending(&self) -> bool {
        let read = self.read_cursor;
        self.messages.iter().any(|s| s.owner == WakeOwner::Terminal && s.message.timestamp > read)
    }

    /// Unobserved messages, for migration to another identity on repair.
    pub(crate) fn drain_unread(&mut self) -> Vec<AgentMessage> {
        let read = self.read_cursor;
        self.messages.drain(..).filter(|s| s.message.timestamp > read).map(|s| s.message).collect()
    }

    pub(crate) fn unread_count(&self) -> usize {
        self.messages.iter().filter(|s| s.message.timestamp > self.read_cursor).count()
    }
}

#[cfg(test)]
#[path = "tests/mailbox.rs"]
mod tests;
