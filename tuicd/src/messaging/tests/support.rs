//! A fake daemon view: PTYs, aliases, agent facts and transport liveness, all settable by tests.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use uuid::Uuid;

use crate::messaging::clock::ManualClock;
use crate::messaging::{
    AgentKind, Lifecycle, Liveness, Messaging, RegisterRequest, TerminalFacts, TerminalRef, TransportId,
};

#[derive(Default)]
struct WorldState {
    ptys: HashMap<Uuid, TerminalRef>,
    facts: HashMap<Uuid, TerminalFacts>,
    live_transports: HashSet<TransportId>,
}

#[derive(Default)]
pub(super) struct World {
    state: Mutex<WorldState>,
}

impl World {
    /// A live managed PTY for `id`, with session id `pty-<n>` and alias `tu-<n>`.
    pub(super) fn add_pty(&self, id: Uuid, n: usize, agent: AgentKind, lifecycle: Lifecycle) {
        let mut st = self.state.lock().unwrap();
        st.ptys.insert(id, TerminalRef { session_id: format!("pty-{n}"), alias: Some(format!("tu-{n}")) });
        st.facts.insert(id, TerminalFacts { agent, lifecycle, composer_empty: true, channel_stream: false });
    }

    pub(super) fn kill_pty(&self, id: Uuid) {
        let mut st = self.state.lock().unwrap();
        st.ptys.remove(&id);
        st.facts.remove(&id);
    }

    pub(super) fn set_facts(&self, id: Uuid, change: impl FnOnce(&mut TerminalFacts)) {
        change(self.state.lock().unwrap().facts.get_mut(&id).expect("pty exists"));
    }

    pub(super) fn set_live(&self, transport: &TransportId, live: bool) {
        let mut st = self.state.lock().unwrap();
        if live {
            st.live_transports.insert(transport.clone());
        } else {
            st.live_transports.remove(transport);
        }
    }
}

impl Liveness for World {
    fn live_pty(&self, tuic_session: Uuid) -> Option<TerminalRef> {
        self.state.lock().unwrap().ptys.get(&tuic_session).cloned()
    }

    fn terminal_identity(&self, address: &str) -> Option<Uuid> {
        let st = self.state.lock().unwrap();
        st.ptys.iter().find(|(_, t)| t.session_id == address || t.alias.as_deref() == Some(address)).map(|(id, _)| *id)
    }

    fn transport_is_live(&self, transport: &TransportId) -> bool {
        self.state.lock().unwrap().live_transports.contains(transport)
    }

    fn terminal_facts(&self, tuic_session: Uuid) -> Option<TerminalFacts> {
        self.state.lock().unwrap().facts.get(&tuic_session).copied()
    }
}

pub(super) fn hub() -> (Messaging, Arc<ManualClock>, World) {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    (Messaging::new(clock.clone()), clock, World::default())
}

pub(super) fn t(name: &str) -> TransportId {
    TransportId::new(name)
}

/// A headerless peer: registers a generated identity on a live transport and returns it.
pub(super) fn external(m: &Messaging, world: &World, transport: &str, name: &str) -> Uuid {
    let transport = t(transport);
    world.set_live(&transport, true);
    let request = RegisterRequest { name: Some(name.into()), ..RegisterRequest::default() };
    m.register(&transport, request, world).unwrap().tuic_session
}

/// A peer in a managed PTY, auto-bound at initialize through `x-tuic-session`.
pub(super) fn managed(
    m: &Messaging,
    world: &World,
    transport: &str,
    n: usize,
    agent: AgentKind,
    lifecycle: Lifecycle,
) -> Uuid {
    let id = Uuid::new_v4();
    world.add_pty(id, n, agent, lifecycle);
    let transport = t(transport);
    world.set_live(&transport, true);
    m.bind_transport(&transport, id, world).unwrap();
    id
}
