//! [`DriveLoops`]: the sessions an agent loop is driving now (an `ai_terminal_drive_agent` turn:
//! send, wait, read). While one runs, other writes through the `ai_terminal_*` tools are refused
//! on that session, so two outside agents never type into one terminal's turn.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::lock::Recover;

#[derive(Debug, Default)]
pub(crate) struct DriveLoops {
    /// PTY ids; bounded by the live sessions (an entry lives only as long as its lease).
    active: Mutex<HashSet<String>>,
}

impl DriveLoops {
    /// Claims `session_id` for one loop, or `None` when a loop already drives it.
    pub(crate) fn claim(self: &Arc<Self>, session_id: &str) -> Option<DriveLease> {
        self.active
            .locked()
            .insert(session_id.to_owned())
            .then(|| DriveLease { loops: self.clone(), id: session_id.to_owned() })
    }

    pub(crate) fn is_driving(&self, session_id: &str) -> bool {
        self.active.locked().contains(session_id)
    }
}

/// Held for the length of one loop; dropping it frees the session.
#[derive(Debug)]
pub(crate) struct DriveLease {
    loops: Arc<DriveLoops>,
    id: String,
}

impl Drop for DriveLease {
    fn drop(&mut self) {
        self.loops.active.locked().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_loop_per_session_until_its_lease_drops() {
        let loops = Arc::new(DriveLoops::default());
        let lease = loops.claim("a").expect("free");
        assert!(loops.is_driving("a"));
        assert!(loops.claim("a").is_none());
        assert!(loops.claim("b").is_some());
        drop(lease);
        assert!(!loops.is_driving("a"));
        assert!(loops.claim("a").is_some());
    }
}
