//! `GET /events?ui=confirm,screenshot`: the daemon's bus, followed for as long as the window is
//! open (reconnecting after a restart). It keeps the confirms, toasts, journal and screenshot
//! requests in the snapshot, asks the pollers for a fresh session or peer list, and carries out
//! tab requests.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::api::{Api, ApiError};
use super::{Confirm, Handle, JOURNAL_KEPT, QUESTIONS_KEPT, TOASTS_KEPT, Toast};
use crate::lock::Recover as _;

/// Waiting between two attempts to reopen the bus.
const RECONNECT_DELAY: Duration = Duration::from_millis(500);
/// The bus with this client counted as one that answers confirms and takes screenshots (the
/// window captures itself after its next frame and posts the PNG).
const BUS: &str = "/events?ui=confirm,screenshot";
/// A daemon without the `ui` query: the plain bus (toasts, tabs, sessions, journal).
const PLAIN_BUS: &str = "/events";

pub(super) async fn follow(handle: Handle, refresh: Arc<Notify>) {
    let mut path = BUS;
    loop {
        let api = handle.api.locked().clone();
        match api.open_stream(path).await {
            Ok(response) => {
                load_pending_confirms(&handle, &api).await;
                refresh.notify_one();
                read(&handle, &api, &refresh, response).await;
            }
            Err(ApiError::Status(400, _)) if path == BUS => {
                path = PLAIN_BUS;
                continue;
            }
            Err(ApiError::Unauthorized) => return,
            Err(_) => {}
        }
        // The confirms and screenshots of a daemon we cannot hear are not answerable.
        {
            let mut snap = handle.snapshot.locked();
            snap.confirms.clear();
            snap.screenshots.clear();
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

async fn load_pending_confirms(handle: &Handle, api: &Api) {
    if let Ok(answer) = api.get("/ui/confirms").await
        && let Some(pending) = answer["confirms"].as_array()
    {
        let confirms: Vec<Confirm> = pending.iter().filter_map(confirm_of).collect();
        handle.snapshot.locked().confirms = confirms;
    }
}

async fn read(handle: &Handle, api: &Api, refresh: &Notify, response: reqwest::Response) {
    let mut body = response.bytes_stream();
    let mut buffer = String::new();
    while let Some(Ok(chunk)) = body.next().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let message: String = buffer.drain(..end + 2).collect();
            let (mut kind, mut data) = ("message", String::new());
            for line in message.lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    kind = if value.trim() == "" { "message" } else { leak_kind(value.trim()) };
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push_str(value.trim_start());
                }
            }
            if data.is_empty() {
                continue;
            }
            let payload: Value = serde_json::from_str(&data).unwrap_or_default();
            dispatch(handle, api, refresh, kind, payload).await;
        }
    }
}

/// Event kinds we act on, as `'static` names (anything else is ignored).
fn leak_kind(kind: &str) -> &'static str {
    const KNOWN: [&str; 15] = [
        "acp-notice",
        "session-created",
        "session-closed",
        "term-alias-assigned",
        "pty-parsed",
        "progress-recorded",
        "peer-registered",
        "peer-unregistered",
        "mcp-toast",
        "ui-tab",
        "ui-confirm-requested",
        "ui-confirm-resolved",
        "ui-screenshot-requested",
        "config-changed",
        "mcp-oauth-start",
    ];
    KNOWN.iter().find(|k| **k == kind).copied().unwrap_or("other")
}

async fn dispatch(handle: &Handle, api: &Api, refresh: &Notify, kind: &str, payload: Value) {
    let text = |key: &str| payload[key].as_str().unwrap_or_default().to_owned();
    match kind {
        "session-created" | "session-closed" | "term-alias-assigned" => refresh.notify_one(),
        "pty-parsed" => {
            refresh.notify_one();
            if let Some(question) = question_of(&payload) {
                let mut snap = handle.snapshot.locked();
                snap.questions.push(question);
                let excess = snap.questions.len().saturating_sub(QUESTIONS_KEPT);
                snap.questions.drain(..excess);
            } else {
                return;
            }
        }
        "progress-recorded" => {
            let mut snap = handle.snapshot.locked();
            snap.journal.push_back(payload);
            while snap.journal.len() > JOURNAL_KEPT {
                snap.journal.pop_front();
            }
        }
        "peer-registered" | "peer-unregistered" => handle.peers.wake(),
        // An ACP connection changed state or a question came or went: refresh the view's lists.
        "acp-notice" => handle.acp.wake(),
        "mcp-toast" => {
            toast(handle, &text("title"), &text("message"), payload["level"].as_str().unwrap_or("info"));
            if let Some(sound) = payload["sound"].as_str() {
                play(sound);
            }
        }
        "ui-tab" => open_tab(handle, api, &payload).await,
        "mcp-oauth-start" => match crate::links::authorization(&payload) {
            Ok((name, url)) => match open_in_browser(&url) {
                Ok(()) => {
                    toast(handle, &format!("Authorize {name}"), "the authorization page is open in the browser", "info")
                }
                Err(why) => toast(handle, &format!("Authorize {name}"), &format!("{why}; open {url}"), "warn"),
            },
            Err(why) => toast(handle, "Authorize", &why, "warn"),
        },
        "ui-confirm-requested" => {
            if let Some(confirm) = confirm_of(&payload) {
                let mut snap = handle.snapshot.locked();
                snap.confirms.retain(|c| c.id != confirm.id);
                snap.confirms.push(confirm);
            }
        }
        "ui-confirm-resolved" => handle.snapshot.locked().confirms.retain(|c| c.id != text("id")),
        "ui-screenshot-requested" => handle.snapshot.locked().screenshots.push(text("id")),
        _ => return,
    }
    handle.repaint.request();
}

/// A `pty-parsed` event that asks the person something: (session id, the question's text). Any
/// program's question counts, not only a known agent's (the daemon flags a program blocked
/// reading the terminal after a question).
fn question_of(payload: &Value) -> Option<(String, String)> {
    let parsed = &payload["parsed"];
    let text = match parsed["type"].as_str()? {
        "question" => parsed["prompt_text"].as_str(),
        "choice-prompt" => parsed["title"].as_str(),
        _ => return None,
    };
    Some((payload["session_id"].as_str()?.to_owned(), text.unwrap_or("waiting for input").to_owned()))
}

fn confirm_of(payload: &Value) -> Option<Confirm> {
    let text = |key: &str| payload[key].as_str().unwrap_or_default().to_owned();
    Some(Confirm {
        id: payload["id"].as_str()?.to_owned(),
        title: text("title"),
        message: text("message"),
        requester: text("requester"),
        kind: text("kind"),
        expires_at: Instant::now() + Duration::from_millis(payload["expires_in_ms"].as_u64().unwrap_or(300_000)),
    })
}

pub(super) fn toast(handle: &Handle, title: &str, message: &str, level: &str) {
    let mut snap = handle.snapshot.locked();
    snap.toasts.push(Toast { title: title.into(), message: message.into(), level: level.into(), at: Instant::now() });
    let excess = snap.toasts.len().saturating_sub(TOASTS_KEPT);
    snap.toasts.drain(..excess);
    drop(snap);
    handle.repaint.request();
}

/// The toast's sound through the desktop's own sound theme (freedesktop names), when a player
/// and the sound are present; otherwise the toast is visual only.
fn play(sound: &str) {
    let file = match sound {
        "question" | "attention" => "dialog-question",
        "completion" => "complete",
        "error" => "dialog-error",
        "warning" => "dialog-warning",
        _ => "message",
    };
    let path = format!("/usr/share/sounds/freedesktop/stereo/{file}.oga");
    if std::path::Path::new(&path).exists() {
        let _ = std::process::Command::new("paplay")
            .arg(path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}

/// A tab request: web and file URLs go to the system browser, `tuic://edit/<path>?line=N` and
/// `tuic://open/<path>` to the user's editor through the daemon; inline HTML cannot be shown here.
async fn open_tab(handle: &Handle, api: &Api, payload: &Value) {
    let title = payload["title"].as_str().unwrap_or("tab");
    let Some(url) = payload["url"].as_str() else {
        toast(handle, title, "an HTML tab was requested; tuic-gui does not render HTML", "info");
        return;
    };
    let outcome = match crate::links::classify(url) {
        crate::links::Link::Browser(url) => open_in_browser(&url).map(|()| format!("opened {url}")),
        crate::links::Link::Editor { path, line } => {
            let mut body = json!({"path": path, "app": "ide"});
            if let Some(line) = line {
                body["line"] = json!(line);
            }
            match api.send(reqwest::Method::POST, "/agents/open-in-app", &body).await {
                Ok(_) => Ok(format!("opened {path} in the editor")),
                Err(e) => Err(format!("cannot open {path}: {e}")),
            }
        }
        crate::links::Link::Unsupported(why) => Err(why),
    };
    match outcome {
        Ok(message) => toast(handle, title, &message, "info"),
        Err(message) => toast(handle, title, &message, "warn"),
    }
}

/// Opens `url` in the system browser.
fn open_in_browser(url: &str) -> Result<(), String> {
    std::process::Command::new("xdg-open")
        .arg(url)
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot open {url}: xdg-open: {e}"))
}
