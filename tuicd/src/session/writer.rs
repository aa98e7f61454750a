//! The PTY writer's handle on the master: registered with tokio's reactor for *write* readiness
//! only.
//!
//! The reader thread reads the PTY (`reader.rs`); if the writer's registration also asked for read
//! readiness (as `pty_process::Pty` does), every chunk the child writes would wake the reactor for
//! an event nobody waits for: a flood would keep a tokio worker cycling through `epoll_wait` and
//! the tty's poll, competing for the cores the child and the reader need. The kernel filters
//! wake-ups by the registered events, so with `EPOLLOUT` alone output costs the reactor nothing;
//! the writer is woken only when the child's input queue frees room.

use std::io;
use std::os::fd::OwnedFd;

use rustix::io::Errno;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

#[derive(Debug)]
pub(super) struct PtyWriter {
    fd: AsyncFd<OwnedFd>,
}

impl PtyWriter {
    /// `fd` must be the (non-blocking) PTY master.
    pub(super) fn new(fd: OwnedFd) -> io::Result<Self> {
        // SAFETY: the registered descriptor is the `OwnedFd` the `AsyncFd` owns: it stays open and
        // names the same file until the `AsyncFd` is dropped, which deregisters it before closing.
        #[allow(unsafe_code)]
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::WRITABLE) }?;
        Ok(Self { fd })
    }

    /// Writes all of `data`, waiting for room while the child does not read its input.
    ///
    /// Fails once the terminal has hung up (every holder of its child side closed it): the master
    /// then reports `EPOLLHUP`, which reads as ready for ever, while it refuses every write with
    /// `EAGAIN`; retrying would spin a worker without ever yielding.
    pub(super) async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let mut ready = self.fd.writable().await?;
            match rustix::io::write(self.fd.get_ref(), data) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => data = &data[n..],
                Err(Errno::AGAIN) if ready.ready().is_write_closed() => {
                    return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the terminal hung up"));
                }
                Err(Errno::AGAIN) => ready.clear_ready(),
                Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
            // Readiness already known resolves without yielding: a long write gives the worker
            // (and a close request racing it) a turn between chunks.
            tokio::task::consume_budget().await;
        }
        Ok(())
    }
}
