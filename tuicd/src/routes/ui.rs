//! `/ui/*`: a person's answers to what the daemon asks through a UI client.
//! `POST /ui/confirm/:id {"confirmed": bool}` (the first answer wins), `GET /ui/confirms` (what
//! waits, and how many connected clients can answer each kind of request).

use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use crate::http::body::{json_response, ok_json, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::state::App;
use crate::ui::{AnswerError, Capability};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfirmAnswer {
    confirmed: bool,
}

pub(crate) async fn answer_confirm(app: &App, caller: &Caller, id: &str, req: Request) -> ApiResult {
    let body: ConfirmAnswer = read_json(req).await?;
    require_person(app, caller).await?;
    match app.ui.answer(id, body.confirmed) {
        Ok(()) => Ok(json_response(StatusCode::OK, &json!({"ok": true}))),
        Err(AnswerError::NotFound) => Err(ApiError::NotFound(format!("no confirmation {id:?} is waiting"))),
        Err(AnswerError::AlreadyResolved) => {
            Err(ApiError::Conflict(format!("confirmation {id:?} was already resolved")))
        }
    }
}

/// Only a person answers what the daemon asks a person: over TCP the password's holder or a
/// person's token with `drive`; on the socket a process not running inside one of tuicd's
/// terminals (an agent, or anything an agent started there, is not one).
pub(crate) async fn require_person(app: &App, caller: &Caller) -> Result<(), ApiError> {
    caller.grant.may_answer(None).map_err(ApiError::Forbidden)?;
    let inside = match caller.peer_pid {
        Some(pid) => tokio::task::spawn_blocking({
            let app = app.clone();
            move || terminal_of(&app, pid)
        })
        .await
        .unwrap_or(None),
        None => None,
    };
    match inside {
        Some(alias) => Err(ApiError::Forbidden(format!(
            "confirmations are answered by a person: this request comes from a process inside {alias}"
        ))),
        None => Ok(()),
    }
}

/// The tuicd terminal (or ACP agent) `pid` descends from, by its parent chain in `/proc` (a
/// daemonized child of an agent is reparented away and is not found: see docs/security.md).
fn terminal_of(app: &App, pid: u32) -> Option<String> {
    let mut roots: Vec<(u32, String)> =
        app.sessions.list().iter().filter_map(|s| s.pid.map(|p| (p, format!("tuicd terminal {}", s.alias)))).collect();
    roots.extend(app.acp.pids().into_iter().map(|(pid, id)| (pid, format!("the agent of ACP connection {id}"))));
    let mut current = pid;
    for _ in 0..crate::limits::PROCESS_ANCESTRY_MAX {
        if let Some((_, alias)) = roots.iter().find(|(root, _)| *root == current) {
            return Some(alias.clone());
        }
        let stat = std::fs::read_to_string(format!("/proc/{current}/stat")).ok()?;
        let after = &stat[stat.rfind(')')? + 1..];
        let parent: u32 = after.split_whitespace().nth(1)?.parse().ok()?;
        if parent <= 1 {
            return None;
        }
        current = parent;
    }
    None
}

pub(crate) async fn list_confirms(app: &App) -> ApiResult {
    let answerers = json!({
        "confirm": app.ui.answerers(Capability::Confirm),
        "screenshot": app.ui.answerers(Capability::Screenshot),
    });
    ok_json(&json!({"confirms": app.ui.pending_confirms(), "answerers": answerers}))
}
