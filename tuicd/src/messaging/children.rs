//! Spawned children: every managed child gets an identity and inbox at once; its parent link is
//! the caller's identity, or the caller's transport as a pending parent until that caller registers.
//! Lifecycle mail (idle / completed / exited, state only) goes to the parent.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::Notify;
use uuid::Uuid;

use crate::limits::INBOX_CAPACITY;

use super::handle::{Messaging, State};
use super::identity::Identity;
use super::liveness::Liveness;
use super::types::{AgentMessage, LIFECYCLE_FROM_NAME, LIFECYCLE_ID_PREFIX, SendOutcome, TransportId};

#[derive(Clone, Debug, PartialEq, Eq)]
enum Parent {
    Registered(Uuid),
    /// The spawning MCP session had no identity yet; a later register links it.
    Pending(TransportId),
}

#[derive(Debug, Default)]
pub(super) struct Children {
    parent_of: HashMap<Uuid, Parent>,
    /// Lifecycle mail emitted before the pending parent registered, bounded like an inbox.
    pending_mail: HashMap<TransportId, VecDeque<AgentMessage>>,
}

/// A lifecycle state a child reports to its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChildState {
    Idle,
    Completed,
    Exited {
        exit_code: Option<i32>,
    },
    /// A deferred initial prompt was still not typed in when its watchdog fired.
    PromptDeliveryFailed,
}

/// What the spawn response carries about the parent relationship.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SpawnLink {
    /// Present only when the caller is registered: a two-way relationship exists.
    pub parent_session_id: Option<Uuid>,
    /// Present when the caller is not registered, instead of a false guarantee.
    pub warning: Option<String>,
}

#[derive(Serialize)]
struct StateChange<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    state: &'a str,
    session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
}

impl Children {
    pub(super) fn is_parent_of_live(&self, parent: Uuid, live: &dyn Liveness) -> bool {
        self.parent_of.iter().any(|(child, p)| *p == Parent::Registered(parent) && live.live_pty(*child).is_some())
    }

    pub(super) fn reparent(&mut self, from: Uuid, to: Uuid) {
        for parent in self.parent_of.values_mut() {
            if *parent == Parent::Registered(from) {
                *parent = Parent::Registered(to);
            }
        }
    }

    /// An evicted child no longer keeps its parent addressable.
    pub(super) fn forget_child(&mut self, child: Uuid) {
        self.parent_of.remove(&child);
    }

    pub(super) fn forget_pending_parent(&mut self, transport: &TransportId) {
        self.parent_of.retain(|_, p| *p != Parent::Pending(transport.clone()));
        self.pending_mail.remove(transport);
    }
}

impl Messaging {
    /// `agent action=spawn`: registers the child (identity + inbox) and records its parent: the
    /// caller's identity, or its MCP session as a pending parent. A caller without an MCP session
    /// (`caller` is `None`) can never register later, so its child gets no parent at all.
    pub(crate) fn record_spawn(&self, caller: Option<&TransportId>, child: Uuid, name: Option<String>) -> SpawnLink {
        let now = self.now_ms();
        let mut st = self.lock();
        let st = &mut *st;
        st.identities.insert(Identity::new(child, name.clone(), false, now));
        if let (Some(name), Some(identity)) = (name, st.identities.get_mut(child)) {
            identity.name = name;
        }
        st.mailboxes.entry(child).or_default();
        if let Some(parent) = caller.and_then(|c| st.identities.route(c)) {
            st.children.parent_of.insert(child, Parent::Registered(parent));
            return SpawnLink { parent_session_id: Some(parent), warning: None };
        }
        if let Some(caller) = caller {
            st.children.parent_of.insert(child, Parent::Pending(caller.clone()));
        }
        SpawnLink {
            parent_session_id: None,
            warning: Some(
                "caller has no peer identity: the child cannot message you until you call agent action=register"
                    .to_string(),
            ),
        }
    }

    /// The parent identity of a child, once linked.
    #[cfg(test)]
    pub(crate) fn parent_of(&self, child: Uuid) -> Option<Uuid> {
        match self.lock().children.parent_of.get(&child) {
            Some(Parent::Registered(parent)) => Some(*parent),
            _ => None,
        }
    }

    /// Posts a state-only `state_change` to the child's parent. `None` when the child has no parent,
    /// or the parent is pending (the mail is kept and delivered when it registers).
    pub(crate) fn child_lifecycle(&self, child: Uuid, state: ChildState, live: &dyn Liveness) -> Option<SendOutcome> {
        let now = self.now_ms();
        let mut notify: Option<Arc<Notify>> = None;
        let outcome = {
            let mut guard = self.lock();
            let st = &mut *guard;
            let message = lifecycle_message(child, state);
            match st.children.parent_of.get(&child).cloned()? {
                Parent::Registered(parent) => {
                    let (outcome, n) = st.deliver(parent, message, now, live)?;
                    notify = Some(n);
                    Some(outcome)
                }
                Parent::Pending(transport) => {
                    let stash = st.children.pending_mail.entry(transport).or_default();
                    if stash.len() >= INBOX_CAPACITY {
                        stash.pop_front();
                    }
                    stash.push_back(message);
                    None
                }
            }
        };
        if let Some(n) = notify {
            n.notify_waiters();
        }
        self.signal_deliveries();
        outcome
    }
}

impl State {
    /// Links children spawned by `transport` before it had an identity, and moves the lifecycle
    /// mail they emitted meanwhile into the parent's inbox. Returns how many children were linked.
    pub(super) fn link_pending_children(
        &mut self,
        transport: &TransportId,
        parent: Uuid,
        now: u64,
        wake: &mut Vec<Arc<Notify>>,
    ) -> usize {
        let mut linked = 0;
        for p in self.children.parent_of.values_mut() {
            if *p == Parent::Pending(transport.clone()) {
                *p = Parent::Registered(parent);
                linked += 1;
            }
        }
        if let Some(stash) = self.children.pending_mail.remove(transport)
            && let Some(mailbox) = self.mailboxes.get_mut(&parent)
        {
            for message in stash {
                let cursor = mailbox.push(message, super::mailbox::WakeOwner::Wake, now);
                mailbox.wake.on_mail(cursor);
            }
            wake.push(mailbox.notify.clone());
        }
        linked
    }
}

/// The line appended to a child's initial prompt when its parent is registered: the parent's id
/// and how to report back. Lifecycle mail carries state only, so the result must be sent.
pub(crate) fn child_prompt_instruction(parent: Uuid) -> String {
    format!(
        "Your parent agent's tuic_session is {parent}. When you finish or are blocked, report it with: \
         agent action=send to={parent} message=\"<your result or blocker>\""
    )
}

fn lifecycle_message(child: Uuid, state: ChildState) -> AgentMessage {
    let (name, exit_code) = match state {
        ChildState::Idle => ("idle", None),
        ChildState::Completed => ("completed", None),
        ChildState::Exited { exit_code } => ("exited", exit_code),
        ChildState::PromptDeliveryFailed => ("prompt_delivery_failed", None),
    };
    let body = StateChange { kind: "state_change", state: name, session_id: child.to_string(), exit_code };
    AgentMessage {
        id: format!("{LIFECYCLE_ID_PREFIX}{}", Uuid::new_v4()),
        from_tuic_session: child,
        from_name: LIFECYCLE_FROM_NAME.to_string(),
        content: serde_json::to_string(&body).expect("state_change serializes"),
        timestamp: 0,
    }
}
