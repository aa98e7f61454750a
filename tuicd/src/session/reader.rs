//! The PTY reader: one small dedicated thread per session doing `read()` on the PTY master, so
//! draining a flooding child never waits for a busy tokio worker (the kernel's PTY buffer is small:
//! a reader that is late by one scheduling round stalls the child). Each chunk goes to the ring, the
//! broadcast and the attached output sinks (a plain-socket WebSocket client's frames are written
//! here, see `sink.rs`) under one lock (`tasks::ingest`). The thread reads into one buffer that it
//! keeps (hot in cache: the kernel copies a tty read out 64 bytes at a time) and copies each chunk
//! once into an allocation of its exact size, which the ring, the broadcast and the sinks share.
//! Reading straight into fresh buffers that the ring then kept skipped that copy but cost ~10%
//! more of the thread's CPU per flood: the kernel's small copies all landed in cold memory.
//!
//! The descriptor is non-blocking (it shares its open file with the async writer), so the thread
//! reads until `EAGAIN` and then parks in `poll()` on the PTY and an eventfd; a cycle that already
//! holds [`PTY_COALESCE_FROM`] bytes (a flood) first polls up to [`PTY_COALESCE_WAIT`] for more, so
//! consumers get one chunk of up to [`PTY_READ_CHUNK`] instead of many small ones. While a flood
//! lasts (a cycle filled its buffer, or waited and got more) every cycle waits so, whatever it
//! holds: after a chunk is handed on, the next read often finds only the kernel's one 4 KiB
//! buffer, and without this a flood went out as thousands of 4-12 KiB frames besides the full
//! ones. The first wait that times out ends the flood state, so a keystroke echo never waits.
//!
//! An idle session is a thread parked in `poll()`: no CPU, and only the stack pages it has touched
//! (see [`PTY_READER_STACK_BYTES`]). The eventfd wakes it for a pause change or a stop.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use rustix::buffer::spare_capacity;
use rustix::event::{EventfdFlags, PollFd, PollFlags, eventfd, poll};
use rustix::io::Errno;
use tokio::sync::oneshot;

use super::owner::Session;
use crate::limits::{PTY_COALESCE_FROM, PTY_COALESCE_WAIT, PTY_READ_CHUNK, PTY_READER_STACK_BYTES};

/// The session's handle on its reader thread.
#[derive(Debug)]
pub(super) struct ReaderControl {
    /// An eventfd: written to wake the thread, drained by it.
    wake: OwnedFd,
    stop: AtomicBool,
}

impl ReaderControl {
    pub(super) fn new() -> std::io::Result<Self> {
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Self { wake, stop: AtomicBool::new(false) })
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
        let _ = done.send(());
    })?;
    Ok(finished)
}

fn read_until_end(session: &Session, pty: &OwnedFd) {
    let control = &session.reader;
    let mut buf: Vec<u8> = Vec::with_capacity(PTY_READ_CHUNK);
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
                match rustix::io::read(pty, spare_capacity(&mut buf)) {
                    Ok(0) => break Err(None),
                    Ok(_) => {
                        if buf.len() == buf.capacity() {
                            break Ok(());
                        }
                    }
                    Err(Errno::INTR) => {}
                    // Under a flood the kernel hands over a few KiB per read and the next few
                    // KiB are microseconds away: wait briefly for them rather than waking every
                    // consumer for a part of a chunk.
                    Err(Errno::AGAIN) if (flooding && !buf.is_empty()) || buf.len() >= PTY_COALESCE_FROM => {
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
            let full = buf.len() == buf.capacity();
            flooding |= full;
            if !buf.is_empty() {
                super::tasks::ingest(session, take_chunk(&mut buf));
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

/// The chunk read into `buf`, copied to its exact size (so no holder of it pins a whole read buffer
/// for a keystroke echo), leaving `buf` empty and kept for the next read.
fn take_chunk(buf: &mut Vec<u8>) -> Bytes {
    let chunk = Bytes::copy_from_slice(buf);
    buf.clear();
    chunk
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
        let mut buf = Vec::with_capacity(PTY_READ_CHUNK);
        let read_into = buf.as_ptr();
        for len in [PTY_READ_CHUNK, 4, 1] {
            buf.extend((0..len).map(|i| i as u8));
            let chunk = take_chunk(&mut buf);
            assert_eq!(chunk.len(), len);
            assert!(chunk.iter().enumerate().all(|(i, &b)| b == i as u8));
            assert_ne!(chunk.as_ptr(), read_into);
            assert!(buf.is_empty() && buf.as_ptr() == read_into, "the read buffer is kept for the next read");
        }
    }
}
