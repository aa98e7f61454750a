//! One message with at most one descriptor, over a Unix socket (`SCM_RIGHTS`): the keeper's
//! protocol (a `SOCK_SEQPACKET` connection, so each message keeps its boundaries and its
//! descriptor) and systemd's notify datagrams.

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags,
    SocketAddrUnix, recvmsg, sendmsg, sendmsg_addr,
};

/// The longest message: a command and a name.
pub(super) const MAX_MESSAGE: usize = 4096;

/// Sends `text` with `fd` attached, on a connected socket or (with `to`) as a datagram.
pub(super) fn send(
    socket: BorrowedFd<'_>,
    to: Option<&SocketAddrUnix>,
    text: &str,
    fd: Option<BorrowedFd<'_>>,
) -> std::io::Result<()> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = fd.map(|fd| [fd]);
    if let Some(fds) = &fds {
        control.push(SendAncillaryMessage::ScmRights(fds));
    }
    let iov = [IoSlice::new(text.as_bytes())];
    let sent = match to {
        Some(addr) => sendmsg_addr(socket, addr, &iov, &mut control, SendFlags::NOSIGNAL)?,
        None => sendmsg(socket, &iov, &mut control, SendFlags::NOSIGNAL)?,
    };
    if sent != text.len() {
        return Err(std::io::Error::other("the message was cut short"));
    }
    Ok(())
}

/// Receives one message and its descriptor, if any. `Ok(None)` at the end of the connection.
pub(super) fn recv(socket: impl AsFd) -> std::io::Result<Option<(String, Option<OwnedFd>)>> {
    let mut buf = [0u8; MAX_MESSAGE];
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut iov = [IoSliceMut::new(&mut buf)];
    let got = loop {
        match recvmsg(socket.as_fd(), &mut iov, &mut control, RecvFlags::CMSG_CLOEXEC) {
            Err(rustix::io::Errno::INTR) => {}
            other => break other?,
        }
    };
    let mut fd = None;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            // Any descriptor beyond the first is closed as it is dropped.
            fd = fds.into_iter().next().or(fd);
        }
    }
    if got.bytes == 0 && fd.is_none() {
        return Ok(None);
    }
    Ok(Some((String::from_utf8_lossy(&buf[..got.bytes]).into_owned(), fd)))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use rustix::net::{AddressFamily, SocketFlags, SocketType, socketpair};

    use super::*;

    #[test]
    fn a_message_carries_its_descriptor_and_the_end_reads_as_none() {
        let (a, b) = socketpair(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None).unwrap();
        let file = tempfile::tempfile().unwrap();
        send(a.as_fd(), None, "PUT m-1", Some(file.as_fd())).unwrap();
        send(a.as_fd(), None, "DEL m-1", None).unwrap();
        let (text, fd) = recv(&b).unwrap().unwrap();
        assert_eq!(text, "PUT m-1");
        let got = std::fs::File::from(fd.unwrap());
        assert_eq!(got.metadata().unwrap().ino(), file.metadata().unwrap().ino());
        let (text, fd) = recv(&b).unwrap().unwrap();
        assert_eq!((text.as_str(), fd.is_none()), ("DEL m-1", true));
        drop(a);
        assert!(recv(&b).unwrap().is_none());
    }
}
