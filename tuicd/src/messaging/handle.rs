//! The `Messaging` handle: one `Arc` around one std `Mutex`, plus identity operations
//! (bind at initialize, register, list_peers, reap).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;
use uuid::Uuid;

use super::children::Children;
use super::clock::Clock;
use super::identity::{Identities, Identity, Rebind};
use super::liveness::Liveness;
use super::mailbox::{Mailbox, WakeOwner};
use super::reaper::{ReapOutcome, peer_identity_is_reapable};
use super::types::{MailWake, MessagingError, PeerEntry, RegisterOutcome, RegisterRequest, TransportId};
use crate::lock::Recover;

/// Cheap to clone; every clone sees the same state.
#[derive(Clone)]
pub(crate) struct Messaging {
    pub(super) shared: Arc<Shared>,
}

impl std::fmt::Debug for Messaging {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messaging").finish_non_exhaustive()
    }
}

pub(super) struct Shared {
    /// A std mutex, not tokio's: every critical section is a few map operations (microseconds) and
    /// none spans an `.await`. One lock for identities and mailboxes is what makes "retire" and
    /// "send's recipient check" atomic with respect to each other.
    pub(super) state: Mutex<State>,
    pub(super) clock: Arc<dyn Clock>,
    /// Signalled when some recipient has terminal-owned mail for the SSE / PTY delivery task.
    pub(super) deliveries: Notify,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) identities: Identities,
    /// Exactly one mailbox per identity: created with it, removed with it.
    pub(super) mailboxes: HashMap<Uuid, Mailbox>,
    pub(super) children: Children,
    pub(super) pending_delivery: BTreeSet<Uuid>,
}

impl Messaging {
    pub(crate) fn new(clock: Arc<dyn Clock>) -> Self {
        let shared = Shared { state: Mutex::new(State::default()), clock, deliveries: Notify::new() };
        Self { shared: Arc::new(shared) }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind, still consistent per operation.
        self.shared.state.locked()
    }

    pub(super) fn now_ms(&self) -> u64 {
        self.shared.clock.now_ms()
    }

    /// The identity a transport routes to.
    pub(crate) fn identity_of(&self, transport: &TransportId) -> Option<Uuid> {
        self.lock().identities.route(transport)
    }

    /// Step 0, at `initialize`: binds the transport to the `x-tuic-session` identity, creating the
    /// peer. A live owner is joined (a second bridge in the same PTY becomes routable), a stale one
    /// reclaimed, an existing display name preserved. The same ranking as register applies when the
    /// transport is already bound elsewhere.
    pub(crate) fn bind_transport(
        &self,
        transport: &TransportId,
        tuic_session: Uuid,
        live: &dyn Liveness,
    ) -> Result<RegisterOutcome, MessagingError> {
        let request = RegisterRequest { tuic_session: Some(tuic_session), ..RegisterRequest::default() };
        self.register_inner(transport, request, live, false)
    }

    /// `agent action=register`: an optional rename / project / role update, the repair onto a real
    /// terminal, and `replaces=<old>` carry-over.
    pub(crate) fn register(
        &self,
        transport: &TransportId,
        request: RegisterRequest,
        live: &dyn Liveness,
    ) -> Result<RegisterOutcome, MessagingError> {
        if let Some(name) = &request.name {
            super::types::check_peer_name(name)?;
        }
        self.register_inner(transport, request, live, true)
    }

    fn register_inner(
        &self,
        transport: &TransportId,
        request: RegisterRequest,
        live: &dyn Liveness,
        guard_takeover: bool,
    ) -> Result<RegisterOutcome, MessagingError> {
        let now = self.now_ms();
        let mut wake = Vec::new();
        let outcome = {
            let mut guard = self.lock();
            let st = &mut *guard;
            let current = st.identities.route(transport);
            let target = match (request.tuic_session, current) {
                (Some(id), _) | (None, Some(id)) => id,
                (None, None) => st.identities.generated_for(transport),
            };
            // Every check before any mutation: a refused register changes nothing.
            let rebind = st.identities.rank(transport, target, live)?;
            if guard_takeover && request.tuic_session.is_some() {
                st.identities.guard_takeover(transport, target, live)?;
            }
            if !st.identities.contains(target) {
                let generated = request.tuic_session.is_none();
                st.identities.insert(Identity::new(target, request.name.clone(), generated, now));
                st.mailboxes.entry(target).or_default();
            }
            let mut superseded_identity = None;
            let mut mail_migrated = None;
            let mut mail_stranded = None;
            let mut identity_warning = None;
            if let Rebind::Repair { from } = rebind {
                mail_migrated = Some(st.migrate(from, target, now, &mut wake));
                superseded_identity = Some(from);
            }
            let attach = st.identities.attach(transport, target, live);
            if let Some(old) = request.replaces.filter(|old| *old != target && Some(*old) != superseded_identity) {
                match st.identities.get(old) {
                    None => {
                        identity_warning = Some(format!("replaces: identity {old} is not registered; nothing moved"))
                    }
                    Some(identity) => {
                        let live_owner =
                            identity.owner.as_ref().is_some_and(|o| o != transport && live.transport_is_live(o));
                        if live.live_pty(old).is_some() || live_owner {
                            // A reachable peer keeps its inbox: taking it would strand a working agent.
                            mail_stranded = Some(st.mailboxes.get(&old).map_or(0, Mailbox::unread_count));
                            identity_warning = Some(format!(
                                "identity {old} is still reachable (live terminal or connection); its mail was left in place"
                            ));
                        } else {
                            let moved = st.migrate(old, target, now, &mut wake);
                            mail_migrated = Some(mail_migrated.unwrap_or(0) + moved);
                            superseded_identity = Some(old);
                        }
                    }
                }
            }
            let linked_children = st.link_pending_children(transport, target, now, &mut wake);
            let identity = st.identities.get_mut(target).expect("target exists");
            if let Some(name) = request.name {
                identity.name = name;
            }
            if request.project.is_some() {
                identity.project = request.project;
            }
            if let Some(orchestrator) = request.orchestrator {
                identity.orchestrator = orchestrator;
            }
            let terminal = live.live_pty(target).is_some();
            RegisterOutcome {
                tuic_session: target,
                name: identity.name.clone(),
                identity_generated: identity.generated,
                terminal,
                orchestrator: identity.orchestrator,
                mail_wake: if terminal { MailWake::ManagedPtyLifecycle } else { MailWake::None },
                linked_children,
                attach,
                superseded_identity,
                mail_migrated,
                mail_stranded,
                identity_warning,
            }
        };
        wake.iter().for_each(|n| n.notify_waiters());
        Ok(outcome)
    }

    /// `agent action=list_peers`, optionally filtered by project; oldest registration first.
    pub(crate) fn list_peers(&self, project: Option<&str>, live: &dyn Liveness) -> Vec<PeerEntry> {
        let st = self.lock();
        let mut peers: Vec<_> = st
            .identities
            .iter()
            .filter(|i| project.is_none() || i.project.as_deref() == project)
            .map(|i| {
                let terminal = live.live_pty(i.tuic_session);
                let entry = PeerEntry {
                    tuic_session: i.tuic_session,
                    name: i.name.clone(),
                    orchestrator: i.orchestrator,
                    project: i.project.clone(),
                    alias: terminal.as_ref().and_then(|t| t.alias.clone()),
                    session_id: terminal.map(|t| t.session_id),
                };
                (i.registered_at_ms, entry)
            })
            .collect();
        peers.sort_by_key(|(registered_at_ms, entry)| (*registered_at_ms, entry.tuic_session));
        peers.into_iter().map(|(_, entry)| entry).collect()
    }

    /// Called when the MCP layer deletes or TTL-reaps a protocol session. Its routes go; an identity
    /// left with no route is evicted unless it is still addressable (owns a live PTY, or is the
    /// parent of a live session). Retained ids are logged.
    pub(crate) fn reap_transport(&self, transport: &TransportId, live: &dyn Liveness) -> ReapOutcome {
        let mut outcome = ReapOutcome::default();
        let mut wake = Vec::new();
        {
            let mut guard = self.lock();
            let st = &mut *guard;
            st.children.forget_pending_parent(transport);
            if let Some((id, true)) = st.identities.detach_transport(transport) {
                st.evict_if_unreachable(id, live, &mut outcome, &mut wake);
            }
        }
        log_reap(&outcome);
        wake.iter().for_each(|n| n.notify_waiters());
        outcome
    }

    /// Re-checks identities that have no route (retained earlier, or children whose bridge never
    /// connected) and evicts those no longer addressable. Run after each reaper pass.
    pub(crate) fn sweep_unrouted(&self, live: &dyn Liveness) -> ReapOutcome {
        let mut outcome = ReapOutcome::default();
        let mut wake = Vec::new();
        {
            let mut guard = self.lock();
            let st = &mut *guard;
            let unrouted: Vec<Uuid> = st
                .identities
                .iter()
                .filter(|i| i.owner.is_none() && i.siblings.is_empty())
                .map(|i| i.tuic_session)
                .collect();
            for id in unrouted {
                st.evict_if_unreachable(id, live, &mut outcome, &mut wake);
            }
        }
        log_reap(&outcome);
        wake.iter().for_each(|n| n.notify_waiters());
        outcome
    }
}

fn log_reap(outcome: &ReapOutcome) {
    if !outcome.retained.is_empty() {
        tracing::info!(retained = ?outcome.retained, "reaper kept identities that are still addressable");
    }
}

impl State {
    /// Moves `from`'s unobserved mail into `to` and retires `from`, in the caller's critical section:
    /// a send to `from` either landed before (and moves here) or comes after and is refused.
    pub(super) fn migrate(&mut self, from: Uuid, to: Uuid, now: u64, wake: &mut Vec<Arc<Notify>>) -> usize {
        self.identities.retire(from);
        let Some(mut old) = self.mailboxes.remove(&from) else { return 0 };
        wake.push(old.notify.clone());
        let unread = old.drain_unread();
        let moved = unread.len();
        self.children.reparent(from, to);
        let target = self.mailboxes.entry(to).or_default();
        for message in unread {
            // Carried-over mail is announced by the register response (mail_migrated), not re-typed.
            target.push(message, WakeOwner::InboxOnly, now);
        }
        if moved > 0 {
            wake.push(target.notify.clone());
        }
        moved
    }

    fn evict_if_unreachable(
        &mut self,
        id: Uuid,
        live: &dyn Liveness,
        outcome: &mut ReapOutcome,
        wake: &mut Vec<Arc<Notify>>,
    ) {
        let owns_live_pty = live.live_pty(id).is_some();
        let parent_of_live_session = self.children.is_parent_of_live(id, live);
        if peer_identity_is_reapable(owns_live_pty, parent_of_live_session) {
            self.identities.retire(id);
            if let Some(mailbox) = self.mailboxes.remove(&id) {
                wake.push(mailbox.notify.clone());
            }
            self.pending_delivery.remove(&id);
            self.children.forget_child(id);
            outcome.evicted.push(id);
        } else {
            outcome.retained.push(id);
        }
    }
}
