//! The PTY reader: one small dedicated thread per session doing `read()` on the PTY master, so
//! draining a flooding child never waits for a busy tokio worker (the kernel's PTY buffer is small:
//! a reader that is late by one scheduling round stalls the child). Each chunk goes to the ring, the
//! broadcast and the attached output sinks (a plain-socket WebSocket client's frames are written
//! here, see `sink.rs`) under one lock (`tasks::ingest`). The thread reads into one buffer that it
//! keeps (hot in cache: the kernel copies a tty read out 64 bytes at a time) and copies each chunk
//! once into an allocation of its exact size, which the ring, the broadcast and the sinks share.
//! A fresh buffer per read would save that copy, but the kernel's small copies would all land in
//! cold memory, which costs the thread more than the one copy does.
//!
//! Each `read()` asks for at most [`PTY_READ_SLICE`] (2 KiB), half the line discipline's 4 KiB
//! buffer. The kernel restarts the worker that refills that buffer from the child's writes only at
//! the end of a read that emptied it, so a reader that takes everything there is and a worker that
//! refills it take turns, each idle while the other copies. A read that leaves part of it behind
//! restarts the worker at once and the two copy at the same time, so a flood drains faster for
//! any reader, a plain one too (see docs/dev/perf-log.md).
//!
//! The descriptor is non-blocking (it shares its open file with the async writer), so the thread
//! reads until `EAGAIN` and then parks in `poll()` on the PTY and an eventfd; a cycle that already
//! holds [`PTY_COALESCE_FROM`] bytes (a flood) first polls up to [`PTY_COALESCE_WAIT`] for more, so
//! consumers get one chunk of up to [`PTY_READ_CHUNK`] instead of many small ones. While a flood
//! lasts (a cycle filled its buffer, or waited and got more) every cycle waits so, whatever it
//! holds: after a chunk is handed on, the next read often finds only the kernel's one 4 KiB
//! buffer, and without this a flood goes out as thousands of 4-12 KiB frames beside the full
//! ones. The first wait that times out ends the flood state, so a keystroke echo never waits.
//!
//! An idle session is a thread parked in `poll()`: no CPU, and only the stack pages it has touched
//! (see [`PTY_READER_STACK_BYTES`]). The eventfd wakes it for a pause change or a stop.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use rustix::event::{EventfdFlags, PollFd, PollFlags, eventfd, poll};
use rustix::io::Errno;
use tokio::sync::oneshot;

use super::owner::Session;
use crate::limits::{PTY_COALESCE_FROM, PTY_COALESCE_WAIT, PTY_READ_CHUNK, PTY_READ_SLICE, PTY_READER_STACK_BYTES};

/// The session's handle on its reader thread.
#[derive(Debug)]
pub(super) struct ReaderControl {
    /// An eventfd: written to wake the thread, drained by it.
    wake: OwnedFd,
    stop: AtomicBool,
    /// Flips to true when the thread has ended (it reads nothing more).
    pub(super) ended: tokio::sync::watch::Sender<bool>,
}

impl ReaderControl {
    pub(super) fn new() -> std::io::Result<Self> {
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Self { wake, stop: AtomicBool::new(false), ended: tokio::sync::watch::channel(false).0 })
    }

    /// Makes the thread look at `paused` and the stop flag again.
    pub(super) fn wake(&self) {
        // Only fails when the counter would overflow, i.e. a wake is already pending.
        let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
    }

    /// Ends the thread after the chunk it is ingesting, if any (a grandchild holds the PTY open).
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake();
    }
}

/// Starts the reader thread on `pty` (a duplicate of the master). The receiver resolves when the
/// thread has ingested its last chunk: at EOF (Linux reports a closed PTY as `EIO`) or on stop.
pub(super) fn spawn(session: Arc<Session>, pty: OwnedFd) -> std::io::Result<oneshot::Receiver<()>> {
    let (done, finished) = oneshot::channel();
    std::thread::Builder::new().name("tuicd-pty-read".into()).stack_size(PTY_READER_STACK_BYTES).spawn(move || {
        read_until_end(&session, &pty);
        session.reader.ended.send_replace(true);
        let _ = done.send(());
    })?;
    Ok(finished)
}

fn read_until_end(session: &Session, pty: &OwnedFd) {
    let control = &session.reader;
    let mut buf = ReadBuffer::new();
    // Set while output keeps coming (a cycle filled the buffer or waited for more and got it):
    // then any `EAGAIN` waits briefly for more, however little the cycle holds. Cleared by a wait
    // that times out.
    let mut flooding = false;
    loop {
        if control.stop.load(Ordering::SeqCst) {
            return;
        }
        let paused = *session.paused.borrow();
        if !paused {
            // Read until the kernel has nothing more or the buffer is full, then ingest once: a
            // flood becomes fewer, larger chunks (one lock, one broadcast, one frame per client)
            // while a lone echo still goes out after a single read and one `EAGAIN`.
            let outcome = loop {
                match rustix::io::read(pty, buf.next_slice()) {
                    Ok(0) => break Err(None),
                    Ok(n) => {
                        buf.advance(n);
                        if buf.is_full() {
                            break Ok(());
                        }
                    }
                    Err(Errno::INTR) => {}
                    // Under a flood the kernel hands over a few KiB per read and the next few
                    // KiB are microseconds away: wait briefly for them rather than waking every
                    // consumer for a part of a chunk.
                    Err(Errno::AGAIN) if (flooding && !buf.is_empty()) || buf.held() >= PTY_COALESCE_FROM => {
                        flooding = more_within(control, pty);
                        if !flooding {
                            break Ok(());
                        }
                    }
                    Err(Errno::AGAIN) => break Ok(()),
                    // EIO: every holder of the PTY's child side has closed it.
                    Err(Errno::IO) => break Err(None),
                    Err(e) => break Err(Some(e)),
                }
            };
            let full = buf.is_full();
            flooding |= full;
            if !buf.is_empty() {
                super::tasks::ingest(session, buf.take());
            }
            match outcome {
                Ok(()) if full => continue,
                Ok(()) => {}
                Err(None) => return,
                Err(Some(e)) => {
                    tracing::warn!(session = %session.id, error = %e, "PTY read failed; treating as end of output");
                    return;
                }
            }
        }
        // Nothing to read (or paused): park until output, a pause change or a stop.
        let mut fds = [PollFd::new(&control.wake, PollFlags::IN), PollFd::new(pty, PollFlags::IN)];
        let watched = if paused { 1 } else { 2 };
        match poll(&mut fds[..watched], None) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => {
                tracing::warn!(session = %session.id, error = %e, "PTY poll failed; treating as end of output");
                return;
            }
        }
        if fds[0].revents().contains(PollFlags::IN) {
            let mut count = [0u8; 8];
            let _ = rustix::io::read(&control.wake, &mut count);
        }
    }
}

/// The reader's one buffer: a read cycle gathers up to [`PTY_READ_CHUNK`] in it, one `read()` of
/// at most [`PTY_READ_SLICE`] at a time, and hands the gathered bytes on as a copy of their exact
/// size (so no holder of a chunk pins a whole read buffer for a keystroke echo). The buffer is
/// kept, hot in cache, for the next cycle; its memory is zeroed (and so touched) only as far as
/// reads have reached, so an idle session's buffer costs a few KiB.
#[derive(Debug)]
struct ReadBuffer {
    /// Initialised as far as any read has reached; capacity [`PTY_READ_CHUNK`].
    buf: Vec<u8>,
    /// Bytes gathered this cycle: `buf[..held]`.
    held: usize,
}

impl ReadBuffer {
    fn new() -> Self {
        Self { buf: Vec::with_capacity(PTY_READ_CHUNK), held: 0 }
    }

    /// Where the next `read()` goes: at most [`PTY_READ_SLICE`] bytes after those held.
    fn next_slice(&mut self) -> &mut [u8] {
        let end = (self.held + PTY_READ_SLICE).min(PTY_READ_CHUNK);
        if self.buf.len() < end {
            self.buf.resize(end, 0);
        }
        &mut self.buf[self.held..end]
    }

    /// Counts `n` bytes a read put into [`Self::next_slice`].
    fn advance(&mut self, n: usize) {
        self.held += n;
    }

    fn held(&self) -> usize {
        self.held
    }

    fn is_empty(&self) -> bool {
        self.held == 0
    }

    fn is_full(&self) -> bool {
        self.held == PTY_READ_CHUNK
    }

    /// The gathered bytes as a chunk of their exact size; the buffer is empty again.
    fn take(&mut self) -> Bytes {
        let chunk = Bytes::copy_from_slice(&self.buf[..self.held]);
        self.held = 0;
        chunk
    }
}

/// Whether the PTY becomes readable within [`PTY_COALESCE_WAIT`] (and nothing asked the thread to
/// look at its controls meanwhile).
fn more_within(control: &ReaderControl, pty: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(&control.wake, PollFlags::IN), PollFd::new(pty, PollFlags::IN)];
    let timeout = rustix::event::Timespec { tv_sec: 0, tv_nsec: PTY_COALESCE_WAIT.as_nanos() as i64 };
    matches!(poll(&mut fds, Some(&timeout)), Ok(n) if n > 0)
        && fds[0].revents().is_empty()
        && fds[1].revents().contains(PollFlags::IN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_is_copied_to_its_size_and_the_read_buffer_kept() {
        let mut buf = ReadBuffer::new();
        let read_into = buf.buf.as_ptr();
        for len in [PTY_READ_CHUNK, 4, 1] {
            let mut next = 0u8;
            while buf.held() < len {
                let want = len - buf.held();
                let slice = buf.next_slice();
                let n = slice.len().min(want);
                slice[..n].iter_mut().for_each(|b| (*b, next) = (next, next.wrapping_add(1)));
                buf.advance(n);
            }
            assert_eq!(buf.is_full(), len == PTY_READ_CHUNK);
            let chunk = buf.take();
            assert_eq!(chunk.len(), len);
            assert!(chunk.iter().enumerate().all(|(i, &b)| b == i as u8));
            assert_ne!(chunk.as_ptr(), read_into);
            assert!(buf.is_empty() && buf.buf.as_ptr() == read_into, "the read buffer is kept for the next read");
        }
    }

    #[test]
    fn each_read_gets_at_most_a_slice_and_memory_is_touched_only_as_far_as_reads_reach() {
        let mut buf = ReadBuffer::new();
        assert_eq!(buf.buf.len(), 0, "a new session's buffer touches no memory");
        assert_eq!(buf.next_slice().len(), PTY_READ_SLICE);
        buf.advance(5);
        assert_eq!(buf.next_slice().len(), PTY_READ_SLICE);
        assert_eq!(buf.buf.len(), 5 + PTY_READ_SLICE);
        buf.take();
        assert_eq!(buf.buf.len(), 5 + PTY_READ_SLICE, "an echo-sized cycle zeroes no more");
        // The last slice of a cycle stops at the chunk's end.
        buf.advance(PTY_READ_CHUNK - 3);
        assert_eq!(buf.next_slice().len(), 3);
        buf.advance(3);
        assert!(buf.is_full());
        assert_eq!(buf.buf.len(), PTY_READ_CHUNK);
    }
}
