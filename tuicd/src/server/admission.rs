//! Which TCP connections the remote-access listener keeps: at most
//! [`TCP_CONNECTIONS_PER_ADDRESS`] per address group (an IPv4 address, an IPv6 /64) and
//! [`MAX_CONNECTIONS`] in all. When a cap is hit, the oldest connection under it that has not yet
//! authenticated a request is closed to make room; only when every one has authenticated is the
//! new connection refused. So slow or idle sockets, which never authenticate, can delay the real
//! user by one accept, never lock them out; and a connection that has authenticated is never
//! closed to make room. The IPC listener does not use this: its callers are trusted.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::limits::{MAX_CONNECTIONS, TCP_AUTHENTICATE_WITHIN, TCP_CONNECTIONS_PER_ADDRESS};
use crate::lock::Recover;

/// The group an address is counted in: IPv6 hosts get a /64 each, so one host is one group.
pub(crate) fn address_group(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((v6.to_bits() & !0u128 << 64).into()),
        v4 => v4,
    }
}

#[derive(Debug, Default)]
pub(super) struct Admission {
    /// A std mutex: held for a map update on accept and on close, never across `.await`.
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    /// By id, which is accept order: the first unauthenticated entry is the oldest.
    live: BTreeMap<u64, (IpAddr, Arc<Slot>)>,
    per_group: HashMap<IpAddr, usize>,
}

/// What a connection and its requests share with the table.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    authenticated: AtomicBool,
    closed: Notify,
}

impl Slot {
    /// Called when a request on this connection passed Basic Auth.
    pub(crate) fn authenticated(&self) {
        self.authenticated.store(true, Ordering::Relaxed);
    }

    /// Resolves when the connection must be closed: it was evicted to make room, or it has not
    /// authenticated within [`TCP_AUTHENTICATE_WITHIN`] of being accepted.
    pub(super) async fn must_close(&self) {
        tokio::select! {
            _ = self.closed.notified() => {}
            _ = tokio::time::sleep(TCP_AUTHENTICATE_WITHIN) => {
                if self.authenticated.load(Ordering::Relaxed) {
                    // An authenticated connection is never evicted; it ends on its own.
                    std::future::pending::<()>().await;
                }
            }
        }
    }
}

/// A live connection's place in the table; dropping it (the connection ended) frees the place.
#[derive(Debug)]
pub(super) struct Ticket {
    admission: Arc<Admission>,
    id: u64,
    pub(super) slot: Arc<Slot>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.admission.table.locked().remove(self.id);
    }
}

impl Admission {
    /// Admits a connection from `peer`, closing an older unauthenticated one when a cap is hit;
    /// `None` when it must be refused.
    pub(super) fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<Ticket> {
        self.admit_with(peer, TCP_CONNECTIONS_PER_ADDRESS, MAX_CONNECTIONS)
    }

    fn admit_with(self: &Arc<Self>, peer: IpAddr, per_group: usize, total: usize) -> Option<Ticket> {
        let group = address_group(peer);
        let mut table = self.table.locked();
        if table.per_group.get(&group).copied().unwrap_or(0) >= per_group && !table.evict_oldest(Some(group)) {
            return None;
        }
        if table.live.len() >= total && !table.evict_oldest(None) {
            return None;
        }
        let id = table.next_id;
        table.next_id += 1;
        let slot = Arc::new(Slot::default());
        table.live.insert(id, (group, slot.clone()));
        *table.per_group.entry(group).or_default() += 1;
        Some(Ticket { admission: self.clone(), id, slot })
    }
}

impl Table {
    fn remove(&mut self, id: u64) -> Option<Arc<Slot>> {
        let (group, slot) = self.live.remove(&id)?;
        if let Some(count) = self.per_group.get_mut(&group) {
            *count -= 1;
            if *count == 0 {
                self.per_group.remove(&group);
            }
        }
        Some(slot)
    }

    /// Closes the oldest unauthenticated connection (in `group`, or anywhere); false when none.
    fn evict_oldest(&mut self, group: Option<IpAddr>) -> bool {
        let oldest = self.live.iter().find(|(_, (g, slot))| {
            group.is_none_or(|group| *g == group) && !slot.authenticated.load(Ordering::Relaxed)
        });
        let Some(id) = oldest.map(|(id, _)| *id) else { return false };
        if let Some(slot) = self.remove(id) {
            // `notify_one` stores the wake when the connection's task is not waiting yet.
            slot.closed.notify_one();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_hosts_are_grouped_by_slash_64_and_mapped_ipv4_is_ipv4() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(address_group(a), address_group(b));
        assert_ne!(address_group(a), address_group(c));
        assert_eq!(address_group("::ffff:10.0.0.1".parse().unwrap()), "10.0.0.1".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn a_full_table_closes_the_oldest_unauthenticated_connection_never_an_authenticated_one() {
        let admission = Arc::new(Admission::default());
        let one: IpAddr = "10.0.0.1".parse().unwrap();
        let two: IpAddr = "10.0.0.2".parse().unwrap();
        let first = admission.admit_with(one, 2, 3).unwrap();
        first.slot.authenticated();
        let second = admission.admit_with(one, 2, 3).unwrap();
        // Over the per-address cap: the address's oldest unauthenticated one (`second`) goes.
        let third = admission.admit_with(one, 2, 3).unwrap();
        assert!(!admission.table.locked().live.contains_key(&second.id));
        let fourth = admission.admit_with(two, 2, 3).unwrap();
        // Over the total: the oldest unauthenticated anywhere (`third`), not `first`.
        let fifth = admission.admit_with(two, 2, 3).unwrap();
        assert!(!admission.table.locked().live.contains_key(&third.id));
        assert!(admission.table.locked().live.contains_key(&first.id));
        fourth.slot.authenticated();
        fifth.slot.authenticated();
        // Everyone left has authenticated: a newcomer is refused.
        assert!(admission.admit_with("10.0.0.3".parse().unwrap(), 2, 3).is_none());
        drop(first);
        assert!(admission.admit_with("10.0.0.3".parse().unwrap(), 2, 3).is_some());
    }
}
