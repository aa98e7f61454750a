//! A minimal blocking WebSocket client for the flood bench: the counterpart of the direct
//! reader's blocking `read()` loop. It reads the socket into one large buffer and walks the frames
//! in place (no copy of a payload, no allocation per frame, no runtime), so the client's own cost
//! is about that of a raw socket reader and what the bench compares is the daemon's path.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// The read buffer: several frames per `read()` under a flood.
const BUFFER_BYTES: usize = 1 << 20;
/// The fixed handshake key (the server only echoes a digest of it).
const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

pub(crate) struct RawWs {
    socket: UnixStream,
    buf: Vec<u8>,
    /// Unparsed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
}

/// One frame, borrowed from the read buffer.
pub(crate) struct Frame<'a> {
    pub opcode: u8,
    pub payload: &'a [u8],
}

pub(crate) const TEXT: u8 = 1;
pub(crate) const BINARY: u8 = 2;
pub(crate) const CLOSE: u8 = 8;

impl RawWs {
    /// Connects to the daemon's socket and upgrades `path` (a request target) to a WebSocket.
    pub(crate) fn connect(sock: &Path, path: &str) -> RawWs {
        let mut socket = UnixStream::connect(sock).unwrap();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: tuic\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        socket.write_all(request.as_bytes()).unwrap();
        let mut ws = RawWs { socket, buf: vec![0; BUFFER_BYTES], start: 0, end: 0 };
        let head_end = loop {
            if let Some(at) = ws.buf[..ws.end].windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            assert!(ws.fill(), "the daemon closed the socket during the handshake");
        };
        let head = String::from_utf8_lossy(&ws.buf[..head_end]);
        assert!(head.starts_with("HTTP/1.1 101"), "upgrade refused: {head}");
        ws.start = head_end;
        ws
    }

    /// Sends `data` as one masked text frame (the mask is zero, so the payload goes as it is).
    pub(crate) fn send_text(&mut self, data: &[u8]) {
        assert!(data.len() < 126, "short frames only");
        let mut frame = vec![0x81, 0x80 | data.len() as u8, 0, 0, 0, 0];
        frame.extend_from_slice(data);
        self.socket.write_all(&frame).unwrap();
    }

    /// The next frame, or `None` once the daemon closed the socket.
    pub(crate) fn next(&mut self) -> Option<Frame<'_>> {
        loop {
            if let Some((header, len)) = parse_header(&self.buf[self.start..self.end]) {
                if self.end - self.start >= header + len {
                    let at = self.start + header;
                    self.start = at + len;
                    let opcode = self.buf[at - header] & 0x0f;
                    return Some(Frame { opcode, payload: &self.buf[at..at + len] });
                }
                if header + len > self.buf.len() {
                    self.buf.resize(header + len, 0);
                }
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// Reads more into the buffer, first moving a partial frame to its front when the space after
    /// it runs short. False at the end of the stream.
    fn fill(&mut self) -> bool {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.buf.len() - self.end < self.buf.len() / 4 {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        match self.socket.read(&mut self.buf[self.end..]) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.end += n;
                true
            }
        }
    }
}

/// The header length and payload length of the (unmasked, server-sent) frame at the start of
/// `bytes`, once its header is complete.
fn parse_header(bytes: &[u8]) -> Option<(usize, usize)> {
    let short = usize::from(*bytes.get(1)? & 0x7f);
    match short {
        126 => Some((4, usize::from(u16::from_be_bytes(bytes.get(2..4)?.try_into().ok()?)))),
        127 => Some((10, u64::from_be_bytes(bytes.get(2..10)?.try_into().ok()?) as usize)),
        len => Some((2, len)),
    }
}
