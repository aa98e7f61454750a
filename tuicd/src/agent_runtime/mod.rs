//! Agents in sessions: the [`crate::agent`] engine attached to every PTY session from outside,
//! and the domain services the MCP tools call (submit, spawn, task handles, the progress journal).
//!
//! # Wiring (one [`AgentLink`] per session, the session's attachment)
//! - [`attach_factory`] builds each session's link; the composition root installs it on the
//!   session registry, and [`AgentLink::of`] reaches it back from a `Session`.
//! - The screen follower calls [`AgentLink::on_output`] under the screen lock with each batch it
//!   applied to the screen model, and the raw cursor past it ([`AgentLink::fed`]).
//! - Every writer goes through `Session::write`, which holds the session's writer lock and feeds
//!   [`AgentLink::on_input`] with exactly the bytes it queues. `submit` holds the same lock across
//!   its whole framed write.
//! - A ticker task runs only while the session had output or input in the last
//!   [`AGENT_TICK_LINGER`] (or background work is alive): it calls `tick` every
//!   [`AGENT_TICK_INTERVAL`] and probes descendants at most every [`BACKGROUND_PROBE_INTERVAL`].
//!   An idle session has no task and no timer; reads ([`AgentLink::status`]) tick on demand.
//! - Every engine event goes out as the WebSocket `{"type":"parsed","event":...}` frame and as
//!   `pty-parsed {session_id, parsed}` on `/events`; the progress journal listens there for intents.
//!
//! - Every change of (agent_state, ready) leaves as one [`LifecycleEdge`] on the daemon's
//!   [`EdgeSink`], sent while the tracker lock is held (so in order); the session's retirement adds
//!   its end, and a deferred prompt the watchdog gave up on adds [`EdgeKind::PromptUndelivered`].
//!   The layer that installs the sink (peer messaging, which sits above this one) drives
//!   injection, wake notices and child lifecycle mail from them.
//!
//! Lock order: the session's screen lock, then the tracker lock, then `last_edge`, then `ended`;
//! nothing takes them the other way. `publish` holds `ended` while it sends (then the event
//! bus's and the broadcasts' own locks).

mod attach;
pub(crate) mod channels;
pub(crate) mod journal;
pub(crate) mod loops;
pub(crate) mod outcomes;
pub(crate) mod probe;
pub(crate) mod progress;
pub(crate) mod spawn;
pub(crate) mod state;
pub(crate) mod submit;
pub(crate) mod tasks;
pub(crate) mod wait;
pub(crate) mod waiting;

pub(crate) use attach::attach_factory;
pub(crate) use state::AgentsState;

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use proto::session::ParsedEvent;
use serde_json::json;
use tokio::sync::watch;

use crate::agent::adapters::{self, Adapter};
use crate::agent::{AgentEvent, AgentState, AgentStatus, AgentTracker, Readiness, Screen};
use crate::events::EventBus;
use crate::limits::{AGENT_TICK_INTERVAL, AGENT_TICK_LINGER, BACKGROUND_PROBE_INTERVAL};
use crate::lock::Recover;
use crate::session::{Announcer, SessionEvent};

/// A copy of a screen: rows, cursor (row, col), alternate screen.
type ShownScreen = (Vec<String>, (u16, u16), bool);

/// What the messaging layer reacts to: a session's agent lifecycle or readiness changed, the
/// session ended, or its deferred prompt was not delivered. Sent in order, at most once per
/// change, by the one thread holding the tracker lock (or by the session's retirement for the end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LifecycleEdge {
    pub session_id: String,
    pub tuic_session: String,
    pub kind: EdgeKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EdgeKind {
    /// The agent's canonical state, whether it is confirmed idle (the engine's one definition,
    /// [`crate::agent::Readiness`]), and whether a typed turn may go in now (confirmed idle with an
    /// empty composer): the same test `session action=submit` applies.
    Agent {
        state: Option<AgentState>,
        confirmed_idle: bool,
        ready: bool,
    },
    Exited {
        exit_code: Option<i32>,
    },
    /// The spawn's deferred prompt never went in (the watchdog passed, or the session ended).
    PromptUndelivered,
}

/// Where edges go: one unbounded channel per daemon (edges are rare: one per state change).
pub(crate) type EdgeSink = tokio::sync::mpsc::UnboundedSender<LifecycleEdge>;

/// The tracker lock: on release, reports an [`EdgeKind::Agent`] edge if the lifecycle or
/// readiness moved, while the lock is still held so edges leave in the order they happened.
struct TrackerGuard<'a> {
    tracker: MutexGuard<'a, AgentTracker>,
    inner: &'a Inner,
}

impl Deref for TrackerGuard<'_> {
    type Target = AgentTracker;
    fn deref(&self) -> &AgentTracker {
        &self.tracker
    }
}

impl DerefMut for TrackerGuard<'_> {
    fn deref_mut(&mut self) -> &mut AgentTracker {
        &mut self.tracker
    }
}

impl Drop for TrackerGuard<'_> {
    fn drop(&mut self) {
        let Some(sink) = &self.inner.edges else { return };
        let state = self.tracker.snapshot_state();
        let confirmed_idle = state.is_some() && self.tracker.readiness() == Readiness::ConfirmedIdle;
        let ready = state.is_some() && self.tracker.check_submit().is_ok();
        let mut last = self.inner.last_edge.locked();
        // After the session's end only its `Exited` edge (sent from the `on_retired` hook) may follow.
        if *last == (state, confirmed_idle, ready) || *self.inner.ended.locked() {
            return;
        }
        *last = (state, confirmed_idle, ready);
        let _ = sink.send(LifecycleEdge {
            session_id: self.inner.session_id.clone(),
            tuic_session: self.inner.tuic_session.clone(),
            kind: EdgeKind::Agent { state, confirmed_idle, ready },
        });
    }
}

/// The engine side of one session. Cheap to clone (one `Arc`).
#[derive(Clone)]
pub(crate) struct AgentLink {
    inner: Arc<Inner>,
    /// The session's tap on the plugins' output watchers (matched after the engine's read).
    tap: Option<Arc<crate::plugins::SessionTap>>,
}

impl std::fmt::Debug for AgentLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentLink").field("session_id", &self.inner.session_id).finish_non_exhaustive()
    }
}

struct Inner {
    session_id: String,
    tuic_session: String,
    edges: Option<EdgeSink>,
    /// The last (state, confirmed_idle, ready) reported on `edges`; written under the tracker lock.
    last_edge: Mutex<(Option<AgentState>, bool, bool)>,
    /// The process whose descendants are probed for background work: the session's child when
    /// it is the agent itself, or the agent a shell session runs in its foreground.
    probe_root: Mutex<Option<u32>>,
    /// A shell session's child (its foreground when no agent runs).
    shell_pid: Option<u32>,
    /// A shell session's PTY master, to see which process is in the foreground (an agent started
    /// from the shell switches the adapter). Dropped when the session ends.
    pty: Mutex<Option<std::os::fd::OwnedFd>>,
    /// A shell session's latest screen (rows, cursor, alternate), re-read when the adapter changes.
    last_screen: Mutex<Option<ShownScreen>>,
    /// With no known agent in the foreground: the program waiting on the terminal after a
    /// question, as the latest probe saw it (see [`waiting`]); cleared by input.
    waiting: Mutex<Option<waiting::Waiting>>,
    events: Arc<EventBus>,
    announcer: Announcer,
    /// A std mutex held for microseconds, never across `.await`.
    tracker: Mutex<AgentTracker>,
    /// Bumped after every published batch of events; waiters re-check on a change.
    version: watch::Sender<u64>,
    ticking: AtomicBool,
    /// The raw output cursor the engine has read up to.
    fed: watch::Sender<u64>,
    last_activity: Mutex<Instant>,
    /// Set once by [`Attachment::on_end`], before the session announces its end. Publishing holds
    /// this lock, so every engine event is out before the end and none follows it: a tick after
    /// the exit (a status read, the ticker) would otherwise report `idle` after `session-closed`.
    ended: Mutex<bool>,
}

/// The adapter for a new session: the requested `agent_type`, else the program's file name.
pub(crate) fn adapter_for(agent_type: Option<&str>, program: &str) -> Option<&'static Adapter> {
    agent_type.and_then(adapters::by_id).or_else(|| adapters::by_binary(program))
}

impl AgentLink {
    /// `child` is the session's process; `pty` a duplicate of its PTY master, used (for a shell
    /// session, `adapter` None) to follow an agent started from the shell.
    pub(crate) fn new(
        ids: (&str, &str),
        adapter: Option<&'static Adapter>,
        child: Option<u32>,
        pty: Option<std::os::fd::OwnedFd>,
        events: Arc<EventBus>,
        edges: Option<EdgeSink>,
        announcer: Announcer,
    ) -> Self {
        let (session_id, tuic_session) = ids;
        Self {
            inner: Arc::new(Inner {
                session_id: session_id.to_owned(),
                tuic_session: tuic_session.to_owned(),
                edges,
                last_edge: Mutex::new((None, false, false)),
                probe_root: Mutex::new(child.filter(|_| adapter.is_some())),
                shell_pid: child.filter(|_| adapter.is_none()),
                pty: Mutex::new(pty.filter(|_| adapter.is_none())),
                last_screen: Mutex::new(None),
                waiting: Mutex::new(None),
                events,
                announcer,
                tracker: Mutex::new(AgentTracker::new(adapter)),
                version: watch::channel(0).0,
                ticking: AtomicBool::new(false),
                fed: watch::channel(0).0,
                last_activity: Mutex::new(Instant::now()),
                ended: Mutex::new(false),
            }),
            tap: None,
        }
    }

    /// The link with its session's tap on the output watchers.
    pub(crate) fn with_tap(mut self, tap: crate::plugins::SessionTap) -> Self {
        self.tap = Some(Arc::new(tap));
        self
    }

    fn tracker(&self) -> TrackerGuard<'_> {
        TrackerGuard { tracker: self.inner.tracker.locked(), inner: &self.inner }
    }

    pub(crate) fn adapter(&self) -> Option<&'static Adapter> {
        self.tracker().adapter()
    }

    /// One batch of output and the screen after it (called by the screen follower, under the
    /// screen lock); `cursor` is the raw output cursor just past `bytes`.
    pub(crate) fn on_output(&self, bytes: &[u8], cursor: u64, screen: &Screen<'_>) {
        let now = Instant::now();
        let events = {
            let mut tracker = self.tracker();
            let mut events = tracker.on_output(bytes, now);
            // Always advance `fed` with the tracker lock held: a submit reads both together.
            events.extend(tracker.on_screen(screen, now));
            if self.inner.shell_pid.is_some() {
                let copy = (screen.rows.to_vec(), screen.cursor, screen.alternate);
                *self.inner.last_screen.locked() = Some(copy);
            }
            self.inner.fed.send_replace(cursor);
            events
        };
        self.publish(events);
        self.activity(now);
    }

    /// Bytes a writer queued for the child (called under the session's writer lock).
    pub(crate) fn on_input(&self, bytes: &[u8]) {
        let now = Instant::now();
        // Typing answers (or starts answering) the question; the next probe looks again.
        self.inner.waiting.locked().take();
        let events = self.tracker().on_input(bytes, now);
        self.publish(events);
        self.activity(now);
    }

    /// The agent was spawned with an initial prompt (see [`AgentTracker::expect_first_turn`]).
    pub(crate) fn expect_first_turn(&self, typed: bool) {
        self.tracker().expect_first_turn(typed);
    }

    /// Tells the messaging layer that this session's deferred prompt never went in.
    pub(crate) fn report_prompt_undelivered(&self) {
        self.tracker().give_up_first_turn();
        self.send_edge(EdgeKind::PromptUndelivered);
    }

    fn send_edge(&self, kind: EdgeKind) {
        if let Some(sink) = &self.inner.edges {
            let _ = sink.send(LifecycleEdge {
                session_id: self.inner.session_id.clone(),
                tuic_session: self.inner.tuic_session.clone(),
                kind,
            });
        }
    }

    /// The engine's view now (silence timers advanced to this instant first). With no known agent
    /// in the foreground, a program waiting on the terminal after a question is reported as one.
    pub(crate) fn status(&self) -> AgentStatus {
        let (events, mut status) = {
            let mut tracker = self.tracker();
            let events = tracker.tick(Instant::now());
            (events, tracker.snapshot())
        };
        self.publish(events);
        if status.agent_type.is_none()
            && !status.awaiting_input
            && let Some(waiting) = self.inner.waiting.locked().clone()
        {
            status.awaiting_input = true;
            status.question_confident = true;
            status.choice_prompt = waiting.choice();
            status.question_text = Some(waiting.question);
        }
        status
    }

    /// With no known agent in the foreground: whether the terminal's foreground program is waiting
    /// on it after a question (`/proc` and two ioctls: run on the blocking pool). A new question is
    /// published as `question` (and `choice-prompt` with its options).
    fn probe_waiting(&self) {
        let seen = {
            let pty = self.inner.pty.locked();
            pty.as_ref().and_then(probe::terminal_read)
        };
        let seen = seen.filter(|_| self.adapter().is_none()).and_then(|line| {
            let shown = self.inner.last_screen.locked();
            let (rows, cursor, _) = shown.as_ref()?;
            waiting::question_on(rows, *cursor, line)
        });
        let fresh = {
            let mut waiting = self.inner.waiting.locked();
            let fresh = seen.is_some() && *waiting != seen;
            (*waiting).clone_from(&seen);
            fresh
        };
        if let Some(waiting) = seen.filter(|_| fresh) {
            let mut events = vec![AgentEvent::Question { prompt_text: waiting.question.clone(), confident: true }];
            events.extend(waiting.choice().map(AgentEvent::ChoicePrompt));
            self.publish(events);
        }
    }

    /// Runs `f` on the tracker (after a tick), publishing what the tick changed.
    pub(crate) fn with_tracker<T>(&self, f: impl FnOnce(&AgentTracker) -> T) -> T {
        let (events, value) = {
            let mut tracker = self.tracker();
            let events = tracker.tick(Instant::now());
            let value = f(&tracker);
            (events, value)
        };
        self.publish(events);
        value
    }

    /// The latest submitted line was never taken by the agent (see [`crate::agent::AgentTracker::abandon_turn`]).
    pub(crate) fn abandon_turn(&self) {
        let events = self.tracker().abandon_turn(Instant::now());
        self.publish(events);
    }

    /// The raw output cursor the engine has read up to.
    pub(crate) fn fed(&self) -> u64 {
        *self.inner.fed.borrow()
    }

    /// Changes whenever the engine read more output.
    pub(crate) fn subscribe_fed(&self) -> watch::Receiver<u64> {
        self.inner.fed.subscribe()
    }

    /// Changes whenever the engine published something.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    fn publish(&self, events: Vec<AgentEvent>) {
        let ended = self.inner.ended.locked();
        if events.is_empty() || *ended {
            return;
        }
        for event in events {
            let value = serde_json::to_value(&event).unwrap_or_default();
            self.inner
                .events
                .publish(proto::events::PTY_PARSED, &json!({"session_id": self.inner.session_id, "parsed": value}));
            self.inner.announcer.announce(SessionEvent::Parsed(ParsedEvent::Agent(value)));
        }
        self.inner.version.send_modify(|v| *v += 1);
    }

    fn activity(&self, now: Instant) {
        *self.inner.last_activity.locked() = now;
        if !self.inner.ticking.swap(true, Ordering::AcqRel)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(ticker(self.clone()));
        }
    }

    /// For a shell session: the agent now in the terminal's foreground, if any, becomes the
    /// tracker's adapter (and the background probe's root); the shell again clears it.
    fn follow_foreground(&self, now: Instant) {
        let foreground = {
            let pty = self.inner.pty.locked();
            let Some(fd) = pty.as_ref() else { return };
            probe::foreground(fd)
        };
        let Some(pid) = foreground else { return };
        let adapter = if Some(pid) == self.inner.shell_pid { None } else { probe::agent_of(pid) };
        *self.inner.probe_root.locked() = adapter.map(|_| pid);
        let events = {
            let mut tracker = self.tracker();
            let changed = tracker.adapter().map(|a| a.id) != adapter.map(|a| a.id);
            let mut events = tracker.set_adapter(adapter, now);
            // The new adapter reads the screen already shown (the agent may be quiet now).
            let shown = self.inner.last_screen.locked().clone();
            if let (true, Some((rows, cursor, alternate))) = (changed, shown) {
                events.extend(tracker.on_screen(&Screen { rows: &rows, cursor, alternate }, now));
            }
            events
        };
        self.publish(events);
    }

    fn idle_for(&self, now: Instant) -> std::time::Duration {
        now.saturating_duration_since(*self.inner.last_activity.locked())
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
        if last_probe.is_none_or(|at| now.saturating_duration_since(at) >= BACKGROUND_PROBE_INTERVAL) {
            last_probe = Some(now);
            let probing = link.clone();
            background = tokio::task::spawn_blocking(move || {
                probing.follow_foreground(Instant::now());
                probing.probe_waiting();
                let root = *probing.inner.probe_root.locked();
                let adapter = probing.adapter();
                root.is_some_and(|root| probe::has_background_work(root, adapter))
            })
            .await
            .unwrap_or(false);
            if link.adapter().is_some() {
                let events = link.tracker().set_background_work(background, Instant::now());
                link.publish(events);
            }
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
