//! Events on the `/events` SSE bus. Each SSE message carries `id:` (a monotonic event id that
//! `Last-Event-ID` replays from), `event:` (the kind below) and `data:` (the JSON payload).

/// Sent when a client's `Last-Event-ID` is older than the retained history, or when a slow
/// subscriber fell behind the live channel: `{"missed": n}` says how many events it lost.
pub const LAGGED: &str = "lagged";
pub const SESSION_CREATED: &str = "session-created";
pub const SESSION_CLOSED: &str = "session-closed";
pub const TERM_ALIAS_ASSIGNED: &str = "term-alias-assigned";
pub const CONFIG_CHANGED: &str = "config-changed";
/// `{session_id, pty_description?}`: an orchestrator set or cleared a PTY's task description.
pub const PTY_DESCRIPTION_CHANGED: &str = "pty-description-changed";
/// `{session_id, parsed}`: an agent-state engine event of one session (tuic-wire 2.6 names).
pub const PTY_PARSED: &str = "pty-parsed";
/// `{id, project, agent, type, text, step?, ts}`: a progress journal entry was appended.
pub const PROGRESS_RECORDED: &str = "progress-recorded";
/// `{id, title, message, requester, kind, expires_in_ms}`: a gated operation asks a person;
/// the first `POST /ui/confirm/:id` answers it.
pub const UI_CONFIRM_REQUESTED: &str = "ui-confirm-requested";
/// `{id, confirmed, reason?}`: a confirmation ended (answered, timed out, or nobody left to
/// answer); every client drops its dialog.
pub const UI_CONFIRM_RESOLVED: &str = "ui-confirm-resolved";
