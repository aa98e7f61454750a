//! The shared progress journal's writers: entries from `progress` reports and `intent` entries
//! tuicd records itself from observed markers ([`record_intents`], fed by `/events`). Project and
//! agent come from the reporting PTY: the repository root of its working directory and its spawn
//! name (else its agent type and alias).

use std::path::Path;

use serde_json::Value;

use super::journal::{Entry, now_ms};
use super::state::AgentCounters;
use crate::session::Session;
use crate::state::App;

/// The repository root of `cwd` (nearest ancestor with `.git`), else `cwd` itself.
pub fn project_of(cwd: &Path) -> String {
    cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(cwd).display().to_string()
}

/// The journal's name for the agent in `session`.
pub fn agent_name(app: &App, session: &Session) -> String {
    if let Some(info) = app.agents.spawn_info(&session.id) {
        return info.name;
    }
    let kind = super::AgentLink::of(session).and_then(|l| l.adapter()).map_or("shell", |a| a.id);
    format!("{kind}-{}", session.alias)
}

/// Appends to the journal and tells `/events` (`progress-recorded`).
pub fn append(app: &App, entry: &Entry) -> std::io::Result<()> {
    {
        let journal = app.agents.journal(&app.config_dir);
        journal.as_ref().expect("opened").append(entry)?;
    }
    AgentCounters::bump(&app.agents.counters.progress_recorded);
    app.events.publish(proto::events::PROGRESS_RECORDED, entry);
    Ok(())
}

/// Writes an `intent` entry for every `intent` engine event on `/events`, until shutdown.
pub async fn record_intents(app: App) {
    let mut subscription = app.events.subscribe(None);
    loop {
        let event = tokio::select! {
            () = app.stopping() => return,
            received = subscription.live.recv() => match received {
                Ok(event) => event,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "intent journal fell behind /events");
                    continue;
                }
                Err(_) => return,
            },
        };
        if event.kind != proto::events::PTY_PARSED {
            continue;
        }
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else { continue };
        if data["parsed"]["type"] != "intent" {
            continue;
        }
        let Some(session) = data["session_id"].as_str().and_then(|id| app.sessions.resolve(id).ok()) else { continue };
        let entry = Entry {
            id: uuid::Uuid::new_v4().to_string(),
            ts: now_ms(),
            project: project_of(&session.cwd),
            agent: agent_name(&app, &session),
            kind: "intent".into(),
            text: data["parsed"]["text"].as_str().unwrap_or_default().to_owned(),
            step: data["parsed"]["title"].as_str().map(str::to_owned),
            session_id: Some(session.id.clone()),
        };
        let writer = app.clone();
        let _ = tokio::task::spawn_blocking(move || {
            if let Err(e) = append(&writer, &entry) {
                tracing::warn!(error = %e, "cannot append an intent to the progress journal");
            }
        })
        .await;
    }
}
