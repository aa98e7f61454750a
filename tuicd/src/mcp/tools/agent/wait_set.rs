//! `agent action=wait sessions=[...]`: the orchestrator's one read. Resolves the set (a session
//! reference, or a task_id the caller owns) before waiting, waits with
//! [`crate::agent_runtime::outcomes::wait_all`], and adds the caller's fresh mail when it has an
//! identity, so one answer holds every outcome and every message.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::agent_runtime::outcomes::wait_all;
use crate::limits::WAIT_SET_MAX_SESSIONS;
use crate::mcp::tools::{CallContext, ToolError, to_value};
use crate::messaging::TransportId;
use crate::messaging::wait::effective_wait;
use crate::session::Session;

pub(super) async fn wait_set(
    ctx: &CallContext,
    references: Vec<String>,
    since: Option<u64>,
    timeout_ms: Option<u64>,
) -> Result<Value, ToolError> {
    let fail = |message: String| ToolError::new(format!("agent action=wait: {message}"));
    if references.is_empty() {
        return Err(fail("sessions must name at least one session or task_id".into()));
    }
    if references.len() > WAIT_SET_MAX_SESSIONS {
        return Err(fail(format!(
            "sessions names {} entries; at most {WAIT_SET_MAX_SESSIONS} per wait",
            references.len()
        )));
    }
    let mut sessions: Vec<Arc<Session>> = Vec::with_capacity(references.len());
    for (i, reference) in references.iter().enumerate() {
        let session = resolve(ctx, reference.trim())
            .ok_or_else(|| fail(format!("sessions[{i}] '{reference}' is neither a session nor a task_id of yours")))?;
        if !sessions.iter().any(|s| s.id == session.id) {
            sessions.push(session);
        }
    }
    let outcome = wait_all(&ctx.app, sessions, effective_wait(timeout_ms)).await;
    let mut answer = to_value(&outcome)?;
    // The caller's mail (children's reports, lifecycle mail), read without blocking.
    let transport = ctx.mcp_session.as_deref().map(TransportId::new);
    if let Some(transport) = transport
        && ctx.app.peers.messaging.identity_of(&transport).is_some()
        && let Ok(mail) = ctx.app.peers.messaging.wait(&transport, since, Some(0)).await
    {
        answer["messages"] = json!(mail.messages);
        answer["next_since"] = json!(mail.next_since);
    }
    Ok(answer)
}

/// A session by any reference (PTY id, tuic_session, alias), else the session of a task the
/// caller owns.
fn resolve(ctx: &CallContext, reference: &str) -> Option<Arc<Session>> {
    if let Ok(session) = ctx.app.sessions.resolve(reference) {
        return Some(session);
    }
    let task = ctx.app.agents.tasks.get(reference, ctx.owner().as_deref()).ok()?;
    ctx.app.sessions.resolve(&task.session_id).ok()
}
