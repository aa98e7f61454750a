//! The `session` tool's agent-aware pieces: the `submit` action, the framed injection for
//! prefill-only agents, and the agent fields of `status` / `wait`.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};

use super::session_error;
use crate::agent::adapters::PromptDelivery;
use crate::agent_runtime::AgentLink;
use crate::agent_runtime::state::AgentCounters;
use crate::agent_runtime::submit::{SubmitError, SubmitParams, submit as run_submit};
use crate::mcp::tools::{CallContext, ToolError, to_value};
use crate::session::Session;

/// `session action=submit`.
pub(super) async fn submit(ctx: &CallContext, p: SubmitParams) -> Result<Value, ToolError> {
    let session = ctx.app.sessions.resolve_live(&p.session_id).map_err(session_error)?;
    let counters = &ctx.app.agents.counters;
    AgentCounters::bump(&counters.submits);
    // One FIFO: a command never overtakes peer messages or Compose commands accepted before it.
    let queued = uuid::Uuid::parse_str(&session.tuic_session).map_or(0, |t| ctx.app.peers.queued(t));
    if queued > 0 {
        AgentCounters::bump(&counters.submits_refused);
        return Err(ToolError::new(format!(
            "session action=submit refused before writing: {queued} queued entr{} (peer messages or Compose commands) go first; nothing was written",
            if queued == 1 { "y" } else { "ies" }
        ))
        .with("submitted", false)
        .with("retry_safe", true));
    }
    let receipt = match run_submit(&session, &p.input, p.timeout_ms).await {
        Ok(receipt) => receipt,
        Err(SubmitError::Invalid(message)) => return Err(ToolError::new(message)),
        Err(SubmitError::Refused(receipt)) => {
            AgentCounters::bump(&counters.submits_refused);
            let reason = receipt.reason.clone().unwrap_or_default();
            let Value::Object(fields) = to_value(&*receipt)? else { unreachable!("a receipt is an object") };
            let mut error = ToolError::new(format!("session action=submit refused before writing: {reason}"));
            for (key, value) in fields.into_iter().filter(|(k, _)| k != "error") {
                error = error.with(&key, value);
            }
            return Err(error);
        }
    };
    if receipt.acknowledged {
        AgentCounters::bump(&counters.submits_acknowledged);
    }
    if let Some(description) = p.pty_description {
        ctx.app.mcp.set_pty_description(&ctx.app, &session.id, description);
    }
    to_value(&receipt)
}

/// Whether the session runs an agent whose composer takes text + Enter only as a framed injection.
pub(crate) fn prefill_only(session: &Session) -> bool {
    AgentLink::of(session).and_then(AgentLink::adapter).is_some_and(|a| a.prompt_delivery == PromptDelivery::Deferred)
}

/// The legacy framed injection (Ctrl-U, bracketed paste when multiline, the gap, Enter) under the
/// writer lock, without submit's idle check or receipt.
pub(crate) async fn inject(session: &Arc<Session>, text: &str) -> Result<(), ToolError> {
    let plan = crate::agent::submit::plan(AgentLink::of(session).and_then(AgentLink::adapter), text);
    let _writer = session.writer().await;
    session.write_held(Bytes::from(plan.before_enter)).await.map_err(session_error)?;
    tokio::time::sleep(plan.gap).await;
    session.write_held(Bytes::from_static(plan.enter)).await.map_err(session_error)
}

/// The `wait` answer for an agent session.
pub(super) fn wait_answer(session: &Session, met: bool, timeout_ms: u64) -> Result<Value, ToolError> {
    let status = session
        .attached_status()
        .ok_or_else(|| ToolError::new(format!("session {} has no agent engine attached", session.id)))?;
    let mut answer = json!({"met": met, "timed_out": !met, "until": "idle", "timeout_ms": timeout_ms});
    let map = answer.as_object_mut().expect("object");
    if let Some(state) = status.shell_state {
        map.insert("shell_state".into(), to_value(&state)?);
    }
    if let Some(state) = status.agent_state {
        map.insert("agent_state".into(), to_value(&state)?);
    }
    map.insert("idle_confirmed".into(), Value::Bool(status.idle_confirmed));
    map.insert("turn_epoch".into(), json!(status.turn_epoch));
    if let Some(items) = status.suggested_actions {
        map.insert("suggested_actions".into(), json!(items));
    }
    if let Some(code) = session.exit_info().and_then(|e| e.exit_code) {
        map.insert("exit_code".into(), json!(code));
    }
    Ok(answer)
}
