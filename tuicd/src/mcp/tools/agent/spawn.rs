//! `agent action=spawn`'s MCP side: its typed parameters and their checks; the spawn itself is
//! [`crate::agent_runtime::spawn`].

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

use crate::agent_runtime::spawn::{self as domain, SpawnRequest, Spawned, Spawner};
use crate::mcp::tools::{CallContext, ToolError};
use crate::messaging::TransportId;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Spawn {
    /// The task for the agent (not empty).
    pub prompt: String,
    /// claude, codex, gemini, aider, opencode, ... (see action=detect).
    pub agent_type: Option<String>,
    /// An executable: an absolute path or a name in PATH.
    pub binary_path: Option<String>,
    /// Arguments; one containing {prompt} gets the prompt there instead.
    #[serde(default)]
    pub args: Vec<String>,
    /// Passed with the agent's model flag.
    pub model: Option<String>,
    /// Working directory (default: home).
    pub cwd: Option<String>,
    /// Peer and display name, not blank (default: <agent_type>-<alias>).
    pub name: Option<String>,
    /// The PTY's short work description (omitted: the prompt's first 160 chars; "" or null: none).
    #[serde(default, deserialize_with = "present")]
    pub pty_description: Option<Option<String>>,
    /// false turns off this agent's progress tool.
    pub progress_tracking: Option<bool>,
    /// Terminal rows (default 24).
    #[schemars(range(min = 1, max = 500))]
    pub rows: Option<u16>,
    /// Terminal columns (default 80).
    #[schemars(range(min = 1, max = 500))]
    pub cols: Option<u16>,
}

fn present<'de, D: Deserializer<'de>>(de: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(de).map(Some)
}

/// `agent action=spawn`: refuses an empty prompt or a bad name before anything starts.
pub(super) async fn spawn(ctx: &CallContext, p: Spawn) -> Result<Spawned, ToolError> {
    let fail = |message: String| ToolError::new(format!("agent action=spawn: {message}"));
    if p.prompt.trim().is_empty() {
        return Err(fail("prompt must not be empty".into()));
    }
    if let Some(name) = &p.name {
        // The same words as agent action=register for the same mistake: the name becomes a peer's.
        crate::messaging::check_peer_name(name).map_err(|e| fail(e.to_string()))?;
    }
    let request = SpawnRequest {
        prompt: p.prompt,
        agent_type: p.agent_type,
        binary_path: p.binary_path,
        args: p.args,
        model: p.model,
        cwd: p.cwd,
        name: p.name.map(|n| n.trim().to_owned()),
        pty_description: p.pty_description,
        progress_tracking: p.progress_tracking,
        rows: p.rows,
        cols: p.cols,
    };
    let spawner = Spawner { transport: ctx.mcp_session.as_deref().map(TransportId::new), owner: ctx.owner() };
    domain::spawn(&ctx.app, request, spawner).await.map_err(|e| fail(e.0))
}
