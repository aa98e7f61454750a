//! The process-wide event bus behind `GET /events`.
//!
//! Every event gets a monotonic id. The last [`EVENT_HISTORY`] events are kept so that a client
//! reconnecting with `Last-Event-ID` replays exactly what it missed; when the history no longer
//! reaches back that far, the client is told with a `lagged` event instead of silently skipping.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::broadcast;

use crate::limits::{EVENT_CHANNEL_CAPACITY, EVENT_HISTORY};
use crate::lock::Recover;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub id: u64,
    pub kind: &'static str,
    /// The JSON payload, serialised once and shared by every subscriber.
    pub data: Arc<str>,
}

#[derive(Debug)]
pub(crate) struct EventBus {
    /// A std mutex: held only to assign an id, push to the ring and send, never across `.await`.
    /// Sending under the lock keeps the live order identical to the id order.
    history: Mutex<History>,
    live: broadcast::Sender<Arc<Event>>,
}

#[derive(Debug)]
struct History {
    next_id: u64,
    events: VecDeque<Arc<Event>>,
}

/// What a subscriber gets: the events it missed (or how many it can no longer get), then live.
#[derive(Debug)]
pub(crate) struct Subscription {
    /// The newest event id when subscribed: every later one comes on `live`.
    pub last_id: u64,
    pub missed: u64,
    pub replay: Vec<Arc<Event>>,
    pub live: broadcast::Receiver<Arc<Event>>,
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus {
    pub(crate) fn new() -> Self {
        let (live, _) = broadcast::channel(EVENT_CHANNEL_CAPACITY);
        Self { history: Mutex::new(History { next_id: 1, events: VecDeque::with_capacity(EVENT_HISTORY) }), live }
    }

    pub(crate) fn publish<T: Serialize>(&self, kind: &'static str, payload: &T) -> u64 {
        let data: Arc<str> = serde_json::to_string(payload).unwrap_or_else(|_| "{}".into()).into();
        let mut history = self.history.locked();
        let id = history.next_id;
        history.next_id += 1;
        let event = Arc::new(Event { id, kind, data });
        if history.events.len() == EVENT_HISTORY {
            history.events.pop_front();
        }
        history.events.push_back(event.clone());
        // No receivers is fine: the history still has it.
        let _ = self.live.send(event);
        id
    }

    /// Subscribes to live events and, with `after`, collects the retained events newer than it.
    /// Subscribing and reading history happen under one lock, so nothing falls between them.
    pub(crate) fn subscribe(&self, after: Option<u64>) -> Subscription {
        let history = self.history.locked();
        let live = self.live.subscribe();
        let last_id = history.next_id - 1;
        let Some(after) = after else {
            return Subscription { last_id, missed: 0, replay: Vec::new(), live };
        };
        let oldest = history.events.front().map_or(history.next_id, |e| e.id);
        let missed = oldest.saturating_sub(after + 1);
        let replay = history.events.iter().filter(|e| e.id > after).cloned().collect();
        Subscription { last_id, missed, replay, live }
    }

    /// The next id and the retained events, for the next process image (upgrade in place).
    pub(crate) fn export(&self) -> (u64, Vec<Arc<Event>>) {
        let history = self.history.locked();
        (history.next_id, history.events.iter().cloned().collect())
    }

    /// Continues a previous image's bus: its ids and history, so `Last-Event-ID` still resumes.
    /// Called before anything is published.
    pub(crate) fn import(&self, next_id: u64, events: impl IntoIterator<Item = (u64, String, String)>) {
        let mut history = self.history.locked();
        history.events.clear();
        for (id, kind, data) in events {
            if history.events.len() == EVENT_HISTORY {
                history.events.pop_front();
            }
            history.events.push_back(Arc::new(Event { id, kind: intern(kind), data: data.into() }));
        }
        history.next_id = next_id.max(history.events.back().map_or(1, |e| e.id + 1));
    }

    /// Retained events newer than `after`, for a subscriber that fell behind the live channel.
    /// Returns how many it can no longer get, and the rest.
    pub(crate) fn since(&self, after: u64) -> (u64, Vec<Arc<Event>>) {
        let history = self.history.locked();
        let oldest = history.events.front().map_or(history.next_id, |e| e.id);
        let missed = oldest.saturating_sub(after + 1);
        (missed, history.events.iter().filter(|e| e.id > after).cloned().collect())
    }
}

/// An event kind read back from a snapshot, as the `&'static str` every event carries. Kinds are a
/// small fixed set, so each distinct one is leaked once.
fn intern(kind: String) -> &'static str {
    static KINDS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut kinds = KINDS.locked();
    if let Some(known) = kinds.iter().find(|k| **k == kind) {
        return known;
    }
    let leaked: &'static str = Box::leak(kind.into_boxed_str());
    kinds.push(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_returns_exactly_the_missed_events() {
        let bus = EventBus::new();
        for i in 0..5 {
            bus.publish("x", &i);
        }
        let sub = bus.subscribe(Some(2));
        assert_eq!(sub.missed, 0);
        assert_eq!(sub.replay.iter().map(|e| e.id).collect::<Vec<_>>(), vec![3, 4, 5]);
    }

    #[test]
    fn replay_beyond_history_reports_what_was_lost() {
        let bus = EventBus::new();
        for i in 0..(EVENT_HISTORY as u64 + 10) {
            bus.publish("x", &i);
        }
        let sub = bus.subscribe(Some(0));
        assert_eq!(sub.missed, 10);
        assert_eq!(sub.replay.len(), EVENT_HISTORY);
        assert_eq!(sub.replay[0].id, 11);
    }

    #[test]
    fn an_imported_history_resumes_where_the_exported_one_ended() {
        let old = EventBus::new();
        for i in 0..3 {
            old.publish("session-created", &i);
        }
        let (next_id, history) = old.export();
        let new = EventBus::new();
        new.import(next_id, history.iter().map(|e| (e.id, e.kind.to_owned(), e.data.to_string())));
        assert_eq!(new.publish("session-closed", &9), 4);
        let sub = new.subscribe(Some(1));
        let ids: Vec<_> = sub.replay.iter().map(|e| (e.id, e.kind, e.data.to_string())).collect();
        assert_eq!(
            ids,
            vec![
                (2, "session-created", "1".into()),
                (3, "session-created", "2".into()),
                (4, "session-closed", "9".into())
            ]
        );
    }
}
