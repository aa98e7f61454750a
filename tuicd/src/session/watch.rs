//! A subscription to a session from a cursor: the ring's catch-up and the live broadcasts, taken
//! under one lock so they neither overlap nor leave a gap.

use std::sync::Arc;

use tokio::sync::broadcast;

use super::owner::{ExitInfo, Session, SessionEvent};
use super::ring::RingRead;

/// A subscription to a session from a cursor: see [`Session::watch_from`].
pub(crate) struct Watch {
    /// The ring from the cursor (bounded by the read limit).
    pub read: RingRead,
    /// Every event after `read`'s moment.
    pub live: broadcast::Receiver<Arc<SessionEvent>>,
    /// Every event but `Output`, from the same moment (for a client whose output an
    /// [`super::OutputSink`] writes).
    pub notices: broadcast::Receiver<Arc<SessionEvent>>,
    /// Set when the session had already finished (its `Exit` and `Closed` will not come again).
    pub exit: Option<ExitInfo>,
}

impl Session {
    /// Subscribes to both broadcasts and reads the ring from `cursor` under one lock, so the
    /// catch-up and the first live chunk neither overlap nor leave a gap.
    pub(crate) fn watch_from(&self, cursor: Option<u64>, limit: usize) -> Watch {
        let out = self.lock();
        let (live, notices) = (self.live.subscribe(), self.announcer.subscribe_notices());
        let read = out.ring.read_from(cursor.unwrap_or(out.ring.oldest()), limit);
        Watch { read, live, notices, exit: out.exit }
    }
}
