//! Agents in sessions: the [`crate::agent`] engine wired into every PTY session, and the MCP
//! surface built on it (`session action=submit`, the `agent`, `task` and `progress` tools).
//!
//! # Wiring (one [`AgentLink`] per session, a field of `Session`)
//! - The screen follower calls [`AgentLink::on_output`] under the screen lock with each batch it
//!   applied to the screen model, and the raw cursor past it ([`AgentLink::fed`]).
//! - Every writer goes through `Session::write`, which holds [`AgentLink::writer`] and feeds
//!   [`AgentLink::on_input`] with exactly the bytes it queues. `submit` holds the same lock across
//!   its whole framed write.
//! - A ticker task runs only while the session had output or input in the last
//!   [`AGENT_TICK_LINGER`] (or background work is alive): it calls `tick` every
//!   [`AGENT_TICK_INTERVAL`] and probes descendants at most every [`BACKGROUND_PROBE_INTERVAL`].
//!   An idle session has no task and no timer; reads ([`AgentLink::status`]) tick on demand.
//! - Every engine event goes out as the WebSocket `{"type":"parsed","event":...}` frame and as
//!   `pty-parsed {session_id, parsed}` on `/events`; the progress journal listens there for intents.
//!
//! Lock order: the session's screen lock, then the tracker lock; nothing takes them the other way.

pub mod agent_tool;
pub mod journal;
pub mod probe;
pub mod progress;
pub mod spawn;
pub mod state;
pub mod submit;
pub mod task_tool;
pub mod tasks;
pub mod tools;
pub mod wait;

pub use state::AgentsState;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use proto::session::ParsedEvent;
use serde_json::json;
use tokio::sync::{broadcast, watch};

use crate::agent::adapters::{self, Adapter};
use crate::agent::{AgentEvent, AgentStatus, AgentTracker, Screen};
use crate::events::EventBus;
use crate::limits::{AGENT_TICK_INTERVAL, AGENT_TICK_LINGER, BACKGROUND_PROBE_INTERVAL};
use crate::session::SessionEvent;

/// The engine side of one session. Cheap to clone (one `Arc`).
#[derive(Clone)]
pub struct AgentLink {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AgentLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentLink").field("session_id", &self.inner.session_id).finish_non_exhaustive()
    }
}

struct Inner {
    session_id: String,
    /// The process whose descendants are probed for background work: the session's child, when
    /// the child is the agent itself.
    probe_root: Option<u32>,
    events: Arc<EventBus>,
    live: broadcast::Sender<Arc<SessionEvent>>,
    /// A std mutex held for microseconds, never across `.await`.
    tracker: Mutex<AgentTracker>,
    /// Held by every writer for the duration of one write, and by submit across its framed write.
    writer: tokio::sync::Mutex<()>,
    /// Bumped after every published batch of events; waiters re-check on a change.
    version: watch::Sender<u64>,
    ticking: AtomicBool,
    /// The raw output cursor the engine has read up to.
    fed: watch::Sender<u64>,
    last_activity: Mutex<Instant>,
}

/// The adapter for a new session: the requested `agent_type`, else the program's file name.
pub fn adapter_for(agent_type: Option<&str>, program: &str) -> Option<&'static Adapter> {
    agent_type.and_then(adapters::by_id).or_else(|| adapters::by_binary(program))
}

impl AgentLink {
    pub fn new(
        session_id: &str,
        adapter: Option<&'static Adapter>,
        probe_root: Option<u32>,
        events: Arc<EventBus>,
        live: broadcast::Sender<Arc<SessionEvent>>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                session_id: session_id.to_owned(),
                probe_root: probe_root.filter(|_| adapter.is_some()),
                events,
                live,
                tracker: Mutex::new(AgentTracker::new(adapter)),
                writer: tokio::sync::Mutex::new(()),
                version: watch::channel(0).0,
                ticking: AtomicBool::new(false),
                fed: watch::channel(0).0,
                last_activity: Mutex::new(Instant::now()),
            }),
        }
    }

    fn tracker(&self) -> MutexGuard<'_, AgentTracker> {
        self.inner.tracker.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn adapter(&self) -> Option<&'static Adapter> {
        self.tracker().adapter()
    }

    /// One batch of output and the screen after it (called by the screen follower, under the
    /// screen lock); `cursor` is the raw output cursor just past `bytes`.
    pub fn on_output(&self, bytes: &[u8], cursor: u64, screen: &Screen<'_>) {
        let now = Instant::now();
        let events = {
            let mut tracker = self.tracker();
            let mut events = tracker.on_output(bytes, now);
            // Always advance `fed` with the tracker lock held: a submit reads both together.
            events.extend(tracker.on_screen(screen, now));
            self.inner.fed.send_replace(cursor);
            events
        };
        self.publish(events);
        self.activity(now);
    }

    /// Bytes a writer queued for the child (called under [`Self::writer`]).
    pub fn on_input(&self, bytes: &[u8]) {
        let now = Instant::now();
        let events = self.tracker().on_input(bytes, now);
        self.publish(events);
        self.activity(now);
    }

    /// The writer lock every write holds.
    pub async fn writer(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.inner.writer.lock().await
    }

    /// The engine's view now (silence timers advanced to this instant first).
    pub fn status(&self) -> AgentStatus {
        let (events, status) = {
            let mut tracker = self.tracker();
            let events = tracker.tick(Instant::now());
            (events, tracker.snapshot())
        };
        self.publish(events);
        status
    }

    /// Runs `f` on the tracker (after a tick), publishing what the tick changed.
    pub fn with_tracker<T>(&self, f: impl FnOnce(&AgentTracker) -> T) -> T {
        let (events, value) = {
            let mut tracker = self.tracker();
            let events = tracker.tick(Instant::now());
            let value = f(&tracker);
            (events, value)
        };
        self.publish(events);
        value
    }

    /// The raw output cursor the engine has read up to.
    pub fn fed(&self) -> u64 {
        *self.inner.fed.borrow()
    }

    /// Changes whenever the engine read more output.
    pub fn subscribe_fed(&self) -> watch::Receiver<u64> {
        self.inner.fed.subscribe()
    }

    /// Changes whenever the engine published something.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    fn publish(&self, events: Vec<AgentEvent>) {
        if events.is_empty() {
            return;
        }
        for event in events {
            let value = serde_json::to_value(&event).unwrap_or_default();
            self.inner
                .events
                .publish(proto::events::PTY_PARSED, &json!({"session_id": self.inner.session_id, "parsed": value}));
            let _ = self.inner.live.send(Arc::new(SessionEvent::Parsed(ParsedEvent::Agent(value))));
        }
        self.inner.version.send_modify(|v| *v += 1);
    }

    fn activity(&self, now: Instant) {
        *self.inner.last_activity.lock().unwrap_or_else(|e| e.into_inner()) = now;
        if !self.inner.ticking.swap(true, Ordering::AcqRel)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(ticker(self.clone()));
        }
    }

    fn idle_for(&self, now: Instant) -> std::time::Duration {
        now.saturating_duration_since(*self.inner.last_activity.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Ticks while the session is active; stops itself once nothing is pending.
async fn ticker(link: AgentLink) {
    let mut last_probe: Option<Instant> = None;
    loop {
        tokio::time::sleep(AGENT_TICK_INTERVAL).await;
        let now = Instant::now();
        let events = link.tracker().tick(now);
        link.publish(events);
        let mut background = false;
        if let Some(root) = link.inner.probe_root
            && last_probe.is_none_or(|at| now.saturating_duration_since(at) >= BACKGROUND_PROBE_INTERVAL)
        {
            last_probe = Some(now);
            background = tokio::task::spawn_blocking(move || probe::has_background_work(root)).await.unwrap_or(false);
            let events = link.tracker().set_background_work(background, Instant::now());
            link.publish(events);
        }
        if background || link.idle_for(Instant::now()) < AGENT_TICK_LINGER {
            continue;
        }
        link.inner.ticking.store(false, Ordering::Release);
        // Activity that raced the stop restarts the loop instead of a second ticker.
        if link.idle_for(Instant::now()) >= AGENT_TICK_LINGER || link.inner.ticking.swap(true, Ordering::AcqRel) {
            return;
        }
    }
}
