//! Session wire types: `/sessions` REST bodies, `/stats`, `/metrics`, `/process/stats`,
//! `/diagnostics/capture`, and the `/sessions/:id/stream` WebSocket frames.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `POST /sessions`. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateSessionRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<u16>,
    /// Program to run; defaults to `$SHELL`, then `/bin/sh`. A bare name is looked up in `PATH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// Arguments for `shell` (none by default).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Working directory; defaults to the daemon's home directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// A client-chosen PTY id, honoured when well-formed and unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The stable identity a tab persists across restarts; a fresh UUID when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuic_session: Option<String>,
    /// A restored alias; reserved when it is `<prefix>-<n>` and free, otherwise a fresh one is minted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// This session's size rule when several clients draw it; the daemon's `window_size` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_size: Option<WindowSize>,
}

/// How a session shared by several clients picks its size (tmux's `window-size`). Each attached
/// stream that reports a size is a client; a REST resize naming no attached client is the manual
/// size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSize {
    /// The size of the client that most recently sent input or a size (the default).
    #[default]
    Latest,
    /// The smallest rows and the smallest cols over the attached clients.
    Smallest,
    /// The largest rows and the largest cols over the attached clients.
    Largest,
    /// Only explicit resizes (`POST /sessions/:id/resize` without an attached `client`, MCP `resize`).
    Manual,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateSessionResponse {
    pub session_id: String,
    pub tuic_session: String,
    pub alias: String,
}

/// Observed PTY activity: busy while output flows, idle after a short silence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShellState {
    Busy,
    Idle,
}

/// One entry of `GET /sessions`, and the status of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub session_id: String,
    pub tuic_session: String,
    pub alias: String,
    pub cwd: String,
    /// The git work tree the session started in (its top level); omitted outside any repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    pub shell: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    pub rows: u16,
    pub cols: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Omitted before the first output is observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_state: Option<ShellState>,
    /// Present (and true) only while output is paused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    pub exited: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Raw bytes the child has written so far (the raw output cursor).
    pub total_written: u64,
    /// Log lines pushed so far (the log output cursor).
    pub total_lines: u64,
    /// The agent-state engine's view (tuic-wire 2.4 `SessionState` names): `shell_state`,
    /// `agent_state`, `awaiting_input`, `background_work`, `turn_epoch`, `agent_intent`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteRequest {
    pub data: String,
    /// The attached stream client typing (its `?client=` name): under the `latest` size rule the
    /// session takes its size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResizeRequest {
    pub rows: u16,
    pub cols: u16,
    /// The attached stream client (its `?client=` name) this size is for; absent, or naming no
    /// attached client: the session's manual size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputFormat {
    #[default]
    Raw,
    Text,
    Log,
}

/// `GET /sessions/:id/output`. Cursors are monotonic: bytes for `raw`, log lines for `text`/`log`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputResponse {
    /// Raw: the bytes (lossy UTF-8, never split inside a character). Text: lines joined by `\n`.
    pub data: String,
    pub data_length: usize,
    /// The next cursor to pass as `since_cursor`.
    pub cursor: u64,
    /// Raw: bytes ever written. Text/log: lines ever pushed to the log.
    pub total_written: u64,
    /// The oldest cursor still retained (older requests are clamped to it).
    pub oldest_cursor: u64,
    /// Log/text: the log lines returned (ANSI stripped), oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<String>>,
    /// Log/text without `since_cursor`: the visible screen rows, trailing blank rows dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<Vec<String>>,
    pub exited: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

/// `GET /sessions/:id/shell-family`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShellFamily {
    Posix,
    WindowsNative,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShellFamilyResponse {
    /// `null` once the session has exited (there is no shell to pick sequences for).
    pub shell_family: Option<ShellFamily>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub active_sessions: usize,
    pub max_sessions: usize,
    pub available_slots: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metrics {
    pub total_spawned: u64,
    pub failed_spawns: u64,
    pub active_sessions: usize,
    pub bytes_emitted: u64,
    pub bytes_written: u64,
    pub pauses_triggered: u64,
    pub ws_lag_resyncs: u64,
}

/// One row of `GET /process/stats`: tuicd itself first (no `session_id`), then each session's
/// child process tree, summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessStat {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub name: String,
    pub pid: u32,
    pub rss_kb: u64,
    pub cpu_pct: f32,
    /// Processes in the tree (1 for tuicd).
    pub processes: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureRequest {
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureStatus {
    pub enabled: bool,
    /// The one session recorded, when the capture is filtered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub directory: String,
    /// Bytes written to each opened `.tcap` file, by session id.
    pub files: BTreeMap<String, u64>,
}

/// Server -> client frames on `/sessions/:id/stream` (JSON text frames, tagged by `type`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamFrame {
    /// Output bytes `[cursor, total_written)`; `data` never splits a UTF-8 character.
    Output { data: String, cursor: u64, total_written: u64 },
    /// A terminal event parsed from the output (title change, bell, alternate screen).
    Parsed { event: ParsedEvent },
    /// The client fell behind: `missed` bytes are gone from the ring; output resumes at `cursor`.
    Lagged { missed: u64, cursor: u64 },
    /// The child exited; every byte it wrote was sent before this frame.
    Exit {
        session_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
    /// The session is closed; the server closes the socket next.
    Closed { session_id: String, reason: String },
    /// The session's size now (its size rule chose it): draw at it. Sent when it changes, and
    /// first to a client that reported its own size.
    Resize { rows: u16, cols: u16 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ParsedEvent {
    Title {
        title: String,
    },
    Bell,
    AlternateScreen {
        active: bool,
    },
    /// An agent-state engine event (`shell-state`, `agent-state`, `question`, `choice-prompt`,
    /// `suggest`, `intent`, `progress`, `user-input`, `command-finished`), already tagged by `type`.
    #[serde(untagged)]
    Agent(serde_json::Value),
}

/// `session-closed` reasons.
pub mod close_reason {
    pub const PROCESS_EXIT: &str = "process_exit";
    pub const EXPLICIT_CLOSE: &str = "explicit_close";
    pub const SHUTDOWN: &str = "shutdown";
}

/// `session action=submit`'s acknowledgement window when the call names no `timeout_ms`, and the
/// clamp for one that does. Shared so the bridge's call deadline always outlasts the daemon's wait.
pub const SUBMIT_ACK_DEFAULT_MS: u64 = 3_000;
pub const SUBMIT_ACK_MIN_MS: u64 = 250;
pub const SUBMIT_ACK_MAX_MS: u64 = 10_000;
