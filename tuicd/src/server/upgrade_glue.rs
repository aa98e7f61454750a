//! The daemon's side of upgrade in place (see [`crate::upgrade`]): which parts of the app it hands
//! over, how the next image takes them over, and SIGUSR2.

use std::os::fd::AsFd;

use crate::mcp::protocol_sessions::ClientInfo;
use crate::state::App;
use crate::upgrade::{Inherited, Parts, Refusal, snapshot};

use super::ipc::IpcListener;

/// The capabilities a client may declare that tuicd remembers, as the `&'static str`s it keeps.
const ANSWERS: [&str; 3] = ["sampling", "elicitation", "roots"];

/// Hands everything over and execs; returns only the refusal.
pub(super) async fn run(app: &App, ipc: &IpcListener) -> Refusal {
    let mcp_sessions = app
        .mcp
        .protocol_sessions
        .export()
        .into_iter()
        .map(|(id, client)| snapshot::McpSession {
            id,
            tuic_session: client.tuic_session,
            channels: client.channels,
            collapse_tools: client.collapse_tools,
            name: client.name,
            answers: client.answers.iter().map(|a| a.to_string()).collect(),
        })
        .collect();
    let parts = Parts { sessions: &app.sessions, events: &app.events, mcp_sessions, ipc: ipc.listener.as_fd() };
    crate::upgrade::run(parts, || {
        app.acp.kill_all();
        app.upstreams.stop_all();
    })
    .await
}

/// Takes over what the previous image handed over: the `/events` history, the MCP protocol
/// sessions and every session. Runs before anything is published or served.
pub(super) fn take_over(app: &App, inherited: Inherited) {
    let Inherited { sessions, events, mcp_sessions, from_version, frozen_unix_ms } = inherited;
    app.events.import(events.next_id, events.history);
    app.mcp.protocol_sessions.import(mcp_sessions.into_iter().map(|m| {
        let client = ClientInfo {
            tuic_session: m.tuic_session,
            channels: m.channels,
            collapse_tools: m.collapse_tools,
            name: m.name,
            answers: ANSWERS.into_iter().filter(|a| m.answers.iter().any(|m| m == a)).collect(),
        };
        (m.id, client)
    }));
    let (count, mut adopted) = (sessions.len(), 0);
    for handed in sessions {
        let id = handed.meta.id.clone();
        match app.sessions.adopt(handed) {
            Ok(_) => adopted += 1,
            Err(e) => tracing::warn!(session = %id, error = %e, "a handed-over session could not be taken over"),
        }
    }
    tracing::info!(
        from_version = %from_version, sessions = adopted, of = count,
        output_waited_ms = crate::upgrade::since(frozen_unix_ms).as_millis() as u64,
        "upgraded in place: sessions taken over"
    );
}

/// SIGUSR2 asks for an upgrade, as `POST /daemon/upgrade` does; a refusal is logged.
pub(super) fn on_signal(app: &App, mut signal: tokio::signal::unix::Signal) {
    let app = app.clone();
    tokio::spawn(async move {
        while signal.recv().await.is_some() {
            tracing::info!("SIGUSR2: upgrading in place");
            let refusal = app.upgrades.request().await;
            tracing::warn!(reason = %refusal, "upgrade in place refused");
        }
    });
}
