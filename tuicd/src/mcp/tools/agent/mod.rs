//! The `agent` tool: spawn agent CLIs in new sessions, see which are installed and what they do,
//! and the peer-messaging actions (register, list_peers, send, inbox, wait; see [`messaging`]).

mod messaging;
mod spawn;
mod wait_set;

use std::collections::BTreeMap;

use serde::Serialize;

use super::action::{NoParams, action};
use super::{CallContext, ToolDef, ToolError, run_blocking};
use messaging::{Inbox, ListPeers, Register, Send, Wait};

pub(crate) const NAME: &str = "agent";

pub(crate) const DESCRIPTION: &str = "AI coding agents in tuicd terminals, and their messages. \
Spawning and messaging are loopback only.

- spawn: an agent CLI with its prompt in a new terminal; the prompt always arrives (as an argument, or typed once a codex or opencode TUI is idle). If you are registered, its idle, completed and exited transitions reach your inbox. Poll task_id with the task tool.
- detect: agent CLIs on the daemon's PATH.
- stats: how many agents run, per kind and state.
- metrics: counters since the daemon started.
- register: names your peer identity.
- list_peers: who you can message: registered peers, oldest first; an alias or session_id is an address too.
- send: messages a peer; the inbox always keeps it and delivery_path says what else carried it.
- inbox: your messages; reading acknowledges.
- wait: blocks until new mail (a burst comes back whole); prefer it to polling. With sessions: until each has an outcome.";

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    description: DESCRIPTION,
    takes_action: true,
    actions: &[
        action!(NAME, "spawn", spawn::Spawn => async spawn::spawn, loopback: true, blocks: true),
        action!(NAME, "detect", NoParams => async detect, loopback: false, blocks: true),
        action!(NAME, "stats", NoParams => sync stats, loopback: false, blocks: false),
        action!(NAME, "metrics", NoParams => sync metrics, loopback: false, blocks: false),
        action!(NAME, "register", Register => sync messaging::register, loopback: true, blocks: false),
        action!(NAME, "list_peers", ListPeers => sync messaging::list_peers, loopback: true, blocks: false),
        action!(NAME, "send", Send => sync messaging::send, loopback: true, blocks: false),
        action!(NAME, "inbox", Inbox => sync messaging::inbox, loopback: true, blocks: false),
        action!(NAME, "wait", Wait => async messaging::wait, loopback: true, blocks: true),
    ],
};

/// The installed agents (one list for MCP and REST).
async fn detect(_: &CallContext, _: NoParams) -> Result<Vec<crate::agent::detect::InstalledAgent>, ToolError> {
    run_blocking("agent action=detect", || Ok(crate::agent::detect::detect_installed())).await
}

#[derive(Debug, Serialize)]
struct Stats {
    agent_sessions: u64,
    by_agent_type: BTreeMap<&'static str, u64>,
    by_agent_state: BTreeMap<String, u64>,
}

fn stats(ctx: &CallContext, _: NoParams) -> Result<Stats, ToolError> {
    let mut stats = Stats { agent_sessions: 0, by_agent_type: BTreeMap::new(), by_agent_state: BTreeMap::new() };
    for session in ctx.app.sessions.list() {
        let Some(status) = crate::agent_runtime::AgentLink::of(&session).map(crate::agent_runtime::AgentLink::status)
        else {
            continue;
        };
        let Some(agent_type) = status.agent_type else { continue };
        stats.agent_sessions += 1;
        *stats.by_agent_type.entry(agent_type).or_default() += 1;
        if let Some(state) = status.agent_state {
            let key = serde_json::to_value(state).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            *stats.by_agent_state.entry(key).or_default() += 1;
        }
    }
    Ok(stats)
}

fn metrics(ctx: &CallContext, _: NoParams) -> Result<crate::agent_runtime::state::AgentMetrics, ToolError> {
    Ok(ctx.app.agents.counters.snapshot())
}
