//! Output sinks: consumers that the reader thread hands each chunk to itself, under the output
//! lock, right after the ring and the broadcast. A WebSocket client on a plain socket is one
//! (`routes/stream_direct.rs`): its output frames are written by the thread that read the bytes,
//! with no hand-off to another thread, while its other frames still come from its task, which then
//! listens to the `notices` broadcast (every event but `Output`) instead of `live`.

use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::broadcast;

use super::owner::{ExitInfo, Session, SessionEvent};
use super::ring::RingRead;

pub trait OutputSink: Send + Sync {
    /// Each chunk from the cursor the sink was attached at, in order, called by the reader thread
    /// under the session's output lock. Must not block and must not take the session's locks.
    fn offer(&self, start: u64, data: &Bytes);
}

/// A subscription to a session from a cursor: see [`Session::watch_from`].
pub struct Watch {
    /// The ring from the cursor (bounded by the read limit).
    pub read: RingRead,
    /// Every event after `read`'s moment.
    pub live: broadcast::Receiver<Arc<SessionEvent>>,
    /// Every event but `Output`, from the same moment.
    pub notices: broadcast::Receiver<Arc<SessionEvent>>,
    /// Set when the session had already finished (its `Exit` and `Closed` will not come again).
    pub exit: Option<ExitInfo>,
}

impl Session {
    /// Subscribes to both broadcasts and reads the ring from `cursor` under one lock, so the
    /// catch-up and the first live chunk neither overlap nor leave a gap.
    pub fn watch_from(&self, cursor: Option<u64>, limit: usize) -> Watch {
        let out = self.lock();
        let (live, notices) = (self.live.subscribe(), self.announcer.subscribe_notices());
        let read = out.ring.read_from(cursor.unwrap_or(out.ring.oldest()), limit);
        Watch { read, live, notices, exit: out.exit }
    }

    /// Attaches `sink` from cursor `at` if the ring ends there, the session has not finished and
    /// `arm` (called under the output lock, so no chunk can come between) agrees. Returns whether
    /// it did: from then on the reader offers the sink every chunk until it is detached or the
    /// session finishes. Attaching an attached sink again only re-arms it.
    pub fn attach_sink<S: OutputSink + 'static>(&self, sink: &Arc<S>, at: u64, arm: impl FnOnce() -> bool) -> bool {
        let mut out = self.lock();
        if out.exit.is_some() || out.ring.total() != at || !arm() {
            return false;
        }
        if !out.sinks.iter().any(|s| std::ptr::addr_eq(Arc::as_ptr(s), Arc::as_ptr(sink))) {
            out.sinks.push(sink.clone());
        }
        true
    }

    pub fn detach_sink<S: OutputSink + 'static>(&self, sink: &Arc<S>) {
        self.lock().sinks.retain(|s| !std::ptr::addr_eq(Arc::as_ptr(s), Arc::as_ptr(sink)));
    }
}
