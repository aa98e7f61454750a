//! Unit tests of the direct path: frame headers, hand-back and partial sends over a socket pair.

use super::*;

#[test]
fn frame_headers_use_the_shortest_length_encoding() {
    let mut head = [0u8; MAX_FRAME_HEADER];
    assert_eq!((frame_header(&mut head, Data::Text, 125), &head[..2]), (2, &[0x81, 125][..]));
    assert_eq!((frame_header(&mut head, Data::Binary, 126), &head[..4]), (4, &[0x82, 126, 0, 126][..]));
    assert_eq!(frame_header(&mut head, Data::Binary, 65_535), 4);
    assert_eq!(
        (frame_header(&mut head, Data::Binary, 65_536), &head[..10]),
        (10, &[0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0][..])
    );
}

#[test]
fn what_a_full_socket_does_not_take_is_pending_and_goes_out_first() {
    let (near, far) = std::os::unix::net::UnixStream::pair().unwrap();
    near.set_nonblocking(true).unwrap();
    let direct = DirectSocket::new(OwnedFd::from(near), true);
    direct.arm(Position { next: 0, held: Vec::new() });
    let chunk = Bytes::from(vec![7u8; 64 * 1024]);
    // The reader keeps the output and asks the task to send the rest.
    let offered = fill_until_cut_short(&direct, &chunk);
    assert!(direct.lock().live.is_some() && direct.lock().handed.is_none());
    assert!(
        ready_at_once(direct.flush_wanted().notified()),
        "the task is asked to send the rest once the socket drains"
    );
    // The rest is still not out at the next chunk: that chunk and the output go back to the task.
    direct.offer(offered, &chunk);
    let position = direct.handed().unwrap();
    assert_eq!(position.next, offered, "the frame cut short is complete once pending is sent");
    assert!(!direct.lock().pending.is_empty());
    // Later chunks are not the reader's to write any more.
    direct.offer(offered, &chunk);
    assert!(direct.lock().handed.is_none());
    // Drain the socket while flushing what is pending: the frames read back whole and in order.
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut bytes = Vec::new();
        (&far).read_to_end(&mut bytes).unwrap();
        bytes
    });
    while !flush_pending(&direct.fd, &mut direct.lock().pending) {
        std::thread::yield_now();
    }
    drop(direct);
    let bytes = reader.join().unwrap();
    let frames = binary_frames(&bytes);
    assert!(frames.iter().all(|(_, data)| data.iter().all(|&b| b == 7)));
    let (last, data) = frames.last().unwrap();
    assert_eq!(last + data.len() as u64, offered);
}

#[test]
fn a_frame_cut_short_goes_out_whole_with_the_next_chunk_once_the_socket_drained() {
    use std::io::Read;
    let (near, mut far) = std::os::unix::net::UnixStream::pair().unwrap();
    near.set_nonblocking(true).unwrap();
    let direct = DirectSocket::new(OwnedFd::from(near), true);
    direct.arm(Position { next: 0, held: Vec::new() });
    let mut offered = fill_until_cut_short(&direct, &Bytes::from(vec![9u8; 64 * 1024]));
    // The client reads everything the socket holds; the next chunk sends the rest, then itself.
    let mut bytes = vec![0u8; 64 << 20];
    let mut got = 0;
    far.set_nonblocking(true).unwrap();
    while let Ok(n @ 1..) = far.read(&mut bytes[got..]) {
        got += n;
    }
    direct.offer(offered, &Bytes::from_static(b"tail"));
    offered += 4;
    assert!(direct.lock().pending.is_empty() && direct.lock().handed.is_none());
    while let Ok(n @ 1..) = far.read(&mut bytes[got..]) {
        got += n;
    }
    let frames = binary_frames(&bytes[..got]);
    assert_eq!(frames.last().unwrap(), &(offered - 4, &b"tail"[..]));
}

/// Offers `chunk` after `chunk` to the armed `direct`, whose peer reads nothing, until the
/// socket takes only part of a frame; returns the cursor after the last chunk offered.
fn fill_until_cut_short(direct: &DirectSocket, chunk: &Bytes) -> u64 {
    let mut offered = 0u64;
    while direct.lock().pending.is_empty() {
        direct.offer(offered, chunk);
        offered += chunk.len() as u64;
        assert!(offered < 64 << 20, "a socket nobody reads never filled");
    }
    offered
}

/// The binary output frames in `bytes` as (cursor, data), checked whole, contiguous from 0
/// and ending exactly at the end of `bytes`.
fn binary_frames(bytes: &[u8]) -> Vec<(u64, &[u8])> {
    let (mut frames, mut at, mut cursor) = (Vec::new(), 0usize, 0u64);
    while at < bytes.len() {
        assert_eq!(bytes[at], 0x82, "a final binary frame");
        let (head, len) = match bytes[at + 1] {
            126 => (4, usize::from(u16::from_be_bytes(bytes[at + 2..at + 4].try_into().unwrap()))),
            127 => (10, u64::from_be_bytes(bytes[at + 2..at + 10].try_into().unwrap()) as usize),
            short => (2, usize::from(short)),
        };
        let payload = &bytes[at + head..at + head + len];
        assert_eq!(u64::from_be_bytes(payload[..8].try_into().unwrap()), cursor, "frames whole and in order");
        frames.push((cursor, &payload[8..]));
        cursor += (len - 8) as u64;
        at += head + len;
    }
    assert_eq!(at, bytes.len());
    frames
}

/// Whether `future` is ready at its first poll.
fn ready_at_once(future: impl std::future::Future<Output = ()>) -> bool {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    future.as_mut().poll(&mut cx).is_ready()
}
