//! Output sinks: consumers that the reader thread hands each chunk to itself, under the output
//! lock, right after the ring and the broadcast. A WebSocket client on a plain socket is one
//! (`routes/stream_direct.rs`): its output frames are written by the thread that read the bytes,
//! with no hand-off to another thread, while its other frames still come from its task, which then
//! listens to the `notices` broadcast (every event but `Output`) instead of `live`.

use std::sync::Arc;

use bytes::Bytes;

use super::owner::Session;

pub(crate) trait OutputSink: Send + Sync {
    /// Each chunk from the cursor the sink was attached at, in order, called by the reader thread
    /// under the session's output lock. Must not block and must not take the session's locks.
    fn offer(&self, start: u64, data: &Bytes);
}

impl Session {
    /// Attaches `sink` from cursor `at` if the ring ends there, the session has not finished and
    /// `arm` (called under the output lock, so no chunk can come between) agrees. Returns whether
    /// it did: from then on the reader offers the sink every chunk until it is detached or the
    /// session finishes. Attaching an attached sink again only re-arms it.
    pub(crate) fn attach_sink<S: OutputSink + 'static>(
        &self,
        sink: &Arc<S>,
        at: u64,
        arm: impl FnOnce() -> bool,
    ) -> bool {
        let mut out = self.lock();
        if out.exit.is_some() || out.ring.total() != at || !arm() {
            return false;
        }
        if !out.sinks.iter().any(|s| std::ptr::addr_eq(Arc::as_ptr(s), Arc::as_ptr(sink))) {
            out.sinks.push(sink.clone());
        }
        true
    }

    pub(crate) fn detach_sink<S: OutputSink + 'static>(&self, sink: &Arc<S>) {
        self.lock().sinks.retain(|s| !std::ptr::addr_eq(Arc::as_ptr(s), Arc::as_ptr(sink)));
    }
}
