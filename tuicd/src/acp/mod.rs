//! ACP: tuicd as the client of an agent that speaks the Agent Client Protocol (JSON-RPC 2.0, one
//! message per line on the agent's stdin and stdout), so a person can drive it from the phone or
//! the window over HTTP and a WebSocket.
//!
//! - [`Acp`] holds the connections. Each [`connection::Connection`] runs one agent process at a
//!   time (a generation); `reconnect` settles it and starts the next. The command is the
//!   `ego_executable` setting, read at each launch by the caller, never taken from a request.
//! - Everything the agent writes and everything tuicd writes to it is appended, in order, to the
//!   connection's bounded [`journal::Journal`]; the stream reads it from any retained sequence.
//! - The agent's questions (permission requests, elicitations) wait as interactions until a person
//!   answers; tuicd advertises no file-system or terminal capability, so the agent uses its own
//!   tools and tuicd never acts on its behalf.
//! - Lines that are not JSON-RPC, or are over [`ACP_MESSAGE_MAX_BYTES`], are journaled as
//!   `invalid` and counted; a flood of questions past [`ACP_INTERACTIONS_MAX`] is answered with an
//!   error. A hostile agent costs bounded memory and leaves the daemon serving.
//!
//! Its inputs are explicit: the event bus (for the low-frequency `acp-notice`) and where to keep
//! the agents' stderr. The protocol's types come from `agent-client-protocol-schema`.
//!
//! [`ACP_MESSAGE_MAX_BYTES`]: crate::limits::ACP_MESSAGE_MAX_BYTES
//! [`ACP_INTERACTIONS_MAX`]: crate::limits::ACP_INTERACTIONS_MAX

pub(crate) mod connection;
mod generation;
pub(crate) mod journal;
pub(crate) mod requests;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;

pub(crate) use connection::Connection;
pub(crate) use generation::Launch;

use crate::events::EventBus;
use crate::limits::ACP_MAX_CONNECTIONS;
use crate::lock::Recover;

#[derive(Debug, thiserror::Error)]
pub(crate) enum AcpError {
    /// The agent could not be started (not found, not executable, ...).
    #[error("{0}")]
    Launch(String),
    /// The agent answered a JSON-RPC error.
    #[error("the agent answered error {code}: {message}")]
    Rpc { code: i64, message: String, data: Option<serde_json::Value> },
    /// The agent wrote something that breaks the protocol.
    #[error("{0}")]
    Protocol(String),
    #[error("{0}")]
    Timeout(String),
    /// The agent exited (or is not running).
    #[error("{0}")]
    Closed(String),
    /// The agent did not advertise the capability, or answered method-not-found.
    #[error("unsupported by this agent: {0}")]
    Unsupported(String),
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with the connection's state (not ready, a turn running, answered).
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Invalid(String),
}

/// JSON-RPC's "method not found".
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;

/// The `acp-notice` event: a wake signal on `/events`, never a turn frame.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Notice {
    pub connection: String,
    pub generation: u64,
    pub sequence: u64,
    pub notice: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// Every ACP connection of the daemon.
#[derive(Debug)]
pub(crate) struct Acp {
    connections: Mutex<BTreeMap<String, Arc<Connection>>>,
    next_id: AtomicU64,
    events: Arc<EventBus>,
    /// `<config_dir>/logs/acp`: each connection's stderr log (`<id>.log`, rotated).
    logs_dir: Option<PathBuf>,
}

impl Acp {
    pub(crate) fn new(events: Arc<EventBus>, logs_dir: Option<PathBuf>) -> Self {
        Self { connections: Mutex::default(), next_id: AtomicU64::new(1), events, logs_dir }
    }

    /// Starts a connection: launches `program args` in `cwd` and initializes. The connection is
    /// kept when the agent starts but fails to initialize (settled, with the reason and whatever it
    /// wrote in its journal); the error names it.
    pub(crate) async fn launch(
        &self,
        program: String,
        args: Vec<String>,
        cwd: PathBuf,
    ) -> Result<Arc<Connection>, AcpError> {
        let id = {
            let connections = self.connections.locked();
            if connections.len() >= ACP_MAX_CONNECTIONS {
                return Err(AcpError::Conflict(format!(
                    "{ACP_MAX_CONNECTIONS} ACP connections exist already; disconnect one (DELETE /acp/connections/:id)"
                )));
            }
            format!("acp-{}", self.next_id.fetch_add(1, Ordering::Relaxed))
        };
        let stderr_log = self.logs_dir.as_ref().map(|dir| dir.join(format!("{id}.log")));
        let launch = Launch { program, args, cwd, stderr_log };
        let connection = Arc::new(Connection::new(id.clone(), launch, self.events.clone()));
        self.connections.locked().insert(id.clone(), connection.clone());
        match connection.start_generation().await {
            Ok(()) => Ok(connection),
            Err(AcpError::Launch(reason)) => {
                self.connections.locked().remove(&id);
                Err(AcpError::Launch(reason))
            }
            Err(e) => Err(e),
        }
    }

    pub(crate) fn get(&self, id: &str) -> Result<Arc<Connection>, AcpError> {
        self.connections
            .locked()
            .get(id)
            .cloned()
            .ok_or_else(|| AcpError::NotFound(format!("no ACP connection {id:?}")))
    }

    pub(crate) fn list(&self) -> Vec<Arc<Connection>> {
        self.connections.locked().values().cloned().collect()
    }

    /// Closes the agent's stdin, waits for it to exit (killing it after a grace) and forgets the
    /// connection.
    pub(crate) async fn disconnect(&self, id: &str) -> Result<(), AcpError> {
        let connection = self.get(id)?;
        connection.disconnect().await;
        self.connections.locked().remove(id);
        Ok(())
    }

    /// The agents' process ids: a process descending from one is not a person.
    pub(crate) fn pids(&self) -> Vec<(u32, String)> {
        self.connections.locked().values().filter_map(|c| c.pid().map(|pid| (pid, c.id.clone()))).collect()
    }

    /// Kills every agent (the daemon is stopping).
    pub(crate) fn kill_all(&self) {
        for connection in self.list() {
            let _ = connection.kill();
        }
    }
}
