//! The `ui` tool: toast, tab, confirm and screenshot, each an event on `/events` that the GUI and
//! `/mobile` act on (see [`crate::ui`]). The origin of a toast or tab is the caller's PTY, never
//! guessed: a caller bound to none carries no origin.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::action::{NoParams, action};
use super::{CallContext, ToolDef, ToolError, run_blocking};
use crate::http::Transport;
use crate::limits::{
    UI_MESSAGE_MAX_CHARS, UI_TAB_HTML_MAX_BYTES, UI_TAB_ID_MAX_LEN, UI_TAB_URL_MAX_BYTES, UI_TITLE_MAX_CHARS,
};
use crate::ui::notice::{self, Tab, Toast};
use crate::ui::screenshot::save_png;
use crate::ui::{ConfirmOutcome, ConfirmRequest};

pub(crate) const NAME: &str = "ui";

pub(crate) const DESCRIPTION: &str = "Reach the person through the connected UI clients (the GUI, /mobile).

- toast: a notification; sound=true plays the level's sound.
- tab: opens html or a url (http(s), file, tuic://edit/, tuic://open/).
- confirm: asks yes or no, up to 300 s: {confirmed, reason?}; refused at once if no client can answer.
- screenshot: the GUI window as a PNG file: {path}.";

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    description: DESCRIPTION,
    takes_action: true,
    actions: &[
        action!(NAME, "tab", TabParams => sync tab, loopback: false, blocks: false),
        action!(NAME, "toast", ToastParams => sync toast, loopback: false, blocks: false),
        action!(NAME, "confirm", ConfirmParams => async confirm, loopback: true, blocks: true),
        action!(NAME, "screenshot", NoParams => async screenshot, loopback: true, blocks: true),
    ],
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToastParams {
    /// A short title (at most 200 characters).
    title: String,
    /// The text (at most 4000 characters).
    message: Option<String>,
    /// info (default), warn or error.
    level: Option<String>,
    /// true, false (default) or a sound name.
    #[schemars(schema_with = "sound_schema")]
    sound: Option<Value>,
}

fn sound_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut names: Vec<Value> = notice::SOUNDS.iter().map(|s| json!(s)).collect();
    names.extend([json!(true), json!(false)]);
    schemars::json_schema!({"type": ["boolean", "string"], "enum": names, "description": "true, false (default) or a sound name."})
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TabParams {
    /// Replaces the tab with this id (default: a new tab).
    id: Option<String>,
    /// A short title (at most 200 characters).
    title: String,
    /// HTML to show (at most 64 KiB); or url.
    html: Option<String>,
    /// http(s)://, file://, tuic://edit/<path>?line=N or tuic://open/<path>.
    url: Option<String>,
    /// Keep the tab open across restarts (default false).
    pinned: Option<bool>,
    /// Bring the tab to the front (default true).
    focus: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfirmParams {
    /// A short title (at most 200 characters).
    title: Option<String>,
    /// The text (at most 4000 characters).
    message: String,
}

/// Where a toast or tab came from: the caller's PTY (its `tuic_session`) and that PTY's project.
struct Origin {
    repo_path: Option<String>,
    session_id: Option<String>,
}

fn origin(ctx: &CallContext) -> Origin {
    let none = Origin { repo_path: None, session_id: None };
    let Some(tuic_session) = ctx.tuic_session.as_deref() else { return none };
    let Ok(session) = ctx.app.sessions.resolve(tuic_session) else { return none };
    let peer_project = ctx
        .app
        .peers
        .messaging
        .list_peers(None, &crate::messaging_runtime::view::View(&ctx.app))
        .into_iter()
        .find(|p| p.tuic_session.to_string() == session.tuic_session)
        .and_then(|p| p.project);
    let repo_path = peer_project.unwrap_or_else(|| crate::agent_runtime::progress::project_of(&session.cwd));
    Origin { repo_path: Some(repo_path), session_id: Some(session.tuic_session.clone()) }
}

fn text(action: &str, field: &str, value: String, max_chars: usize) -> Result<String, ToolError> {
    if value.trim().is_empty() {
        return Err(ToolError::new(format!("ui action={action}: {field} must not be empty")));
    }
    let chars = value.chars().count();
    if chars > max_chars {
        return Err(ToolError::new(format!("ui action={action}: {field} is {chars} characters; at most {max_chars}")));
    }
    Ok(value)
}

fn toast(ctx: &CallContext, p: ToastParams) -> Result<Value, ToolError> {
    let bad = |e: String| ToolError::new(format!("ui action=toast: {e}"));
    let title = text("toast", "title", p.title, UI_TITLE_MAX_CHARS)?;
    let message = p.message.map(|m| text("toast", "message", m, UI_MESSAGE_MAX_CHARS)).transpose()?;
    let level = notice::level(p.level.as_deref()).map_err(bad)?;
    let sound = notice::sound(level, p.sound.as_ref()).map_err(bad)?;
    let origin = origin(ctx);
    let event = Toast {
        title,
        message,
        level,
        sound,
        origin_repo_path: origin.repo_path,
        origin_session_id: origin.session_id,
    };
    ctx.app.events.publish(proto::events::MCP_TOAST, &event);
    Ok(json!({"ok": true}))
}

fn tab(ctx: &CallContext, p: TabParams) -> Result<Value, ToolError> {
    let bad = |e: String| ToolError::new(format!("ui action=tab: {e}"));
    let title = text("tab", "title", p.title, UI_TITLE_MAX_CHARS)?;
    let id = match p.id {
        Some(id) => {
            let ok = !id.is_empty()
                && id.len() <= UI_TAB_ID_MAX_LEN
                && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !ok {
                return Err(bad(format!("id must be 1 to {UI_TAB_ID_MAX_LEN} letters, digits, '-', '_' or '.'")));
            }
            id
        }
        None => format!("tab-{}", uuid::Uuid::new_v4().simple()),
    };
    match (&p.html, &p.url) {
        (Some(_), Some(_)) | (None, None) => return Err(bad("give exactly one of html or url".into())),
        (Some(html), None) if html.len() > UI_TAB_HTML_MAX_BYTES => {
            return Err(bad(format!("html is {} bytes; at most {UI_TAB_HTML_MAX_BYTES}", html.len())));
        }
        (None, Some(url)) if url.len() > UI_TAB_URL_MAX_BYTES => {
            return Err(bad(format!("url is {} bytes; at most {UI_TAB_URL_MAX_BYTES}", url.len())));
        }
        (None, Some(url)) => {
            notice::check_tab_url(url).map_err(bad)?;
            if matches!(ctx.caller.transport, Transport::Tcp { .. }) {
                notice::check_remote_tab_url(url).map_err(bad)?;
            }
        }
        (Some(_), None) => {}
    }
    let event = Tab {
        id: id.clone(),
        title,
        html: p.html,
        url: p.url,
        pinned: p.pinned.unwrap_or(false),
        focus: p.focus.unwrap_or(true),
        origin_repo_path: origin(ctx).repo_path,
    };
    ctx.app.events.publish(proto::events::UI_TAB, &event);
    Ok(json!({"ok": true, "id": id}))
}

/// Who asks, in words a person reads.
fn requester(ctx: &CallContext) -> String {
    let session = ctx.tuic_session.as_deref().and_then(|t| ctx.app.sessions.resolve(t).ok());
    if let Some(session) = session {
        let kind = session
            .attached_status()
            .and_then(|s| s.agent_type)
            .map(str::to_owned)
            .or_else(|| session.agent_type.clone())
            .unwrap_or_else(|| "shell".into());
        return format!("agent {} ({kind})", session.alias);
    }
    match ctx.caller.transport {
        Transport::Ipc => "an MCP client on this machine".into(),
        Transport::Tcp { peer, .. } => format!("an MCP client at {}", peer.ip()),
    }
}

#[derive(Debug, Serialize)]
struct Confirmed {
    confirmed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
}

async fn confirm(ctx: &CallContext, p: ConfirmParams) -> Result<Confirmed, ToolError> {
    let title = p.title.map(|t| text("confirm", "title", t, UI_TITLE_MAX_CHARS)).transpose()?;
    let message = text("confirm", "message", p.message, UI_MESSAGE_MAX_CHARS)?;
    let request = ConfirmRequest {
        title: title.unwrap_or_else(|| "Confirm".into()),
        message,
        requester: requester(ctx),
        kind: "ui_confirm",
    };
    let outcome = ctx.app.ui.confirm(request).await;
    match outcome {
        ConfirmOutcome::NoClient | ConfirmOutcome::TooMany => {
            let reason = outcome.reason().unwrap_or("refused");
            Err(ToolError::new(format!("ui action=confirm: {reason}")).with("confirmed", false).with("reason", reason))
        }
        _ => Ok(Confirmed { confirmed: outcome.confirmed(), reason: outcome.reason() }),
    }
}

async fn screenshot(ctx: &CallContext, _: NoParams) -> Result<Value, ToolError> {
    let png = ctx.app.ui.screenshot().await.map_err(|e| ToolError::new(format!("ui action=screenshot: {e}")))?;
    let dir = ctx.app.config_dir.clone();
    let path = run_blocking("ui action=screenshot", move || {
        save_png(&dir, &png).map_err(|e| ToolError::new(format!("ui action=screenshot: cannot save the PNG: {e}")))
    })
    .await?;
    Ok(json!({ "path": path }))
}
