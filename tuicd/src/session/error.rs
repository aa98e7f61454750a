//! What can go wrong with a session request. Each variant names what was wrong; the HTTP layer maps
//! it onto `ApiError` and the MCP layer onto a tool error.

#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionError {
    /// No live session or tombstone answers to this reference.
    #[error("no session matches '{0}' (tried PTY id, tuic_session and alias)")]
    NotFound(String),
    /// A request field is out of range or malformed; nothing was changed.
    #[error("{0}")]
    InvalidField(String),
    #[error("the session limit is reached: {max} sessions are running (max_sessions in config.json)")]
    Limit { max: usize },
    /// A live session (or one still starting) already holds this `tuic_session`: two terminals
    /// with one identity would make its address reach only one of them.
    #[error("tuic_session: '{0}' is already held by live session {1}; close it first or omit tuic_session")]
    IdentityInUse(String, String),
    /// The session's child has exited; it no longer accepts input or resizes.
    #[error("session {session_id} has exited{}; it no longer accepts {action}", exit_suffix(*.exit_code))]
    Exited { session_id: String, exit_code: Option<i32>, action: &'static str },
    /// The daemon is handing its sessions to its next process (upgrade in place).
    #[error("the daemon is upgrading in place; create the session again in a moment")]
    HandingOver,
    /// The PTY or the child could not be started.
    #[error("could not start the session: {0}")]
    Spawn(String),
}

fn exit_suffix(code: Option<i32>) -> String {
    code.map(|c| format!(" with code {c}")).unwrap_or_default()
}
