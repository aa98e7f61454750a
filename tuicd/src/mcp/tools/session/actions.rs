//! The `session` actions other than `wait`. Reads run inline (they copy out under the session's
//! lock); spawning and signalling run on the blocking pool.

use serde::Serialize;
use serde_json::{Value, json};

use super::keys;
use super::params::{Create, Format, Input, Output, Resize, Target};
use super::session_error;
use crate::limits::OUTPUT_DEFAULT_BYTES;
use crate::mcp::tools::{CallContext, ToolError, run_blocking, to_value};
use crate::session::OutputQuery;

/// One `list` entry. Optional values are omitted, never null.
#[derive(Debug, Serialize)]
struct ListEntry {
    session_id: String,
    tuic_session: String,
    is_caller: bool,
    alias: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<String>,
    cwd: String,
    /// The git work tree the session started in; omitted outside any repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    repo: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shell_state: Option<proto::session::ShellState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_state: Option<crate::agent::AgentState>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    background_work: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pty_description: Option<String>,
}

pub(super) fn list(ctx: &CallContext) -> Value {
    let entries: Vec<ListEntry> = ctx
        .app
        .sessions
        .list()
        .into_iter()
        .map(|s| (s.attached_status(), s))
        .map(|(agent, s)| ListEntry {
            is_caller: ctx.tuic_session.as_deref() == Some(s.tuic_session.as_str()),
            session_id: s.id.clone(),
            tuic_session: s.tuic_session.clone(),
            alias: s.alias.clone(),
            display_name: s.display_name.clone(),
            cwd: s.cwd.display().to_string(),
            repo: s.repo.as_ref().map(|r| r.display().to_string()),
            shell_state: s.shell_state(),
            agent_type: s.agent_type.clone().or_else(|| agent.as_ref()?.agent_type.map(str::to_owned)),
            agent_state: agent.as_ref().and_then(|a| a.agent_state),
            background_work: agent.as_ref().is_some_and(|a| a.background_work),
            pty_description: ctx.app.mcp.pty_description(&s.id),
        })
        .collect();
    let mut list = serde_json::to_value(entries).unwrap_or_else(|_| json!([]));
    if let Value::Array(items) = &mut list {
        items.extend(super::acp::list_entries(ctx));
    }
    list
}

pub(super) async fn create(ctx: &CallContext, p: Create) -> Result<Value, ToolError> {
    let request = proto::session::CreateSessionRequest {
        rows: p.rows,
        cols: p.cols,
        shell: p.shell,
        args: p.args,
        cwd: p.cwd,
        display_name: p.display_name,
        ..Default::default()
    };
    let app = ctx.app.clone();
    let max = app.config.get().max_sessions;
    let session =
        run_blocking("session action=create", move || app.sessions.create(&request, max).map_err(session_error))
            .await?;
    Ok(json!({"session_id": session.id, "tuic_session": session.tuic_session, "alias": session.alias}))
}

/// Writes text and key together, so a command and its Enter can never be split apart. The write
/// queues to the session's writer task (async, never blocking a worker).
pub(super) async fn input(ctx: &CallContext, p: Input) -> Result<Value, ToolError> {
    let session = ctx.app.sessions.resolve(&p.session_id).map_err(session_error)?;
    let key = p.special_key.as_deref().map(keys::bytes_for).transpose().map_err(ToolError::new)?;
    let mut bytes = p.input.clone().unwrap_or_default();
    bytes.push_str(key.unwrap_or(""));
    if bytes.is_empty() && p.pty_description.is_none() {
        return Err(ToolError::new("session action=input: give input text, a special_key, or both"));
    }
    let framed = key == Some("\r") && p.input.is_some();
    if framed && super::agent::prefill_only(&session) {
        super::agent::inject(&session, p.input.as_deref().unwrap_or_default()).await?;
    } else if !bytes.is_empty() {
        session.write(bytes.into_bytes()).await.map_err(session_error)?;
    }
    if let Some(description) = p.pty_description {
        ctx.app.mcp.set_pty_description(&ctx.app, &session.id, description);
    }
    Ok(json!({"ok": true}))
}

#[derive(Debug, Serialize)]
struct OutputResult {
    data: String,
    data_length: usize,
    /// Pass back as `since_cursor`.
    cursor: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_written: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scrollback_lines: Option<u64>,
    oldest_offset: u64,
    exited: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
}

pub(super) fn output(ctx: &CallContext, p: Output) -> Result<Value, ToolError> {
    if p.limit == Some(0) {
        return Err(ToolError::new("session action=output: limit must be at least 1"));
    }
    let limit = p.limit.unwrap_or(OUTPUT_DEFAULT_BYTES);
    if let Ok(connection) = ctx.app.acp.get(&p.session_id) {
        return super::acp::output(&connection, p.since_cursor, limit);
    }
    let session = ctx.app.sessions.resolve(&p.session_id).map_err(session_error)?;
    let format = p.format.unwrap_or_default();
    if format == Format::Raw {
        let query =
            OutputQuery { format: proto::session::OutputFormat::Raw, since_cursor: p.since_cursor, limit: Some(limit) };
        let read = session.output(query);
        return to_value(&OutputResult {
            data_length: read.data.len(),
            data: read.data,
            cursor: read.cursor,
            total_written: Some(read.total_written),
            scrollback_lines: None,
            oldest_offset: read.oldest_cursor,
            exited: read.exited,
            exit_code: read.exit_code,
        });
    }
    // Text: log lines (and, for a tail read, the visible screen) capped at `limit` bytes.
    let read = session.text_within(p.since_cursor, limit);
    to_value(&OutputResult {
        data_length: read.data.len(),
        data: read.data,
        cursor: read.cursor,
        total_written: p.since_cursor.is_none().then_some(read.cursor),
        scrollback_lines: Some(read.total_lines - read.oldest_line),
        oldest_offset: read.oldest_line,
        exited: read.exited,
        exit_code: read.exit_code,
    })
}

pub(super) fn resize(ctx: &CallContext, p: Resize) -> Result<Value, ToolError> {
    let session = ctx.app.sessions.resolve(&p.session_id).map_err(session_error)?;
    session.resize(p.rows, p.cols).map_err(session_error)?;
    Ok(json!({"ok": true}))
}

/// `close` and `kill`. Both are idempotent on an already exited session; `close` refuses the
/// caller's own PTY so that an orchestrator cannot end itself by accident.
pub(super) async fn close(ctx: &CallContext, p: Target, kill: bool) -> Result<Value, ToolError> {
    let session = ctx.app.sessions.resolve(&p.session_id).map_err(session_error)?;
    if !kill && ctx.tuic_session.as_deref() == Some(session.tuic_session.as_str()) {
        return Err(ToolError::new("Cannot close own session. Use exit to terminate yourself."));
    }
    let reason = if kill { "killed" } else { proto::session::close_reason::EXPLICIT_CLOSE };
    run_blocking(if kill { "session action=kill" } else { "session action=close" }, move || {
        session.close(reason);
        Ok(())
    })
    .await?;
    Ok(json!({"ok": true}))
}

pub(super) fn pause(ctx: &CallContext, p: Target, pause: bool) -> Result<Value, ToolError> {
    let session = ctx.app.sessions.resolve(&p.session_id).map_err(session_error)?;
    if pause { session.pause() } else { session.resume() }.map_err(session_error)?;
    Ok(json!({"ok": true}))
}

pub(super) async fn process_stats(ctx: &CallContext) -> Result<Value, ToolError> {
    let app = ctx.app.clone();
    let processes = run_blocking("session action=process_stats", move || Ok(app.sessions.process_stats())).await?;
    Ok(json!({ "processes": processes }))
}
