//! Reading a session: output by cursor in three formats, status, and waiting for a state.

use std::time::{Duration, Instant};

use proto::session::{OutputFormat, OutputResponse, SessionInfo, ShellFamily, ShellState};
use tokio::sync::broadcast::error::RecvError;

use super::owner::Session;
use super::ring::{RingRead, continuation_head, incomplete_utf8_tail};
use crate::limits::{OUTPUT_DEFAULT_BYTES, SESSION_LOG_LINES, SHELL_IDLE_AFTER};

/// An output read. Cursors are bytes for `Raw` and log lines for `Text`/`Log`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OutputQuery {
    pub format: OutputFormat,
    /// Read forward from here (a delta); without it, the tail.
    pub since_cursor: Option<u64>,
    /// Raw: bytes (default 8192). Text/log: lines (default: all retained).
    pub limit: Option<usize>,
}

/// A text read bounded in bytes (`session action=output format=text`): whole log lines, and for a
/// tail the visible screen's non-blank rows after them, joined by newlines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextRead {
    pub data: String,
    /// The line cursor to pass next as `since_cursor`.
    pub cursor: u64,
    pub total_lines: u64,
    pub oldest_line: u64,
    pub exited: bool,
    pub exit_code: Option<i32>,
}

/// What `wait` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitFor {
    /// `shell_state` is idle (output has been silent for the idle threshold), or the session exited.
    Idle,
    Exited,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitOutcome {
    Reached,
    TimedOut,
}

impl Session {
    /// Reads output. Every response carries `cursor`, the value to pass next as `since_cursor`;
    /// successive deltas never repeat or skip (a raw delta never splits a UTF-8 character; it stops
    /// before an incomplete one and the next delta starts with it; a `limit` smaller than the next
    /// character returns that one character whole).
    pub(crate) fn output(&self, query: OutputQuery) -> OutputResponse {
        let exit = self.lock().exit;
        let mut response = match query.format {
            OutputFormat::Raw => {
                let limit = query.limit.unwrap_or(OUTPUT_DEFAULT_BYTES);
                let out = self.lock();
                let mut read = match query.since_cursor {
                    Some(from) => out.ring.read_from(from, limit),
                    None => out.ring.tail(limit),
                };
                let skip = continuation_head(&read.data);
                read.data.drain(..skip);
                read.start += skip as u64;
                let mut hold = incomplete_utf8_tail(&read.data);
                if hold > 0 && hold == read.data.len() {
                    // The limit ends inside the first character: holding it back would answer
                    // nothing at the same cursor forever, so a polling client would never advance.
                    let whole = out.ring.read_from(read.start, read.data[0].leading_ones() as usize);
                    if incomplete_utf8_tail(&whole.data) == 0 {
                        (read.data, hold) = (whole.data, 0);
                    }
                }
                // Hold an incomplete character back only when more bytes can still complete it.
                if hold < read.data.len() || exit.is_none() {
                    read.data.truncate(read.data.len() - hold);
                }
                let data = String::from_utf8_lossy(&read.data).into_owned();
                OutputResponse {
                    data_length: data.len(),
                    data,
                    cursor: read.start + read.data.len() as u64,
                    total_written: out.ring.total(),
                    oldest_cursor: out.ring.oldest(),
                    lines: None,
                    screen: None,
                    exited: false,
                    exit_code: None,
                }
            }
            OutputFormat::Text | OutputFormat::Log => {
                let limit = query.limit.unwrap_or(SESSION_LOG_LINES);
                let out = self.term();
                let read = match query.since_cursor {
                    Some(from) => out.screen.log_from(from, limit),
                    None => out.screen.log_tail(limit),
                };
                let cursor = read.start + read.lines.len() as u64;
                let screen = query.since_cursor.is_none().then(|| out.screen.screen_rows());
                let mut text = read.lines.clone();
                text.extend(screen.iter().flatten().cloned());
                let data = text.join("\n");
                let is_log = query.format == OutputFormat::Log;
                OutputResponse {
                    data_length: data.len(),
                    data,
                    cursor,
                    total_written: out.screen.total_lines(),
                    oldest_cursor: out.screen.oldest_line(),
                    lines: is_log.then_some(read.lines),
                    screen: if is_log { screen } else { None },
                    exited: false,
                    exit_code: None,
                }
            }
        };
        response.exited = exit.is_some();
        response.exit_code = exit.and_then(|e| e.exit_code);
        response
    }

    /// Text output within `limit` bytes. A tail (no `since_cursor`) keeps the newest lines, the
    /// screen rows counting as the newest; a delta keeps the oldest, at least one, so the cursor
    /// never skips a line. Only the lines kept are copied out of the log.
    pub(crate) fn text_within(&self, since_cursor: Option<u64>, limit: usize) -> TextRead {
        let exit = self.lock().exit;
        let term = self.term();
        let screen = &term.screen;
        // Each line costs its length plus the newline joining it to the next; `limit + 1` pays
        // for the newline the last line does not have.
        let (lines, cursor) = match since_cursor {
            Some(from) => {
                let read = screen.log_from_within(from, limit.saturating_add(1), limit);
                let cursor = read.start + read.lines.len() as u64;
                (read.lines, cursor)
            }
            None => {
                let mut rows: Vec<String> = screen.screen_rows();
                rows.retain(|row| !row.trim().is_empty());
                let mut used = 0;
                let fit = rows
                    .iter()
                    .rev()
                    .take_while(|row| {
                        used += row.len() + 1;
                        used <= limit.saturating_add(1)
                    })
                    .count();
                let mut lines = if fit == rows.len() {
                    screen.log_tail_within(limit.saturating_add(1) - used, limit).lines
                } else {
                    Vec::new()
                };
                lines.extend(rows.drain(rows.len() - fit..));
                (lines, screen.total_lines())
            }
        };
        TextRead {
            data: lines.join("\n"),
            cursor,
            total_lines: screen.total_lines(),
            oldest_line: screen.oldest_line(),
            exited: exit.is_some(),
            exit_code: exit.and_then(|e| e.exit_code),
        }
    }

    /// Raw bytes from `from` (clamped to the oldest retained byte), at most `limit`.
    pub(crate) fn read_raw(&self, from: u64, limit: usize) -> RingRead {
        self.lock().ring.read_from(from, limit)
    }

    /// The one meaning of `shell_state`, shared by every reader and by [`Self::wait`]: the attached
    /// engine's view (screen-driven: markers, screen movement, silence), `busy` while output the
    /// screen follower (and so the engine) has not read yet is pending (on a loaded machine it
    /// lags the raw bytes), and, without an engine view, `busy` while output arrived within
    /// [`SHELL_IDLE_AFTER`]; `None` before the first output. Computed on read, so an idle session
    /// costs no timer.
    pub(crate) fn shell_state(&self) -> Option<ShellState> {
        self.shell_state_with(self.attached_status().as_ref())
    }

    /// The attached engine's view of the session now (see [`super::hooks`]).
    pub(crate) fn attached_status(&self) -> Option<crate::agent::AgentStatus> {
        self.hooks().map(|h| h.status())
    }

    /// [`Self::shell_state`] given the attached engine's view already read.
    fn shell_state_with(&self, status: Option<&crate::agent::AgentStatus>) -> Option<ShellState> {
        self.shell_reading(status).0
    }

    /// `shell_state`, and the instant it turns idle by silence alone when only raw output timing
    /// decides it (no engine view): the one timer a waiter needs.
    fn shell_reading(&self, status: Option<&crate::agent::AgentStatus>) -> (Option<ShellState>, Option<Instant>) {
        let (last, total) = {
            let out = self.lock();
            (out.last_output, out.ring.total())
        };
        if *self.screen_cursor.borrow() < total {
            return (Some(ShellState::Busy), None);
        }
        if let Some(state) = status.and_then(|s| s.shell_state) {
            let state = match state {
                crate::agent::ShellState::Busy => ShellState::Busy,
                crate::agent::ShellState::Idle => ShellState::Idle,
            };
            return (Some(state), None);
        }
        let Some(last) = last else { return (None, None) };
        let idle_at = last + SHELL_IDLE_AFTER;
        (Some(if Instant::now() < idle_at { ShellState::Busy } else { ShellState::Idle }), Some(idle_at))
    }

    /// Changes each time the screen follower has read more output (the screen model moved on).
    pub(crate) fn screen_progress(&self) -> tokio::sync::watch::Receiver<u64> {
        self.screen_cursor.subscribe()
    }

    /// Whether the program drew on the alternate screen (a full-screen program: vim, less, a TUI).
    pub(crate) fn alternate_screen(&self) -> bool {
        self.term().screen.alternate_screen()
    }

    pub(crate) fn shell_family(&self) -> Option<ShellFamily> {
        if self.lock().exit.is_some() {
            return None;
        }
        let name = self.shell.rsplit(['/', '\\']).next().unwrap_or("").trim_end_matches(".exe").to_ascii_lowercase();
        Some(match name.as_str() {
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "yash" | "busybox" => ShellFamily::Posix,
            "cmd" | "powershell" | "pwsh" => ShellFamily::WindowsNative,
            _ => ShellFamily::Unknown,
        })
    }

    pub(crate) fn info(&self) -> SessionInfo {
        let (mut info, status) = self.info_and_status();
        info.state = status.and_then(|s| serde_json::to_value(s).ok());
        info
    }

    /// The session's info without `state`, and the agent engine's view it was read with (one
    /// tick of the engine for both).
    pub(crate) fn info_and_status(&self) -> (SessionInfo, Option<crate::agent::AgentStatus>) {
        let status = self.attached_status();
        let shell_state = self.shell_state_with(status.as_ref());
        let (rows, cols, total_lines) = {
            let term = self.term();
            let (rows, cols) = term.screen.size();
            (rows, cols, term.screen.total_lines())
        };
        let out = self.lock();
        let info = SessionInfo {
            session_id: self.id.clone(),
            tuic_session: self.tuic_session.clone(),
            alias: self.alias.clone(),
            cwd: self.cwd.display().to_string(),
            repo: self.repo.as_ref().map(|r| r.display().to_string()),
            shell: self.shell.clone(),
            display_name: self.display_name.clone(),
            agent_type: self.agent_type.clone(),
            rows,
            cols,
            pid: if out.exit.is_none() { self.pid } else { None },
            shell_state,
            paused: self.is_paused(),
            exited: out.exit.is_some(),
            exit_code: out.exit.and_then(|e| e.exit_code),
            total_written: out.ring.total(),
            total_lines,
            state: None,
        };
        (info, status)
    }

    /// Waits until `until` holds or `timeout` passes; `Idle` is [`Self::shell_state`] idle, so the
    /// answer never disagrees with a status read right after it. Subscribes before it checks, so a
    /// change between the check and the wait is never missed. Wakes only on what can change the
    /// answer: an engine event (its silence timers run on its ticker while output is recent), the
    /// screen follower reading the pending output, the first output, the raw silence timer while
    /// no engine has a view, the exit, and the deadline.
    pub(crate) async fn wait(&self, until: WaitFor, timeout: Duration) -> WaitOutcome {
        let deadline = Instant::now() + timeout;
        let mut events = self.subscribe();
        let mut done = self.done.subscribe();
        let mut screen = self.screen_cursor.subscribe();
        let idle = until == WaitFor::Idle;
        loop {
            let exited = self.lock().exit.is_some();
            let (state, idle_at) =
                if idle { self.shell_reading(self.attached_status().as_ref()) } else { (None, None) };
            if exited || (idle && state == Some(ShellState::Idle)) {
                return WaitOutcome::Reached;
            }
            if Instant::now() >= deadline {
                return WaitOutcome::TimedOut;
            }
            let total = self.total_written();
            let wake = idle_at.map_or(deadline, |t| t.min(deadline));
            tokio::select! {
                () = tokio::time::sleep_until(wake.into()) => {}
                _ = done.wait_for(|d| *d) => {}
                _ = screen.wait_for(|c| *c >= total), if idle && *self.screen_cursor.borrow() < total => {}
                closed = next_change(&mut events, state.is_none()), if idle => {
                    if closed { return WaitOutcome::Reached; }
                }
            }
        }
    }
}

/// Waits for the next session event that can change `shell_state`: an engine event (or, with
/// `output` set, before the first output, any event). Output alone changes nothing the screen
/// cursor does not already say. `true` when the session's broadcast has closed.
async fn next_change(
    events: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<super::SessionEvent>>,
    output: bool,
) -> bool {
    loop {
        match events.recv().await {
            Err(RecvError::Closed) => return true,
            Ok(event) if !output && matches!(*event, super::SessionEvent::Output { .. }) => {}
            _ => return false,
        }
    }
}
