//! What each route needs of its caller: one rule per (route, method), written beside the handler
//! in the router's table (`router.rs`), which cannot name a handler without one. The owner (the
//! socket, the remote password) passes every rule but [`Rule::Local`]'s address check; a token
//! passes what its scope reaches (see [`crate::principals`]).

use crate::http::{ApiError, Caller};
use crate::principals::Scope;
use crate::state::App;

#[derive(Debug, Clone, Copy)]
pub(super) enum Rule<'a> {
    /// Whoever the transport let in: the daemon's health, the phone page's files, and the MCP
    /// endpoint, whose every action checks the caller's grant itself (`mcp/tools`).
    Any,
    /// `Scope` across the daemon.
    Daemon(Scope),
    /// `Scope` on the session the path names (its id, `tuic_session` or alias).
    Session(Scope, &'a str),
    /// `Scope` across the daemon, and a caller on the socket or a loopback address: writes that
    /// can plant what the daemon or git later runs (`.git/config`, hooks) are never remote.
    Local(Scope),
}

pub(super) const ANY: Rule<'static> = Rule::Any;
pub(super) const OBSERVE: Rule<'static> = Rule::Daemon(Scope::Observe);
pub(super) const DRIVE: Rule<'static> = Rule::Daemon(Scope::Drive);
pub(super) const ADMIN: Rule<'static> = Rule::Daemon(Scope::Admin);
pub(super) const LOCAL_DRIVE: Rule<'static> = Rule::Local(Scope::Drive);
pub(super) const LOCAL_ADMIN: Rule<'static> = Rule::Local(Scope::Admin);

/// Reads session `id`.
pub(super) fn observe(id: &str) -> Rule<'_> {
    Rule::Session(Scope::Observe, id)
}

/// Writes into session `id`.
pub(super) fn drive(id: &str) -> Rule<'_> {
    Rule::Session(Scope::Drive, id)
}

/// Admits the caller to a route under `rule`, or the error that names what it lacks.
pub(super) fn admit(app: &App, caller: &Caller, rule: Rule<'_>) -> Result<(), ApiError> {
    match rule {
        Rule::Any => Ok(()),
        Rule::Daemon(need) => caller.grant.allows(need, None).map_err(ApiError::Forbidden),
        Rule::Session(need, reference) => {
            if caller.grant.token_id().is_none() {
                return Ok(());
            }
            // An unknown session is the handler's 404 only for callers who may see every session.
            caller.grant.allows(need, Some(&app.sessions.canonical_id(reference))).map_err(ApiError::Forbidden)
        }
        Rule::Local(need) => {
            caller.require_loopback("this write (it can plant what git or the daemon later runs)")?;
            caller.grant.allows(need, None).map_err(ApiError::Forbidden)
        }
    }
}
