//! PTY injection helpers: the framed single line, and the one FIFO peer messages share with user
//! commands. Pure; the PTY layer performs the split write and Enter.

use std::collections::VecDeque;

use crate::limits::{INJECT_INLINE_MAX_BYTES, INJECTION_QUEUE_CAPACITY};

use super::types::AgentMessage;

/// The line typed into an ordinary recipient's composer: `[TUIC message from <name>] <content>` on
/// one line, or a pointer to the inbox when the body exceeds 2 KB. Control characters (newlines,
/// escape sequences) become spaces so a peer can neither submit early nor drive the terminal.
pub(crate) fn frame_for_terminal(from_name: &str, content: &str) -> String {
    let name = single_line(from_name);
    if content.len() > INJECT_INLINE_MAX_BYTES {
        return format!("[TUIC] new message from {name} \u{2014} read it with: agent action=inbox");
    }
    format!("[TUIC message from {name}] {}", single_line(content))
}

fn single_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// One entry of a terminal's FIFO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum QueueEntry {
    Peer(AgentMessage),
    Command(String),
}

/// Peer messages and Compose commands in one typed FIFO, so neither producer overtakes an earlier
/// accepted entry; at most one entry is released per idle transition.
#[derive(Debug, Default)]
pub(crate) struct InjectionQueue {
    entries: VecDeque<QueueEntry>,
    /// Set by a busy edge, cleared by the one release an idle transition allows.
    armed: bool,
}

impl InjectionQueue {
    pub(crate) fn new() -> Self {
        Self { entries: VecDeque::new(), armed: true }
    }

    pub(crate) fn push_peer(&mut self, message: AgentMessage) {
        self.make_room();
        self.entries.push_back(QueueEntry::Peer(message));
    }

    pub(crate) fn push_command(&mut self, command: String) {
        self.make_room();
        self.entries.push_back(QueueEntry::Command(command));
    }

    /// Beyond capacity the oldest peer entry goes (the inbox still holds it); commands are kept.
    fn make_room(&mut self) {
        if self.entries.len() < INJECTION_QUEUE_CAPACITY {
            return;
        }
        match self.entries.iter().position(|e| matches!(e, QueueEntry::Peer(_))) {
            Some(i) => drop(self.entries.remove(i)),
            None => drop(self.entries.pop_front()),
        }
    }

    /// The recipient went busy: the next idle transition may release one entry.
    pub(crate) fn on_busy(&mut self) {
        self.armed = true;
    }

    /// The recipient is canonically idle. Releases at most one entry per transition, and none while
    /// the composer holds a draft (clearing or submitting it calls this again).
    pub(crate) fn on_idle(&mut self, composer_empty: bool) -> Option<QueueEntry> {
        if !self.armed || !composer_empty {
            return None;
        }
        let entry = self.entries.pop_front()?;
        self.armed = false;
        Some(entry)
    }

    /// Puts back an entry whose injection was refused before any byte went in (the recipient
    /// turned busy or a draft appeared in between): it stays first and may go at the next chance.
    pub(crate) fn restore(&mut self, entry: QueueEntry) {
        self.entries.push_front(entry);
        self.armed = true;
    }

    /// Drops peer entries a `wait` / `inbox` already observed (cursor at or below `read_cursor`):
    /// the waiter owned that wake-up, so typing it too would be a duplicate turn.
    pub(crate) fn discard_observed(&mut self, read_cursor: u64) {
        self.entries.retain(|e| !matches!(e, QueueEntry::Peer(m) if m.timestamp <= read_cursor));
    }

    pub(crate) fn command_count(&self) -> usize {
        self.entries.iter().filter(|e| matches!(e, QueueEntry::Command(_))).count()
    }

    /// Clears user commands only; peer messages keep their relative order.
    pub(crate) fn clear_commands(&mut self) {
        self.entries.retain(|e| matches!(e, QueueEntry::Peer(_)));
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
#[path = "tests/injection.rs"]
mod tests;
