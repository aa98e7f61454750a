//! The stream's direct output path: on a plain socket (IPC, or TCP without TLS) the session's
//! reader thread writes a client's output frames itself, as an [`OutputSink`], so a flood reaches
//! the client with no hand-off to another thread and no copy of the bytes beyond the reader's one
//! (binary frames go out with one `sendmsg` of the frame header and the chunk the reader made).
//!
//! Two writers share the socket: the reader thread (output frames) and the client's task (through
//! tungstenite: `parsed`, `lagged`, `exit`, `closed`, pongs, the close handshake, and output while
//! it relays). Both write only under [`DirectSocket`]'s lock and only whole frames: whatever part
//! of a frame the socket does not take at once is kept as `pending` and goes out before any other
//! byte, so frames never interleave. The reader never waits. When the socket takes only part of a
//! frame, the rest goes out before the next one: the reader sends it with its next chunk, or the
//! task as soon as the socket drains, whichever comes first. When that rest is still not out by
//! the next chunk (a client slower than the output), the reader hands the output back to the task
//! at the next cursor and wakes it; the task then relays from the ring with the stream's usual lag
//! handling, and re-arms the direct path once it has caught up.
//!
//! Kept because an A/B showed it worth more than 10% of keystroke echo p50 (docs/dev/perf-log.md).

use std::io::IoSlice;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use hyper_tungstenite::tungstenite::protocol::frame::FrameHeader;
use hyper_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use rustix::io::Errno;
use rustix::net::{SendAncillaryBuffer, SendFlags, sendmsg};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

use super::stream_encode::{BINARY_HEADER_BYTES, json_output_holding_back};
use crate::lock::Recover;
use crate::session::OutputSink;

/// The longest header of an unmasked server frame: 2 bytes, then a 64-bit length.
const MAX_FRAME_HEADER: usize = 10;

/// Where the next output frame starts: `next` is the cursor after the last byte taken from the
/// session, and `held` an incomplete UTF-8 character at its end, not sent yet (JSON frames only).
#[derive(Debug, Default)]
pub(crate) struct Position {
    pub next: u64,
    pub held: Vec<u8>,
}

/// One WebSocket client's socket, shared by its task and the session's reader thread.
#[derive(Debug)]
pub(crate) struct DirectSocket {
    /// A duplicate of the connection's descriptor; written only under `state`'s lock.
    fd: OwnedFd,
    binary: bool,
    state: Mutex<SocketState>,
    /// Wakes the task once the reader has handed the output back to it.
    handed_back: Notify,
    /// Wakes the task to send the rest of a frame the socket took only part of.
    flush_wanted: Notify,
}

#[derive(Debug, Default)]
struct SocketState {
    /// The rest of a frame the socket did not take at once: sent before any other byte.
    pending: Vec<u8>,
    /// Set while the reader thread writes the output frames.
    live: Option<Position>,
    /// Set once the reader has stopped writing them, until the task takes the position back.
    handed: Option<Position>,
}

impl DirectSocket {
    pub(crate) fn new(fd: OwnedFd, binary: bool) -> Self {
        Self {
            fd,
            binary,
            state: Mutex::new(SocketState::default()),
            handed_back: Notify::new(),
            flush_wanted: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, SocketState> {
        self.state.locked()
    }

    /// Lets the reader write the output frames from `position` on. Called under the session's
    /// output lock (see `Session::attach_sink`), when the task has sent everything before it.
    pub(crate) fn arm(&self, position: Position) {
        let mut state = self.lock();
        debug_assert!(state.live.is_none() && state.handed.is_none());
        state.live = Some(position);
    }

    /// Takes the output back from the reader, wherever it is: the task writes it from now on. The
    /// flag says the reader had already handed it back (the socket had not taken the rest of a
    /// frame by the next chunk), unseen by the task.
    pub(crate) fn take_back(&self) -> Option<(Position, bool)> {
        let mut state = self.lock();
        state.live.take().map(|p| (p, false)).or_else(|| state.handed.take().map(|p| (p, true)))
    }

    /// The position the reader handed back, if it did (a wake-up may be stale).
    pub(crate) fn handed(&self) -> Option<Position> {
        self.lock().handed.take()
    }

    /// Notified when the reader may have handed the output back.
    pub(crate) fn handed_back(&self) -> &Notify {
        &self.handed_back
    }

    /// Notified when the reader left part of a frame pending (it may have sent it since).
    pub(crate) fn flush_wanted(&self) -> &Notify {
        &self.flush_wanted
    }

    /// Writes one output frame for `data` (starting at `at.next`), whole or with its rest left
    /// pending.
    fn write_frame(&self, pending: &mut Vec<u8>, at: &mut Position, data: &[u8]) -> Sent {
        let mut head = [0u8; MAX_FRAME_HEADER + BINARY_HEADER_BYTES];
        if self.binary {
            let len = frame_header(&mut head, Data::Binary, BINARY_HEADER_BYTES + data.len());
            head[len..len + BINARY_HEADER_BYTES].copy_from_slice(&at.next.to_be_bytes());
            at.next += data.len() as u64;
            return send_all(&self.fd, &[&head[..len + BINARY_HEADER_BYTES], data], pending);
        }
        let held = std::mem::take(&mut at.held);
        let cursor = at.next - held.len() as u64;
        at.next += data.len() as u64;
        let (frame, tail) = json_output_holding_back(vec![&held, data], cursor);
        at.held = tail;
        let Some(frame) = frame else { return Sent::All };
        let head_len = frame_header(&mut head, Data::Text, frame.len());
        send_all(&self.fd, &[&head[..head_len], &frame], pending)
    }
}

impl OutputSink for DirectSocket {
    fn offer(&self, start: u64, data: &Bytes) {
        let mut state = self.lock();
        let Some(mut at) = state.live.take() else { return };
        let end = start + data.len() as u64;
        // Armed at the ring's end under the output lock, so chunks line up; anything else is
        // handed to the task, which resyncs from the ring.
        let lined_up = start <= at.next && at.next <= end;
        let skip = at.next.saturating_sub(start) as usize;
        // The rest of the last frame must be out first: if the socket has not drained that far,
        // this client is slower than the output.
        let behind = !lined_up || !flush_pending(&self.fd, &mut state.pending);
        let sent = if behind {
            None
        } else if skip == data.len() {
            Some(Sent::All)
        } else {
            Some(self.write_frame(&mut state.pending, &mut at, &data[skip..]))
        };
        match sent {
            Some(Sent::All) => state.live = Some(at),
            Some(Sent::Partly) => {
                state.live = Some(at);
                self.flush_wanted.notify_one();
            }
            None | Some(Sent::Failed) => {
                state.handed = Some(at);
                self.handed_back.notify_one();
            }
        }
    }
}

/// Encodes the header of an unmasked, final data frame of `payload` bytes at the start of `head`
/// (which has room for the longest, [`MAX_FRAME_HEADER`]), with tungstenite's encoder; returns its
/// length.
fn frame_header(head: &mut [u8], data: Data, payload: usize) -> usize {
    let header = FrameHeader { opcode: OpCode::Data(data), ..FrameHeader::default() };
    let mut out = &mut head[..];
    let room = out.len();
    // Writing into a slice only fails when it is too short, and it has room for any header.
    let _ = header.format(payload as u64, &mut out);
    room - out.len()
}

/// What a send that does not wait did.
#[derive(Debug, PartialEq)]
enum Sent {
    All,
    /// The socket was full before the end: the rest is pending.
    Partly,
    /// The socket failed: the rest is dropped (the task sees the failure on its own next read or
    /// write).
    Failed,
}

/// Sends what is pending without waiting; true once nothing is.
fn flush_pending(fd: &OwnedFd, pending: &mut Vec<u8>) -> bool {
    if pending.is_empty() {
        return true;
    }
    let rest = std::mem::take(pending);
    send_all(fd, &[&rest], pending) == Sent::All
}

/// Sends `parts` without waiting; what the socket does not take goes to `pending`.
fn send_all(fd: &OwnedFd, parts: &[&[u8]], pending: &mut Vec<u8>) -> Sent {
    let mut sent = 0usize;
    let total: usize = parts.iter().map(|p| p.len()).sum();
    while sent < total {
        let mut skip = sent;
        let slices: Vec<IoSlice<'_>> = parts
            .iter()
            .filter_map(|part| {
                let from = skip.min(part.len());
                skip -= from;
                (from < part.len()).then(|| IoSlice::new(&part[from..]))
            })
            .collect();
        let flags = SendFlags::NOSIGNAL | SendFlags::DONTWAIT;
        match sendmsg(fd, &slices, &mut SendAncillaryBuffer::default(), flags) {
            Ok(n) => sent += n,
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => {
                let mut skip = sent;
                for part in parts {
                    let from = skip.min(part.len());
                    skip -= from;
                    pending.extend_from_slice(&part[from..]);
                }
                return Sent::Partly;
            }
            Err(_) => return Sent::Failed,
        }
    }
    Sent::All
}

/// The task's side of the socket: tungstenite's stream. Reads pass through. With a
/// [`DirectSocket`], every write first sends what is pending and then takes the whole buffer
/// (what the socket does not take becomes pending), so the socket is at a frame boundary whenever
/// the lock is free; while something is pending and the socket is full, writes wait.
pub(crate) struct SocketIo<T> {
    inner: T,
    direct: Option<std::sync::Arc<DirectSocket>>,
}

impl<T> SocketIo<T> {
    pub(crate) fn new(inner: T, direct: Option<std::sync::Arc<DirectSocket>>) -> Self {
        Self { inner, direct }
    }
}

impl<T: AsyncWrite + Unpin> SocketIo<T> {
    fn poll_pending(inner: &mut T, cx: &mut Context<'_>, pending: &mut Vec<u8>) -> Poll<std::io::Result<()>> {
        while !pending.is_empty() {
            match ready!(Pin::new(&mut *inner).poll_write(cx, pending)) {
                Ok(0) => return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into())),
                Ok(n) => drop(pending.drain(..n)),
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SocketIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SocketIo<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let Some(direct) = &this.direct else { return Pin::new(&mut this.inner).poll_write(cx, buf) };
        let mut state = direct.lock();
        ready!(Self::poll_pending(&mut this.inner, cx, &mut state.pending))?;
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => state.pending.extend_from_slice(&buf[n..]),
            // The waker is registered: the flush that follows waits for the socket.
            Poll::Pending => state.pending.extend_from_slice(buf),
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if let Some(direct) = &this.direct {
            ready!(Self::poll_pending(&mut this.inner, cx, &mut direct.lock().pending))?;
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.as_mut().poll_flush(cx))?;
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
#[path = "stream_direct_tests.rs"]
mod tests;
