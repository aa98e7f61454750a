//! What the agent inside a terminal is doing: a pure, IO-free engine the session's reader feeds.
//!
//! Nothing here reads a clock, a file (except [`detect::detect_installed`]) or a PTY: the session
//! passes bytes, screens and `Instant`s in, and publishes the returned [`AgentEvent`]s as
//! `parsed` events. Tests drive time by hand; no test sleeps.
//!
//! # Calling contract (one [`AgentTracker`] per session)
//!
//! ```text
//! AgentTracker::new(adapter: Option<&'static Adapter>) -> AgentTracker
//!     adapters::by_binary("claude") / adapters::by_id("codex"); None for a plain shell
//! set_adapter(&mut self, adapter: Option<&'static Adapter>, now: Instant) -> Vec<AgentEvent>
//!     the foreground process became another agent, or the shell again
//! on_output(&mut self, bytes: &[u8], now: Instant) -> Vec<AgentEvent>
//!     every chunk the reader got, in order, before the matching on_screen
//! on_screen(&mut self, screen: &Screen<'_>, now: Instant) -> Vec<AgentEvent>
//!     after the chunk was applied to the vt100 grid: Screen { rows: &[String], cursor, alternate }
//! on_input(&mut self, bytes: &[u8], now: Instant) -> Vec<AgentEvent>
//!     every write by every writer (REST, MCP, WebSocket, injection); a submitted line opens a turn
//! begin_turn(&mut self, now: Instant) -> (u64, Vec<AgentEvent>)
//!     only for input that did not pass through on_input
//! tick(&mut self, now: Instant) -> Vec<AgentEvent>
//!     every limits::AGENT_TICK_INTERVAL, so silence timers resolve
//! set_background_work(&mut self, alive: bool, now: Instant) -> Vec<AgentEvent>
//!     with background::has_background_work(descendants) from the process probe
//! check_submit(&self) -> Result<(), SubmitRefusal>     snapshot(&self) -> AgentStatus
//! readiness(&self) -> Readiness     the one definition of a confirmed idle (status, wait, submit,
//!     typed delivery and lifecycle mail all read it)
//! composer_state(&self) -> ComposerState               turn_epoch(&self) -> u64
//! ```
//!
//! Helpers beside the tracker, equally pure: [`submit`] (the framed byte plan, the acknowledgement
//! timeout clamp, the receipt), [`launch`] (spawn argv, prompt delivery, `pty_description`), [`background::has_background_work`] (descendants minus
//! integration helpers), [`detect::detect_on_path`] (installed agents, shared by REST and MCP),
//! [`InputLineBuffer`] (the composer as writers filled it; the tracker owns one).
//!
//! # Detection, strongest source first
//!
//! 1. Explicit markers in the byte stream ([`markers`]): OSC 7770 `state=busy|idle|awaiting`,
//!    `suggest=`, `intent=` (format in `markers/osc.rs`); OSC 133 A/B/C/D; OSC 9;4 progress; and
//!    the plain-text `suggest: [ A | B ]` and `intent: text (title)` lines (`markers/text.rs`).
//! 2. The adapter's screen reading ([`screen`], rules in [`adapters`]): a confident question
//!    (numbered dialog or single-row confirm prompt), a working indicator, a ready composer that
//!    must stay unchanged for `AGENT_READY_CONFIRM` to count as a confirmed idle.
//! 3. Movement (non-chrome screen rows changing; raw printable bytes before screens arrive),
//!    except the echo of a keystroke.
//! 4. Silence: `SHELL_IDLE` / `AGENT_IDLE` without movement is idle, but not a confirmed one.
//!
//! `agent_state` (agents only): awaiting_input if a confident question is open, else working
//! while `background_work`, else completed if the end-of-task marker arrived in the current turn
//! epoch, else working / idle from `shell_state`, else starting. `completed` comes only from the
//! marker, and a marker still on screen from an earlier turn never completes a new one.
//!
//! # How the daemon drives it (`agent_runtime/`, attached to each session from outside)
//!
//! - Each session's `AgentLink` owns its tracker behind a std `Mutex`, held for microseconds, never
//!   across `.await`. The screen follower applies a batch to vt100, then the link calls
//!   `on_output(batch)` and `on_screen` with the screen after it. Every returned event goes out as
//!   `pty-parsed {session_id, parsed}` and as the WebSocket `{"type":"parsed","event":...}` frame;
//!   `Intent` events also reach the progress journal.
//! - Every writer (REST write, WebSocket, MCP input and submit, injection) feeds `on_input` with
//!   exactly the bytes it wrote, under the session's writer lock.
//! - `tick` runs every `AGENT_TICK_INTERVAL` while the session had output or input lately (and on
//!   each status read), so an idle session has no timer; the process probe calls
//!   `set_background_work`.
//! - Submit: `check_submit`, then [`submit::plan`], write and feed it, wait for output past the
//!   offset taken before Enter, then a [`submit::SubmitReceipt`]. Spawn: [`launch::plan`]; a
//!   deferred prompt goes in with the submit plan once `check_submit` passes.
//!
//! # Adding an agent or an agent version
//!
//! Add or change an [`adapters::Adapter`] row and record a screen under
//! `tuicd/tests/fixtures/agents/<id>/` (format in `tuicd/tests/fixtures/agents/README.md`);
//! the fixture test replays every file through the real tracker.

pub(crate) mod adapters;
pub(crate) mod background;
pub(crate) mod detect;
pub(crate) mod event;
pub(crate) mod input_line;
pub(crate) mod launch;
pub(crate) mod markers;
pub(crate) mod screen;
pub(crate) mod submit;
mod tracker;

#[cfg(test)]
mod fixtures;

pub(crate) use adapters::Adapter;
pub(crate) use event::{AgentEvent, AgentState, AgentStatus, ComposerState, ShellState};
pub(crate) use screen::Screen;
pub(crate) use tracker::{AgentTracker, Readiness, SubmitRefusal};
