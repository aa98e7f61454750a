//! MCP protocol sessions: the `mcp-session-id` a client gets at `initialize`, what we remember
//! about it, and the one GET /mcp stream that may deliver its notifications.
//!
//! One std `Mutex` guards the whole map and is held for microseconds, never across `.await`.
//! The stream's sender lives inside the session entry, so the seed's two-map lock-order rules
//! (mcp_sessions then messaging_channels, `entry` rather than `get_mut`) collapse into one lock:
//! a stream's teardown compares its generation and clears the sender in the same critical
//! section in which a replacement would install its own, so a superseded stream can never
//! remove its replacement's sender, whether or not the id still exists.
//!
//! Generations come from one process-wide counter, never per session: a DELETE can retire an id
//! while its stream is still draining, and a later GET may recreate that id from scratch; a
//! per-session counter would restart and reissue a number the draining stream still holds.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::limits::{MCP_MAX_SESSIONS, MCP_SESSION_ID_MAX_LEN, MCP_STREAM_QUEUE};
use crate::lock::Recover;

/// How a client arrived at `initialize` (logged as `event`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// No session id presented: first contact.
    Fresh,
    /// Presented an id we still hold: the same connection continuing.
    Resumed,
    /// Presented an id we no longer hold (reaped, or lost with a restart); a new one was minted.
    Reconnected { presented: String },
}

impl Arrival {
    pub(crate) fn event(&self) -> &'static str {
        match self {
            Arrival::Fresh => "fresh",
            Arrival::Resumed => "resumed",
            Arrival::Reconnected { .. } => "reconnected",
        }
    }
}

/// What `initialize` records about the client.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientInfo {
    /// The `x-tuic-session` identity asserted by a bridge running inside a tuic PTY (or the one
    /// a later `agent action=register` bound this session to).
    pub tuic_session: Option<String>,
    /// The client declared `capabilities.experimental["claude/channel"]` at initialize: it takes
    /// `notifications/claude/channel` pushes on its GET stream.
    pub channels: bool,
    /// The client asked for the collapsed tool surface for itself (a Grok shell): see
    /// [`crate::mcp::tools::meta`].
    pub collapse_tools: bool,
    /// `clientInfo.name` at initialize (`claude-code`, `cursor`, ...).
    pub name: Option<String>,
    /// The capabilities the client declared at initialize that an upstream's requests need
    /// (`sampling`, `elicitation`, `roots`; see [`crate::mcp::client_requests`]).
    pub answers: Vec<&'static str>,
}

#[derive(Debug)]
struct Entry {
    last_active: Instant,
    client: ClientInfo,
    stream: Option<StreamSlot>,
}

#[derive(Debug)]
struct StreamSlot {
    generation: u64,
    sender: mpsc::Sender<Arc<str>>,
}

/// A GET stream's claim on its session: the receiver of its notifications and its generation.
#[derive(Debug)]
pub(crate) struct StreamClaim {
    pub generation: u64,
    pub receiver: mpsc::Receiver<Arc<str>>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum ProtocolSessionError {
    #[error("mcp-session-id must be 1..={MCP_SESSION_ID_MAX_LEN} visible ASCII characters")]
    BadId,
    #[error("too many MCP sessions are open (limit {MCP_MAX_SESSIONS}) and every one holds a live stream")]
    Full,
}

#[derive(Debug, Default)]
pub(crate) struct ProtocolSessions {
    entries: Mutex<HashMap<String, Entry>>,
    /// Process-wide stream generation counter (see the module docs).
    generation: AtomicU64,
}

/// Session ids are visible ASCII (0x21..=0x7E), as the transport spec requires.
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MCP_SESSION_ID_MAX_LEN && id.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

impl ProtocolSessions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.locked()
    }

    /// Records an `initialize`: resumes a held id, or mints a new one.
    pub(crate) fn initialize(
        &self,
        presented: Option<&str>,
        client: ClientInfo,
    ) -> Result<(String, Arrival), ProtocolSessionError> {
        let mut entries = self.lock();
        if let Some(id) = presented
            && let Some(entry) = entries.get_mut(id)
        {
            entry.last_active = Instant::now();
            entry.client = client;
            return Ok((id.to_owned(), Arrival::Resumed));
        }
        let arrival = match presented {
            None => Arrival::Fresh,
            Some(p) => Arrival::Reconnected { presented: p.to_owned() },
        };
        let id = uuid::Uuid::new_v4().to_string();
        insert(&mut entries, id.clone(), client)?;
        Ok((id, arrival))
    }

    /// Marks `id` active, recreating it when we no longer hold it (a stale id auto-recovers).
    /// Returns whether it had to be recreated.
    pub(crate) fn touch(&self, id: &str) -> Result<bool, ProtocolSessionError> {
        if !valid_id(id) {
            return Err(ProtocolSessionError::BadId);
        }
        let mut entries = self.lock();
        if let Some(entry) = entries.get_mut(id) {
            entry.last_active = Instant::now();
            return Ok(false);
        }
        let client = ClientInfo::default();
        insert(&mut entries, id.to_owned(), client)?;
        Ok(true)
    }

    /// The `clientInfo.name` a session gave at initialize.
    pub(crate) fn client_name(&self, id: &str) -> Option<String> {
        self.lock().get(id).and_then(|e| e.client.name.clone())
    }

    /// The identity bound to a session at initialize.
    pub(crate) fn identity(&self, id: &str) -> Option<String> {
        self.lock().get(id).and_then(|e| e.client.tuic_session.clone())
    }

    /// Whether the session's client gets the collapsed tool surface whatever the config says.
    pub(crate) fn collapses_tools(&self, id: &str) -> bool {
        self.lock().get(id).is_some_and(|e| e.client.collapse_tools)
    }

    /// Whether the session's client declared `capability` at initialize; `None` for an unknown
    /// session.
    pub(crate) fn declares(&self, id: &str, capability: &str) -> Option<bool> {
        self.lock().get(id).map(|e| e.client.answers.contains(&capability))
    }

    /// Whether the session's client declared any capability an upstream's request needs.
    pub(crate) fn answers_requests(&self, id: &str) -> bool {
        self.lock().get(id).is_some_and(|e| !e.client.answers.is_empty())
    }

    /// Records the peer identity a session was bound to by `agent action=register`.
    pub(crate) fn set_identity(&self, id: &str, tuic_session: &str) {
        if let Some(entry) = self.lock().get_mut(id) {
            entry.client.tuic_session = Some(tuic_session.to_owned());
        }
    }

    /// A session is live (it may own a peer identity) while it holds a stream or was active
    /// within `grace`.
    pub(crate) fn is_live(&self, id: &str, grace: Duration) -> bool {
        self.lock().get(id).is_some_and(|e| {
            e.stream.as_ref().is_some_and(|s| !s.sender.is_closed()) || e.last_active.elapsed() < grace
        })
    }

    /// How long ago the session last made a request; zero while it holds an open stream (it is
    /// listening now). `None` for an unknown session.
    pub(crate) fn idle_for(&self, id: &str) -> Option<Duration> {
        self.lock().get(id).map(|e| {
            if e.stream.as_ref().is_some_and(|s| !s.sender.is_closed()) {
                Duration::ZERO
            } else {
                e.last_active.elapsed()
            }
        })
    }

    /// Sessions bound to `tuic_session` whose client takes channel pushes and holds a live stream.
    pub(crate) fn channel_streams(&self, tuic_session: &str) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, e)| {
                e.client.channels
                    && e.client.tuic_session.as_deref() == Some(tuic_session)
                    && e.stream.as_ref().is_some_and(|s| !s.sender.is_closed())
            })
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Queues `message` on one session's stream. `false` when it has none or its queue is full.
    pub(crate) fn push(&self, id: &str, message: &str) -> bool {
        self.lock().get(id).and_then(|e| e.stream.as_ref()).is_some_and(|s| s.sender.try_send(message.into()).is_ok())
    }

    #[cfg(test)]
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// Installs a new GET stream on `id` (recreating the id if needed), replacing any older one:
    /// dropping the old sender ends the superseded stream.
    pub(crate) fn attach_stream(&self, id: &str) -> Result<StreamClaim, ProtocolSessionError> {
        self.touch(id)?;
        let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        let (sender, receiver) = mpsc::channel(MCP_STREAM_QUEUE);
        let mut entries = self.lock();
        if let Some(entry) = entries.get_mut(id) {
            entry.stream = Some(StreamSlot { generation, sender });
        }
        Ok(StreamClaim { generation, receiver })
    }

    /// A stream's teardown: releases the slot only while it still holds `generation`.
    pub(crate) fn detach_stream(&self, id: &str, generation: u64) {
        let mut entries = self.lock();
        if let Some(entry) = entries.get_mut(id)
            && entry.stream.as_ref().is_some_and(|s| s.generation == generation)
        {
            entry.stream = None;
            entry.last_active = Instant::now();
        }
    }

    #[cfg(test)]
    pub(crate) fn has_stream(&self, id: &str) -> bool {
        self.lock().get(id).is_some_and(|e| e.stream.is_some())
    }

    /// Ends a session (DELETE). Its stream, if any, ends with it.
    pub(crate) fn remove(&self, id: &str) -> bool {
        self.lock().remove(id).is_some()
    }

    /// Forgets sessions idle longer than `ttl` that hold no live stream. Returns their ids.
    pub(crate) fn reap(&self, ttl: Duration) -> Vec<String> {
        let mut entries = self.lock();
        let mut reaped = Vec::new();
        entries.retain(|id, e| {
            let keep = e.stream.as_ref().is_some_and(|s| !s.sender.is_closed()) || e.last_active.elapsed() < ttl;
            if !keep {
                reaped.push(id.clone());
            }
            keep
        });
        reaped
    }

    /// Queues `message` on every live stream; a full queue drops it for that stream only.
    pub(crate) fn broadcast(&self, message: &str) -> usize {
        let message: Arc<str> = message.into();
        let entries = self.lock();
        entries
            .values()
            .filter_map(|e| e.stream.as_ref())
            .filter(|s| s.sender.try_send(message.clone()).is_ok())
            .count()
    }

    /// Every session's id and what its client declared (upgrade in place).
    pub(crate) fn export(&self) -> Vec<(String, ClientInfo)> {
        self.lock().iter().map(|(id, e)| (id.clone(), e.client.clone())).collect()
    }

    /// Holds the sessions a previous process image held, as they were initialized.
    pub(crate) fn import(&self, sessions: impl IntoIterator<Item = (String, ClientInfo)>) {
        let mut entries = self.lock();
        for (id, client) in sessions {
            if valid_id(&id) {
                let _ = insert(&mut entries, id, client);
            }
        }
    }

    /// Ends every GET stream (the endpoint was switched off); sessions themselves stay.
    pub(crate) fn close_streams(&self) {
        for entry in self.lock().values_mut() {
            entry.stream = None;
        }
    }
}

/// Inserts under the cap: at the cap, evicts the least recently used session without a stream.
fn insert(entries: &mut HashMap<String, Entry>, id: String, client: ClientInfo) -> Result<(), ProtocolSessionError> {
    if entries.len() >= MCP_MAX_SESSIONS {
        let victim = entries
            .iter()
            .filter(|(_, e)| e.stream.is_none())
            .min_by_key(|(_, e)| e.last_active)
            .map(|(k, _)| k.clone())
            .ok_or(ProtocolSessionError::Full)?;
        tracing::info!(source = "mcp", session = %victim, "session cap reached; evicted the least recently used session");
        entries.remove(&victim);
    }
    entries.insert(id, Entry { last_active: Instant::now(), client, stream: None });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_reports_fresh_resumed_and_reconnected() {
        let sessions = ProtocolSessions::default();
        let (id, arrival) = sessions.initialize(None, ClientInfo::default()).unwrap();
        assert_eq!(arrival, Arrival::Fresh);
        let (again, arrival) = sessions.initialize(Some(&id), ClientInfo::default()).unwrap();
        assert_eq!((again.as_str(), arrival), (id.as_str(), Arrival::Resumed));
        let (minted, arrival) = sessions.initialize(Some("gone"), ClientInfo::default()).unwrap();
        assert_ne!(minted, "gone");
        assert_eq!(arrival, Arrival::Reconnected { presented: "gone".into() });
    }

    #[test]
    fn a_superseded_stream_teardown_keeps_its_replacement() {
        let sessions = ProtocolSessions::default();
        let old = sessions.attach_stream("s1").unwrap();
        let new = sessions.attach_stream("s1").unwrap();
        assert!(new.generation > old.generation);
        sessions.detach_stream("s1", old.generation);
        assert!(sessions.has_stream("s1"), "the older stream's teardown removed the new sender");
        sessions.detach_stream("s1", new.generation);
        assert!(!sessions.has_stream("s1"));
    }

    #[test]
    fn generations_never_repeat_across_a_deleted_and_recreated_id() {
        let sessions = ProtocolSessions::default();
        let draining = sessions.attach_stream("s1").unwrap();
        assert!(sessions.remove("s1"));
        let recreated = sessions.attach_stream("s1").unwrap();
        assert_ne!(draining.generation, recreated.generation);
        sessions.detach_stream("s1", draining.generation);
        assert!(sessions.has_stream("s1"));
    }

    #[test]
    fn stale_ids_recover_and_bad_ids_are_refused() {
        let sessions = ProtocolSessions::default();
        assert_eq!(sessions.touch("stale-id"), Ok(true));
        assert_eq!(sessions.touch("stale-id"), Ok(false));
        assert_eq!(sessions.touch("has space"), Err(ProtocolSessionError::BadId));
        assert_eq!(sessions.touch(&"x".repeat(MCP_SESSION_ID_MAX_LEN + 1)), Err(ProtocolSessionError::BadId));
    }

    #[test]
    fn reaping_spares_sessions_with_a_live_stream() {
        let sessions = ProtocolSessions::default();
        sessions.touch("idle").unwrap();
        let _claim = sessions.attach_stream("streaming").unwrap();
        assert_eq!(sessions.reap(Duration::ZERO), vec!["idle".to_owned()]);
        assert!(sessions.contains("streaming") && !sessions.contains("idle"));
    }

    #[test]
    fn broadcast_reaches_every_live_stream() {
        let sessions = ProtocolSessions::default();
        let mut a = sessions.attach_stream("a").unwrap();
        let mut b = sessions.attach_stream("b").unwrap();
        assert_eq!(sessions.broadcast("hi"), 2);
        assert_eq!(&*a.receiver.try_recv().unwrap(), "hi");
        assert_eq!(&*b.receiver.try_recv().unwrap(), "hi");
    }
}
