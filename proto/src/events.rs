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
/// `{client_id, id, session_id, line, groups}`: a line of a session's output matched a frontend's
/// output watcher pattern (`POST /api/plugins/output-watchers`).
pub const PLUGIN_OUTPUT_MATCH: &str = "plugin-output-match";
/// `{repo_path, branch, worktree_path}`: a linked worktree was created (`POST /worktrees`,
/// `repo action=worktree_create`).
pub const WORKTREE_CREATED: &str = "worktree-created";
/// `{repo_path, branch, reason}`: creating a worktree failed.
pub const WORKTREE_CREATE_FAILED: &str = "worktree-create-failed";
/// `{repo_path, branch, worktree_path}`: a linked worktree was removed.
pub const WORKTREE_REMOVED: &str = "worktree-removed";
/// `{title, message?, level, sound?, origin_repo_path?, origin_session_id?}`: MCP `ui action=toast`.
pub const MCP_TOAST: &str = "mcp-toast";
/// `{id, title, html?, url?, pinned, focus, origin_repo_path?}`: MCP `ui action=tab` opens a tab.
pub const UI_TAB: &str = "ui-tab";
/// `{id}`: a GUI client that declared `?ui=screenshot` answers with `POST /ui/screenshot/:id`.
pub const UI_SCREENSHOT_REQUESTED: &str = "ui-screenshot-requested";
/// `{name, authorization_url, as_origin, cross_domain_as}` (as the authorize route answers): an
/// OAuth authorization of upstream `name` started; a UI client
/// opens the URL in a browser (the person's click, or their approval of the consent, started it).
pub const MCP_OAUTH_START: &str = "mcp-oauth-start";
/// An upstream MCP server's status changed: `{name, status}` (status as `GET /mcp/upstream-status` spells it).
pub const UPSTREAM_STATUS_CHANGED: &str = "upstream-status-changed";
