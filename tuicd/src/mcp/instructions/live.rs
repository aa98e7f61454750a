//! The one impure step: reading the daemon's live state into an [`InstructionContext`].

use std::path::Path;

use super::{CollapseMode, InstructionContext, LivePeer, LiveSession};
use crate::messaging_runtime::view::View;
use crate::state::App;

/// What `initialize` knows about the connecting client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Connecting<'a> {
    pub client_name: Option<&'a str>,
    /// The session's client asked for the collapsed surface for itself.
    pub client_collapse: bool,
    pub tuic_session: Option<&'a str>,
    pub reconnected: bool,
}

/// The context for a client connecting now.
pub(crate) fn context(app: &App, client: Connecting<'_>) -> InstructionContext {
    let config = app.config.get();
    let collapse = if config.collapse_tools {
        CollapseMode::Config
    } else if client.client_collapse {
        CollapseMode::Client
    } else {
        CollapseMode::Off
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let shown = |path: &Path| match home.as_deref().and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    };
    let mut repos: Vec<String> = Vec::new();
    let mut sessions = Vec::new();
    let mut in_pty = false;
    for session in app.sessions.list() {
        let info = session.info();
        if info.exited {
            continue;
        }
        in_pty |= client.tuic_session == Some(info.tuic_session.as_str());
        let repo = info.repo.as_deref().map(|root| shown(Path::new(root)));
        if let Some(repo) = &repo
            && !repos.contains(repo)
        {
            repos.push(repo.clone());
        }
        sessions.push(LiveSession { alias: info.alias, agent_type: info.agent_type, repo });
    }
    let peers = app
        .peers
        .messaging
        .list_peers(None, &View(app))
        .into_iter()
        .map(|p| LivePeer { name: p.name, alias: p.alias })
        .collect();
    InstructionContext {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        client_name: client.client_name.map(str::to_owned),
        collapse,
        intent_markers: in_pty,
        reconnected: client.reconnected,
        repos,
        sessions,
        peers,
    }
}
