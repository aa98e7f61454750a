//! Who is calling and what they may do: the owner (the socket, whose file permissions are the
//! boundary, or the remote password), or the holder of a scoped token (`tokens.rs`), which is a
//! person's (the phone, the GUI elsewhere) or an agent's.
//!
//! A token reaches every session at one scope, or named sessions each at its own scope:
//! `observe` reads, `drive` also writes and answers (a person's only), `admin` also configures.
//! What each route needs is the router's table (`server/rules.rs`); what each MCP action needs
//! follows from whether it writes ([`Grant::allows_action`]).

pub(crate) mod tokens;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// How far a principal reaches; each scope includes the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Scope {
    /// Reads sessions, their output and the daemon's state.
    Observe,
    /// Also writes into sessions, creates and closes them, and (a person) answers confirmations.
    Drive,
    /// Also changes the configuration, the upstreams and the tokens.
    Admin,
}

impl Scope {
    pub(crate) const NAMES: &'static str = "observe, drive, admin";

    pub(crate) fn parse(name: &str) -> Option<Self> {
        match name {
            "observe" => Some(Self::Observe),
            "drive" => Some(Self::Drive),
            "admin" => Some(Self::Admin),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Observe => "observe",
            Self::Drive => "drive",
            Self::Admin => "admin",
        }
    }
}

/// A person answers confirmations; an agent never does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    Person,
    Agent,
}

/// What a verified token grants its holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TokenGrant {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    pub scope: Scope,
    /// `Some`: only these sessions (canonical ids), each at its own scope.
    pub sessions: Option<BTreeMap<String, Scope>>,
}

/// The caller's rights, decided once per request by the transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Grant {
    /// The socket's user or the holder of the remote password: everything the transport allows.
    Owner,
    Token(Arc<TokenGrant>),
}

impl Grant {
    /// Whether the caller has `need` across the daemon (`session: None`) or on one session.
    pub(crate) fn allows(&self, need: Scope, session: Option<&str>) -> Result<(), String> {
        let Self::Token(token) = self else { return Ok(()) };
        let held = match (&token.sessions, session) {
            (None, _) => token.scope,
            (Some(map), Some(id)) => match map.get(id) {
                Some(scope) => *scope,
                None => {
                    return Err(format!("token {:?} does not reach session {id}", token.name));
                }
            },
            (Some(map), None) => {
                let ids: Vec<&str> = map.keys().map(String::as_str).collect();
                return Err(format!(
                    "token {:?} reaches only session(s) {}; this request is not about one of them",
                    token.name,
                    ids.join(", ")
                ));
            }
        };
        if held >= need {
            Ok(())
        } else {
            Err(format!("token {:?} has scope {}; this needs {}", token.name, held.name(), need.name()))
        }
    }

    /// An MCP action: one that writes (a loopback-only action: input, create, spawn, send...)
    /// needs `drive`, any other `observe`; on the session it names, else across the daemon.
    pub(crate) fn allows_action(&self, writes: bool, session: Option<&str>) -> Result<(), String> {
        self.allows(if writes { Scope::Drive } else { Scope::Observe }, session)
    }

    /// Only a person answers a confirmation, with `drive` on what it is about.
    pub(crate) fn may_answer(&self, session: Option<&str>) -> Result<(), String> {
        if let Self::Token(token) = self
            && token.kind == Kind::Agent
        {
            return Err(format!("token {:?} is an agent's: confirmations are answered by a person", token.name));
        }
        self.allows(Scope::Drive, session)
    }

    /// The token's id, for the journal and for closing its streams when it is revoked.
    pub(crate) fn token_id(&self) -> Option<&str> {
        match self {
            Self::Owner => None,
            Self::Token(token) => Some(&token.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(kind: Kind, scope: Scope, sessions: Option<&[(&str, Scope)]>) -> Grant {
        Grant::Token(Arc::new(TokenGrant {
            id: "t1".into(),
            name: "phone".into(),
            kind,
            scope,
            sessions: sessions.map(|s| s.iter().map(|(id, scope)| ((*id).to_owned(), *scope)).collect()),
        }))
    }

    #[test]
    fn scopes_include_the_ones_before_them() {
        let observe = token(Kind::Person, Scope::Observe, None);
        assert!(observe.allows(Scope::Observe, None).is_ok());
        assert!(observe.allows(Scope::Observe, Some("s1")).is_ok());
        let refused = observe.allows(Scope::Drive, Some("s1")).unwrap_err();
        assert!(refused.contains("scope observe") && refused.contains("needs drive"), "{refused}");
        let admin = token(Kind::Person, Scope::Admin, None);
        assert!(admin.allows(Scope::Drive, None).is_ok() && admin.allows(Scope::Admin, None).is_ok());
        assert!(token(Kind::Person, Scope::Drive, None).allows(Scope::Admin, None).is_err());
        assert!(Grant::Owner.allows(Scope::Admin, None).is_ok());
    }

    #[test]
    fn a_token_for_named_sessions_reaches_each_at_its_own_scope_and_nothing_else() {
        let agent = token(Kind::Agent, Scope::Drive, Some(&[("watched", Scope::Observe), ("mine", Scope::Drive)]));
        assert!(agent.allows_action(false, Some("watched")).is_ok());
        assert!(agent.allows_action(true, Some("watched")).is_err(), "watching is not typing");
        assert!(agent.allows_action(true, Some("mine")).is_ok());
        assert!(agent.allows(Scope::Observe, Some("other")).unwrap_err().contains("does not reach session other"));
        assert!(agent.allows(Scope::Observe, None).unwrap_err().contains("only session(s) mine, watched"));
    }

    #[test]
    fn only_a_person_with_drive_answers() {
        assert!(token(Kind::Agent, Scope::Drive, None).may_answer(None).unwrap_err().contains("agent's"));
        assert!(token(Kind::Person, Scope::Observe, None).may_answer(None).is_err());
        assert!(token(Kind::Person, Scope::Drive, None).may_answer(Some("s")).is_ok());
        assert!(Grant::Owner.may_answer(None).is_ok());
    }
}
