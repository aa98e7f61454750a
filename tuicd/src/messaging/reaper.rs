//! Identity outlives its transport: which identities the 1 h protocol-session reaper may delete.

use uuid::Uuid;

/// An identity is reapable only when nothing can still address it: it owns no live PTY and no live
/// session records it as parent. Both are bounded by live sessions, so retention cannot grow.
pub(crate) fn peer_identity_is_reapable(owns_live_pty: bool, parent_of_live_session: bool) -> bool {
    !owns_live_pty && !parent_of_live_session
}

/// What reaping one protocol session did to identities; `retained` is logged at info.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReapOutcome {
    pub evicted: Vec<Uuid>,
    pub retained: Vec<Uuid>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_unaddressable_identity_is_reapable() {
        assert!(peer_identity_is_reapable(false, false));
        assert!(!peer_identity_is_reapable(true, false));
        assert!(!peer_identity_is_reapable(false, true));
        assert!(!peer_identity_is_reapable(true, true));
    }
}
