//! [`Session`]: the one owner of a PTY session. Built only by [`Session::start`]; torn down only by
//! [`Session::finish`] (called by the supervisor task when the child is gone and output drained).

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime};

use bytes::Bytes;
use proto::session::ParsedEvent;
use tokio::sync::{Notify, broadcast, mpsc, oneshot, watch};

use super::capture::CaptureFile;
use super::child::ChildProcess;
use super::hooks::{AttachContext, AttachFactory, Attachment};
use super::reader::ReaderControl;
use super::ring::RawRing;
use super::screen::ScreenModel;
use super::spawn::{SpawnPlan, check_size};
use super::writer::PtyWriter;
use super::{Counters, SessionError, tasks};
use crate::limits::{
    PTY_INPUT_QUEUE, RING_SHARE_FROM, SESSION_BROADCAST_CAPACITY, SESSION_LOG_LINES, SESSION_RING_BYTES,
};
use crate::lock::Recover;

/// Runs once when a session has finished (the registry moves it to the tombstones).
pub(super) type OnClose = Box<dyn FnOnce(&Arc<Session>) + Send>;

/// What a session broadcasts to its subscribers, in order. `Output` carries the cursor of its first
/// byte, so a subscriber can line live chunks up with a catch-up read from the ring.
#[derive(Debug, Clone)]
pub(crate) enum SessionEvent {
    Output {
        start: u64,
        data: Bytes,
    },
    Parsed(ParsedEvent),
    /// The session's size changed (its size rule chose it; see [`super::size`]).
    Resize {
        rows: u16,
        cols: u16,
    },
    /// The child exited and every byte it wrote has been broadcast.
    /// (The exit code is in [`Session::exit_info`].)
    Exit,
    /// Always the last event.
    Closed,
}

/// Sends a non-output event on both broadcasts: `live` (every event, in order) and `notices`
/// (every event but `Output`: a stream client listens there for its other frames, so it is not
/// woken per chunk while the reader thread writes its output; see [`super::sink`]).
#[derive(Debug, Clone)]
pub(crate) struct Announcer {
    live: broadcast::Sender<Arc<SessionEvent>>,
    notices: broadcast::Sender<Arc<SessionEvent>>,
}

impl Announcer {
    pub(crate) fn announce(&self, event: SessionEvent) {
        let event = Arc::new(event);
        // No subscribers is fine.
        let _ = self.live.send(event.clone());
        let _ = self.notices.send(event);
    }

    pub(super) fn subscribe_notices(&self) -> broadcast::Receiver<Arc<SessionEvent>> {
        self.notices.subscribe()
    }
}

/// How and why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExitInfo {
    /// The exit code, or 128 + signal; `None` when the status could not be read.
    pub exit_code: Option<i32>,
    pub reason: &'static str,
}

/// Identity fields fixed at creation.
#[derive(Clone)]
pub(super) struct Identity {
    pub id: String,
    pub tuic_session: String,
    pub alias: String,
    pub display_name: Option<String>,
    pub agent_type: Option<String>,
    /// Builds what attaches to the session from outside (see [`super::hooks`]), when installed.
    pub attach: Option<AttachFactory>,
}

pub(crate) struct Session {
    pub id: String,
    pub tuic_session: String,
    pub alias: String,
    pub display_name: Option<String>,
    pub agent_type: Option<String>,
    pub cwd: PathBuf,
    /// The git work tree the session started in (its top level, canonical), if any.
    pub repo: Option<PathBuf>,
    pub shell: String,
    pub pid: Option<u32>,
    pub created: SystemTime,
    /// A std mutex: held only to append a chunk or to copy a read out, never across `.await`. The
    /// reader broadcasts under it so that live order equals cursor order for every subscriber.
    pub(super) out: Mutex<OutputState>,
    /// The screen model, fed from the ring by its own task so that parsing never slows the reader.
    /// Locked separately from `out`, and never while holding it.
    pub(super) term: Mutex<TermState>,
    /// Wakes the screen task when the ring has new bytes (a permit is stored if it is busy).
    pub(super) screen_wake: Notify,
    /// Tells a resting screen follower to catch up now: the output has ended.
    pub(super) screen_hurry: Notify,
    /// The ring cursor up to which the screen model has processed.
    pub(super) screen_cursor: watch::Sender<u64>,
    pub(super) live: broadcast::Sender<Arc<SessionEvent>>,
    /// Sends `Parsed`, `Exit` and `Closed` on `live` and on the `notices` broadcast.
    pub(super) announcer: Announcer,
    input: mpsc::Sender<Bytes>,
    pub(super) paused: watch::Sender<bool>,
    /// Wakes or stops the reader thread (see [`super::reader`]).
    pub(super) reader: ReaderControl,
    /// Flips to true once, in `finish`.
    pub(super) done: watch::Sender<bool>,
    /// Flips to true once the session is asked to close (or has finished): the writer stops at
    /// once and drops the input still queued, even mid-write to a child that never reads.
    pub(super) closing: watch::Sender<bool>,
    kill: Mutex<Option<oneshot::Sender<&'static str>>>,
    /// A duplicate of the PTY master, used only for `TIOCSWINSZ` so a resize never waits on a
    /// writer blocked by a child that stopped reading.
    /// Dropped in `finish`, so a tombstone does not keep the PTY open: processes the child left
    /// behind see the hang-up.
    winsize_fd: Mutex<Option<OwnedFd>>,
    pub(super) capture: Mutex<Option<CaptureFile>>,
    pub(super) counters: Arc<Counters>,
    /// Held by every writer for the duration of one write, and by a framed write (submit) across
    /// all of its parts, so writes to the PTY never interleave.
    writer: tokio::sync::Mutex<()>,
    /// What the daemon attached to this session (see [`super::hooks`]).
    attachment: Option<Arc<dyn Attachment>>,
    /// The clients whose sizes the size rule picks from (see [`super::size`]); taken before `out`
    /// and `term`.
    pub(super) sizes: Mutex<super::size::Sizes>,
    /// The child, by pidfd (see [`super::child`]).
    pub(super) child: ChildProcess,
    /// The screen model does not answer the terminal queries in output before this cursor: a
    /// previous daemon answered them (see [`Parts::answered_until`]).
    pub(super) answered_until: u64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.id).field("alias", &self.alias).finish_non_exhaustive()
    }
}

pub(super) struct OutputState {
    pub ring: RawRing,
    /// When the ring's bytes were written, for recordings.
    pub timeline: super::timeline::Timeline,
    /// The session's start, which the timeline counts from.
    pub started: Instant,
    pub last_output: Option<Instant>,
    pub exit: Option<ExitInfo>,
    /// Consumers the reader hands each chunk to itself, under this lock (see [`super::sink`]).
    pub sinks: Vec<Arc<dyn super::sink::OutputSink>>,
}

pub(super) struct TermState {
    pub screen: ScreenModel,
    /// Bytes the screen model never saw because it fell further behind than the ring reaches
    /// (only under a flood faster than the parser); the raw ring and stream are unaffected.
    pub skipped: u64,
}

/// What a session is assembled from: a PTY master with its child, fresh from [`Session::start`]
/// or handed over by a previous daemon ([`Session::adopt`]).
pub(crate) struct Parts {
    /// The PTY master, non-blocking.
    pub master: OwnedFd,
    pub child: ChildProcess,
    pub rows: u16,
    pub cols: u16,
    pub window_size: Option<proto::session::WindowSize>,
    pub cwd: PathBuf,
    pub shell: String,
    pub created: SystemTime,
    /// Output the previous daemon read, with the cursor of its first byte: the ring continues
    /// from it, so every cursor a client holds stays valid. Empty for a fresh session.
    pub history: (u64, Vec<u8>),
    /// Bytes after the previous daemon's last read: the screen model replays the history without
    /// answering the terminal queries in it a second time.
    pub answered_until: u64,
}

impl Session {
    /// Starts the planned child on a fresh PTY (see [`Session::assemble`]).
    pub(super) fn start(
        plan: &SpawnPlan,
        identity: Identity,
        capture: Option<CaptureFile>,
        counters: Arc<Counters>,
        on_close: OnClose,
    ) -> Result<Arc<Session>, SessionError> {
        let (master, child) = super::spawn::start(plan, &identity.tuic_session)?;
        let parts = Parts {
            master,
            child,
            rows: plan.rows,
            cols: plan.cols,
            window_size: plan.window_size,
            cwd: plan.cwd.clone(),
            shell: plan.shell.clone(),
            created: SystemTime::now(),
            history: (0, Vec::new()),
            answered_until: 0,
        };
        Self::assemble(parts, identity, capture, counters, on_close)
    }

    /// A session on a PTY and child that a previous daemon handed over (see [`Parts`]).
    pub(super) fn adopt(
        parts: Parts,
        identity: Identity,
        counters: Arc<Counters>,
        on_close: OnClose,
    ) -> Result<Arc<Session>, SessionError> {
        Self::assemble(parts, identity, None, counters, on_close)
    }

    /// The one constructor: the session around its PTY master and child, then the reader thread
    /// and the writer, screen and supervisor tasks. `on_close` runs once, after
    /// [`Session::finish`]. On failure the child is killed.
    fn assemble(
        parts: Parts,
        identity: Identity,
        capture: Option<CaptureFile>,
        counters: Arc<Counters>,
        on_close: OnClose,
    ) -> Result<Arc<Session>, SessionError> {
        let Parts { master, child, rows, cols, window_size, cwd, shell, created, history, answered_until } = parts;
        let fail = |what: &str, e: std::io::Error| {
            child.signal(rustix::process::Signal::KILL);
            SessionError::Spawn(format!("{what}: {e}"))
        };
        let winsize_fd = master.try_clone().map_err(|e| fail("duplicating the PTY descriptor", e))?;
        // The reader thread reads a duplicate of the master; the writer registers the master for
        // write readiness only (see `writer.rs`).
        let read_fd = master.try_clone().map_err(|e| fail("duplicating the PTY descriptor", e))?;
        let reader = ReaderControl::new().map_err(|e| fail("creating the reader's eventfd", e))?;
        let writer = PtyWriter::new(master).map_err(|e| fail("registering the PTY writer", e))?;
        let (input, input_rx) = mpsc::channel(PTY_INPUT_QUEUE);
        let (kill, kill_rx) = oneshot::channel();
        let live = broadcast::channel(SESSION_BROADCAST_CAPACITY).0;
        let announcer = Announcer { live: live.clone(), notices: broadcast::channel(SESSION_BROADCAST_CAPACITY).0 };
        let attachment = identity.attach.as_ref().map(|attach| {
            attach(AttachContext {
                session_id: &identity.id,
                tuic_session: &identity.tuic_session,
                agent_type: identity.agent_type.as_deref(),
                program: &shell,
                child: Some(child.pid()),
                pty: winsize_fd.try_clone().ok(),
                announcer: announcer.clone(),
            })
        });
        let mut ring = RawRing::new(SESSION_RING_BYTES, RING_SHARE_FROM);
        ring.resume(history.0, &history.1);
        let screen_from = ring.oldest();
        let session = Arc::new(Session {
            id: identity.id,
            tuic_session: identity.tuic_session,
            alias: identity.alias,
            display_name: identity.display_name,
            agent_type: identity.agent_type,
            repo: super::alias::repo_root(&cwd).map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.to_owned())),
            cwd,
            shell,
            pid: Some(child.pid()),
            created,
            out: Mutex::new(OutputState {
                ring,
                timeline: Default::default(),
                started: Instant::now(),
                last_output: None,
                exit: None,
                sinks: Vec::new(),
            }),
            term: Mutex::new(TermState { screen: ScreenModel::new(rows, cols, SESSION_LOG_LINES), skipped: 0 }),
            screen_wake: Notify::new(),
            screen_hurry: Notify::new(),
            screen_cursor: watch::channel(screen_from).0,
            answered_until,
            live,
            announcer,
            input,
            paused: watch::channel(false).0,
            reader,
            done: watch::channel(false).0,
            closing: watch::channel(false).0,
            kill: Mutex::new(Some(kill)),
            winsize_fd: Mutex::new(Some(winsize_fd)),
            capture: Mutex::new(capture),
            counters,
            writer: tokio::sync::Mutex::new(()),
            attachment,
            sizes: Mutex::new(super::size::Sizes::new(window_size)),
            child,
        });
        let reading = match super::reader::spawn(session.clone(), read_fd) {
            Ok(reading) => reading,
            Err(e) => {
                session.child.signal(rustix::process::Signal::KILL);
                return Err(SessionError::Spawn(format!("starting the PTY reader thread: {e}")));
            }
        };
        if screen_from < session.total_written() {
            // The handed-over history is replayed into the screen model.
            session.screen_wake.notify_one();
        }
        tokio::spawn(tasks::follow_screen(session.clone()));
        tokio::spawn(tasks::write_input(session.clone(), writer, input_rx));
        tokio::spawn(tasks::supervise(session.clone(), reading, kill_rx, on_close));
        Ok(session)
    }

    /// Raw bytes the child has written so far (the raw output cursor).
    pub(crate) fn total_written(&self) -> u64 {
        self.lock().ring.total()
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, OutputState> {
        self.out.locked()
    }

    pub(super) fn term(&self) -> MutexGuard<'_, TermState> {
        self.term.locked()
    }

    /// Queues raw bytes for the child's input, in order. Waits only when the input queue is full
    /// (a child that stopped reading); never blocks output.
    pub(crate) async fn write(&self, data: impl Into<Bytes>) -> Result<(), SessionError> {
        let _writer = self.writer().await;
        self.write_held(data.into()).await
    }

    /// Whether every queued input chunk has been taken by the writer.
    pub(super) fn input_drained(&self) -> bool {
        self.input.capacity() == self.input.max_capacity()
    }

    /// The writer lock every write holds; a framed write holds it across all of its parts.
    pub(crate) async fn writer(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.writer.lock().await
    }

    /// [`Session::write`] for a caller already holding [`Session::writer`] (submit, injection).
    /// Shows the attachment exactly the bytes it queues.
    pub(crate) async fn write_held(&self, data: Bytes) -> Result<(), SessionError> {
        self.ensure_running("input")?;
        if let Some(attachment) = &self.attachment {
            attachment.on_input(&data);
        }
        let len = data.len() as u64;
        self.input.send(data).await.map_err(|_| self.exited_error("input"))?;
        self.counters.bytes_written.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    /// What the ring holds as an asciicast v2 recording at the screen's size, with the times the
    /// bytes were written.
    pub(crate) fn recording(&self) -> String {
        let (rows, cols) = self.term().screen.size();
        let started_unix = self.created.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let out = self.lock();
        let read = out.ring.read_from(out.ring.oldest(), usize::MAX);
        let pieces = out.timeline.split(read.start, &read.data);
        super::asciicast::encode(cols, rows, started_unix, pieces.into_iter().map(|(at, bytes)| (at, "o", bytes)))
    }

    /// The terminal's replies to the queries in the output (`queries.rs`): queued as input
    /// without the writer lock (a real terminal's replies interleave with typing too) and without
    /// the attachment's input hook (nobody typed them).
    pub(crate) async fn answer_queries(&self, replies: Bytes) {
        let len = replies.len() as u64;
        if self.input.send(replies).await.is_ok() {
            self.counters.bytes_written.fetch_add(len, Ordering::Relaxed);
        }
    }

    /// An explicit resize naming no client (MCP `resize`): the session's manual size, which its
    /// size rule may take (see [`super::size`]).
    pub(crate) fn resize(&self, rows: u16, cols: u16) -> Result<(), SessionError> {
        self.resize_for(None, rows, cols, None)
    }

    /// The size the size rule chose: resizes the screen model first, then the PTY (which signals
    /// SIGWINCH), so output that answers the signal is parsed at the new size, then tells the
    /// streams. The same size is a no-op.
    pub(super) fn set_size(&self, rows: u16, cols: u16) -> Result<(), SessionError> {
        check_size("rows", rows)?;
        check_size("cols", cols)?;
        let exit = self.lock().exit;
        if let Some(exit) = exit {
            return Err(SessionError::Exited {
                session_id: self.id.clone(),
                exit_code: exit.exit_code,
                action: "resizes",
            });
        }
        let mut term = self.term();
        if term.screen.size() == (rows, cols) {
            return Ok(());
        }
        term.screen.resize(rows, cols);
        drop(term);
        let size = rustix::termios::Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
        {
            let fd = self.winsize_fd.locked();
            let Some(fd) = fd.as_ref() else { return Ok(()) };
            rustix::termios::tcsetwinsize(fd, size)
                .map_err(|e| SessionError::Spawn(format!("resizing the PTY: {e}")))?;
        }
        self.announcer.announce(SessionEvent::Resize { rows, cols });
        Ok(())
    }

    /// A duplicate of the PTY master, while the session runs (see [`super::handover`]).
    pub(super) fn master_dup(&self) -> std::io::Result<OwnedFd> {
        match self.winsize_fd.locked().as_ref() {
            Some(fd) => fd.try_clone(),
            None => Err(std::io::Error::other("the session has finished")),
        }
    }

    /// Stops reading the PTY (the child blocks once the kernel buffer fills); idempotent.
    pub(crate) fn pause(&self) -> Result<(), SessionError> {
        self.ensure_running("pause")?;
        if !self.paused.send_replace(true) {
            self.counters.pauses_triggered.fetch_add(1, Ordering::Relaxed);
        }
        self.reader.wake();
        Ok(())
    }

    pub(crate) fn resume(&self) -> Result<(), SessionError> {
        self.ensure_running("resume")?;
        self.paused.send_replace(false);
        self.reader.wake();
        Ok(())
    }

    pub(crate) fn is_paused(&self) -> bool {
        *self.paused.borrow()
    }

    /// Ends the child (SIGHUP to its process group, then SIGKILL to the child). The session closes
    /// with `reason` once the supervisor has drained its output. Idempotent: closing a session
    /// that has already exited changes nothing and is not an error (REST `DELETE` and MCP `close`
    /// both answer success).
    pub(crate) fn close(&self, reason: &'static str) {
        self.closing.send_replace(true);
        let kill = self.kill.locked().take();
        if let Some(kill) = kill {
            let _ = kill.send(reason);
        }
    }

    /// SIGKILL to the child's whole process group (the child leads it): shutdown's last resort
    /// for a session that did not close in time.
    pub(super) fn kill_group(&self) {
        if let Some(pid) = self.pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }

    /// Subscribes to output and lifecycle events. Pair with a ring read for catch-up: see
    /// [`Session::watch_from`].
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<SessionEvent>> {
        self.live.subscribe()
    }

    /// Resolves once the session is finished (exited and drained).
    pub(crate) async fn finished(&self) {
        let mut done = self.done.subscribe();
        let _ = done.wait_for(|d| *d).await;
    }

    pub(crate) fn exit_info(&self) -> Option<ExitInfo> {
        self.lock().exit
    }

    /// The attachment, as the concrete type the layer that installed it knows.
    pub(crate) fn attachment<T: Attachment>(&self) -> Option<&T> {
        self.attachment.as_deref()?.downcast_ref()
    }

    /// The attachment as the session core sees it (its hooks).
    pub(super) fn hooks(&self) -> Option<&dyn Attachment> {
        self.attachment.as_deref()
    }

    /// The one teardown: records the exit, broadcasts `Exit` then `Closed` (after every output
    /// chunk, which the reader broadcast under the same lock), and stops the writer.
    pub(super) fn finish(&self, exit_code: Option<i32>, reason: &'static str) {
        // The attachment goes quiet first, so none of its events follows `Closed` (WebSocket) or
        // `session-closed` (`/events`).
        if let Some(attachment) = &self.attachment {
            attachment.on_end();
        }
        {
            let mut out = self.lock();
            if out.exit.is_some() {
                return;
            }
            out.exit = Some(ExitInfo { exit_code, reason });
            self.announcer.announce(SessionEvent::Exit);
            self.announcer.announce(SessionEvent::Closed);
            out.sinks.clear();
        }
        self.paused.send_replace(false);
        self.reader.wake();
        self.closing.send_replace(true);
        self.done.send_replace(true);
        self.screen_wake.notify_one();
        self.kill.locked().take();
        self.winsize_fd.locked().take();
    }

    pub(super) fn ensure_running(&self, action: &'static str) -> Result<(), SessionError> {
        if self.lock().exit.is_some() { Err(self.exited_error(action)) } else { Ok(()) }
    }

    fn exited_error(&self, action: &'static str) -> SessionError {
        let exit_code = self.lock().exit.and_then(|e| e.exit_code);
        SessionError::Exited { session_id: self.id.clone(), exit_code, action }
    }
}
