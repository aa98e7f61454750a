//! The identity registry: peer identities keyed by `tuic_session`, and which transports route to
//! them. Pure data plus the ownership rules; mail moves in `mail.rs`, under the same lock
//! (the handle's, `handle.rs`).

use std::collections::{BTreeSet, HashMap};

use uuid::Uuid;

use super::liveness::Liveness;
use super::types::{Attach, MessagingError, TransportId};

#[derive(Clone, Debug)]
pub(super) struct Identity {
    pub tuic_session: Uuid,
    pub name: String,
    pub project: Option<String>,
    pub orchestrator: bool,
    /// Minted by the server for a headerless caller.
    pub generated: bool,
    pub registered_at_ms: u64,
    /// The transport that owns the identity; `None` while nobody is connected.
    pub owner: Option<TransportId>,
    /// Live transports that joined while the owner was live (two bridges in one PTY).
    pub siblings: BTreeSet<TransportId>,
}

impl Identity {
    pub(super) fn new(tuic_session: Uuid, name: Option<String>, generated: bool, now_ms: u64) -> Self {
        let short: String = tuic_session.to_string().chars().take(8).collect();
        Self {
            tuic_session,
            name: name.unwrap_or_else(|| format!("peer-{short}")),
            project: None,
            orchestrator: false,
            generated,
            registered_at_ms: now_ms,
            owner: None,
            siblings: BTreeSet::new(),
        }
    }

    fn has_route(&self, transport: &TransportId) -> bool {
        self.owner.as_ref() == Some(transport) || self.siblings.contains(transport)
    }
}

/// What a register may do with the caller's current binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rebind {
    /// No binding yet, or the same identity.
    Same,
    /// The announced identity has a live PTY and the bound one has not: repair, carrying mail over.
    Repair { from: Uuid },
}

#[derive(Debug, Default)]
pub(super) struct Identities {
    by_id: HashMap<Uuid, Identity>,
    routes: HashMap<TransportId, Uuid>,
    /// Stable generated UUID per headerless transport, so re-registering keeps the address.
    generated: HashMap<TransportId, Uuid>,
}

impl Identities {
    pub(super) fn get(&self, id: Uuid) -> Option<&Identity> {
        self.by_id.get(&id)
    }

    pub(super) fn get_mut(&mut self, id: Uuid) -> Option<&mut Identity> {
        self.by_id.get_mut(&id)
    }

    pub(super) fn contains(&self, id: Uuid) -> bool {
        self.by_id.contains_key(&id)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Identity> {
        self.by_id.values()
    }

    pub(super) fn route(&self, transport: &TransportId) -> Option<Uuid> {
        self.routes.get(transport).copied()
    }

    pub(super) fn insert(&mut self, identity: Identity) {
        self.by_id.entry(identity.tuic_session).or_insert(identity);
    }

    /// The caller's stable generated UUID (minted once per transport).
    pub(super) fn generated_for(&mut self, transport: &TransportId) -> Uuid {
        *self.generated.entry(transport.clone()).or_insert_with(Uuid::new_v4)
    }

    /// The ranking rule. An identity backed by a live PTY outranks one that is not: a caller may
    /// repair onto its real terminal, never wander off one, and two terminal-less identities keep
    /// the original rejection.
    pub(super) fn rank(
        &self,
        transport: &TransportId,
        target: Uuid,
        live: &dyn Liveness,
    ) -> Result<Rebind, MessagingError> {
        let Some(bound) = self.route(transport).filter(|bound| *bound != target) else {
            return Ok(Rebind::Same);
        };
        match (live.live_pty(bound).is_some(), live.live_pty(target).is_some()) {
            (false, true) => Ok(Rebind::Repair { from: bound }),
            (true, _) => Err(MessagingError::WouldLeaveTerminal { bound, requested: target }),
            (false, false) => Err(MessagingError::AlreadyBound { bound }),
        }
    }

    /// The takeover guard for an explicit register: a live owner refuses callers with no route to it.
    pub(super) fn guard_takeover(
        &self,
        transport: &TransportId,
        target: Uuid,
        live: &dyn Liveness,
    ) -> Result<(), MessagingError> {
        let Some(identity) = self.by_id.get(&target) else { return Ok(()) };
        match &identity.owner {
            Some(owner) if !identity.has_route(transport) && live.transport_is_live(owner) => {
                Err(MessagingError::OwnedByLiveSession(target))
            }
            _ => Ok(()),
        }
    }

    /// Routes `transport` to `target` (which must exist). A live owner is joined, never replaced;
    /// a stale one is reclaimed. Any previous route of the transport is dropped first.
    pub(super) fn attach(&mut self, transport: &TransportId, target: Uuid, live: &dyn Liveness) -> Attach {
        if let Some(previous) = self.route(transport).filter(|p| *p != target) {
            self.detach(transport, previous);
        }
        let identity = self.by_id.get_mut(&target).expect("attach target exists");
        let attach = if identity.has_route(transport) {
            Attach::Refreshed
        } else {
            match identity.owner.clone() {
                None => {
                    identity.owner = Some(transport.clone());
                    Attach::Bound
                }
                Some(owner) if live.transport_is_live(&owner) => {
                    identity.siblings.insert(transport.clone());
                    Attach::Joined
                }
                Some(stale) => {
                    identity.owner = Some(transport.clone());
                    self.routes.remove(&stale);
                    Attach::Reclaimed
                }
            }
        };
        self.routes.insert(transport.clone(), target);
        attach
    }

    /// Removes one transport's route. When it owned the identity, the first remaining sibling is
    /// promoted (ownership passes only when the owner is gone, never between live siblings).
    /// Returns the identity it routed to and whether that identity has no route left.
    pub(super) fn detach_transport(&mut self, transport: &TransportId) -> Option<(Uuid, bool)> {
        self.generated.remove(transport);
        let id = self.routes.get(transport).copied()?;
        self.detach(transport, id);
        let orphaned = self.by_id.get(&id).is_none_or(|i| i.owner.is_none() && i.siblings.is_empty());
        Some((id, orphaned))
    }

    fn detach(&mut self, transport: &TransportId, id: Uuid) {
        self.routes.remove(transport);
        let Some(identity) = self.by_id.get_mut(&id) else { return };
        identity.siblings.remove(transport);
        if identity.owner.as_ref() == Some(transport) {
            identity.owner = identity.siblings.pop_first();
        }
    }

    /// Deletes an identity and every route to it (retire on repair, or reap).
    pub(super) fn retire(&mut self, id: Uuid) -> Option<Identity> {
        let identity = self.by_id.remove(&id)?;
        self.routes.retain(|_, routed| *routed != id);
        Some(identity)
    }
}
