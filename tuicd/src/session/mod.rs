//! PTY sessions: one owner struct per session, one registry, one resolver.
//!
//! # The Rust API (used by the REST routes, the WebSocket stream and the MCP `session` tool)
//!
//! ```text
//! SessionRegistry::create(&self, req: &CreateSessionRequest, max_sessions: usize) -> Result<Arc<Session>, SessionError>
//! SessionRegistry::resolve(&self, reference: &str) -> Result<Arc<Session>, SessionError>      // id | tuic_session | alias; live, then tombstones
//! SessionRegistry::resolve_live(&self, reference: &str) -> Result<Arc<Session>, SessionError> // Exited error for a tombstone
//! SessionRegistry::list(&self) -> Vec<Arc<Session>>
//! SessionRegistry::stats(&self, max) -> Stats   ::metrics(&self) -> Metrics   ::process_stats(&self) -> Vec<ProcessStat>
//! SessionRegistry::set_capture(&self, enabled: bool, session: Option<&str>) -> Result<CaptureStatus, SessionError>
//! SessionRegistry::close_all(&self, reason: &'static str, deadline: Duration) // async; shutdown
//!
//! Session::write(&self, data: impl Into<Bytes>) -> Result<(), SessionError>   // async; raw bytes to the child, in order
//! Session::resize(&self, rows: u16, cols: u16) -> Result<(), SessionError>   // the manual size (size.rs)
//! Session::resize_for(&self, client: Option<&str>, rows, cols, default: Option<WindowSize>) -> Result<(), SessionError>
//! Session::attach_size_client(self: &Arc<Self>, name, size, default: WindowSize) -> SizeClient // .report(rows, cols), .active(); drop detaches
//! Session::client_active(&self, client: &str, default: WindowSize)   Session::window_size(&self) -> WindowSize
//! Session::output(&self, OutputQuery { format, since_cursor, limit }) -> OutputResponse // `cursor` = next since_cursor
//! Session::info(&self) -> SessionInfo        // status: shell_state (omitted before first output), exited, exit_code, cursors
//! Session::shell_state(&self) -> Option<ShellState>    Session::shell_family(&self) -> Option<ShellFamily>
//! Session::wait(&self, until: WaitFor::{Idle, Exited}, timeout: Duration) -> WaitOutcome  // async; subscribe-then-recheck
//! Session::close(&self, reason: &'static str)   // SIGHUP to the job, SIGKILL to the child; the session then finishes
//! Session::pause(&self) / resume(&self) -> Result<(), SessionError>
//! Session::read_raw(&self, from: u64, limit: usize) -> RingRead    // raw ring bytes by cursor
//! Session::watch_from(&self, cursor: Option<u64>, limit: usize) -> Watch { read, live, notices, exit } // `notices`: all but Output
//! Session::attach_sink(&self, sink: &Arc<impl OutputSink>, at: u64, arm: impl FnOnce() -> bool) -> bool // the reader offers it each chunk
//! Session::detach_sink(&self, sink: &Arc<impl OutputSink>)
//! Session::finished(&self)                   // async; resolves once exited and drained
//! Session::exit_info(&self) -> Option<ExitInfo>
//! Session::writer(&self) -> MutexGuard<()>    // async; a framed write holds it across its parts, then write_held
//! Session::attachment::<T>(&self) -> Option<&T>   SessionRegistry::set_attach_factory(&self, AttachFactory)
//! ```
//!
//! # Invariants
//! - One constructor ([`Session::start`], reached only through [`SessionRegistry::create`]) and one
//!   teardown (`Session::finish`, run by the supervisor task). After it the session is a tombstone
//!   for [`SESSION_TOMBSTONE_TTL`](crate::limits::SESSION_TOMBSTONE_TTL): output and exit code stay
//!   readable, input is refused.
//! - Every byte the child wrote is in the ring, the screen and the broadcast before `Exit`.
//! - The reader (a dedicated thread per session, `reader.rs`, so draining a flood never waits for a
//!   tokio worker) only appends to the ring and broadcasts; the screen model follows the ring on its
//!   own task (`tasks::follow_screen`), so parsing never slows output. Under sustained output it
//!   holds to a parse-time budget (`budget.rs`, 1/`SCREEN_PARSE_SHARE` of wall time) and skips
//!   ahead when more than `SCREEN_MAX_BACKLOG` behind.
//! - An attached [`OutputSink`] is offered every chunk from the ring's end at attach time, in
//!   cursor order, by the reader thread under the output lock; the sinks are dropped in `finish`.
//! - Cursors only move forward: bytes for raw output, log lines for text/log output.
//! - The writer (`writer.rs`) registers the PTY master with the reactor for write readiness only,
//!   so output never wakes the reactor.
//! - No per-session timer: an idle session costs its reader thread parked in `poll()` (a few
//!   touched stack pages), three parked tasks (writer, supervisor, screen) and its buffers.
//! - This module knows nothing about HTTP, and names no agent or messaging wiring: the daemon
//!   attaches the agent engine from outside through [`hooks`] (each output batch with the screen
//!   after it, each write's bytes, the end before `Exit`, the retirement before `session-closed`).

mod alias;
pub(crate) mod asciicast;
mod budget;
pub mod capture;
pub(crate) mod child;
mod error;
pub(crate) mod handover;
pub(crate) mod hooks;
mod owner;
mod plain_lines;
mod process;
mod queries;
mod read;
mod reader;
mod registry;
pub(crate) mod ring;
mod screen;
mod sink;
mod size;
mod spawn;
mod tasks;
mod timeline;
mod watch;

use std::sync::atomic::AtomicU64;

pub(crate) use error::SessionError;
pub(crate) use hooks::{AttachContext, AttachFactory, Attachment};
pub(crate) use owner::{Announcer, Session, SessionEvent};
pub(crate) use read::{OutputQuery, WaitFor, WaitOutcome};
pub(crate) use registry::SessionRegistry;
pub(crate) use sink::OutputSink;
pub(crate) use size::SizeClient;
pub(crate) use watch::Watch;

/// Daemon-wide session counters behind `/metrics`.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub total_spawned: AtomicU64,
    pub failed_spawns: AtomicU64,
    pub bytes_emitted: AtomicU64,
    pub bytes_written: AtomicU64,
    pub pauses_triggered: AtomicU64,
    pub ws_lag_resyncs: AtomicU64,
}

#[cfg(test)]
mod tests;
mod writer;
