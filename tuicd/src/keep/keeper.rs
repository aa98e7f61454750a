//! The keeper: a minimal process of tuicd's own (`tuicd keeper SOCKET`) that does nothing but hold
//! descriptors the daemon gives it (each session's PTY master and pidfd), so that when the daemon
//! dies (kill -9, a panic, the OOM killer) the terminals stay open and their programs keep running;
//! the next daemon takes them back. It runs in a session of its own (no controlling terminal, so
//! no hang-up when the daemon's terminal closes), serves one daemon connection at a time on a
//! `SOCK_SEQPACKET` socket in the daemon's private runtime directory, and exits once it holds
//! nothing and no daemon is connected.
//!
//! Messages (one per packet, see `wire.rs`): `PUT <name>` with a descriptor, `DEL <name>`, `TAKE`
//! (answered by `FD <name>` with a duplicate for each held descriptor, then `END`).

use std::collections::BTreeMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::process::ExitCode;

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};

use super::wire;

/// The hidden subcommand.
pub const SUBCOMMAND: &str = "keeper";
/// How long a keeper that holds nothing waits for a daemon before it exits.
const IDLE_EXIT_MS: i64 = 10_000;

/// `tuicd keeper SOCKET`.
pub fn main(mut args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    let Some(path) = args.next() else {
        eprintln!("tuicd keeper: usage: tuicd keeper SOCKET");
        return ExitCode::FAILURE;
    };
    let path = Path::new(&path);
    let listener = match listen(path) {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("tuicd keeper: cannot listen on {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    serve(&listener);
    let _ = std::fs::remove_file(path);
    ExitCode::SUCCESS
}

fn listen(path: &Path) -> std::io::Result<OwnedFd> {
    let socket = rustix::net::socket_with(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)?;
    // The daemon starts a keeper only after nobody answered on this path: a file there is stale.
    let _ = std::fs::remove_file(path);
    rustix::net::bind(&socket, &SocketAddrUnix::new(path)?)?;
    rustix::net::listen(&socket, 4)?;
    Ok(socket)
}

fn serve(listener: &OwnedFd) {
    let mut held: BTreeMap<String, OwnedFd> = BTreeMap::new();
    let mut daemon: Option<OwnedFd> = None;
    let uid = rustix::process::getuid();
    loop {
        let idle = Timespec { tv_sec: IDLE_EXIT_MS / 1000, tv_nsec: 0 };
        let waiting = daemon.is_none() && held.is_empty();
        let (ready_listener, ready_daemon) = {
            let mut fds = vec![PollFd::new(listener, PollFlags::IN)];
            if let Some(d) = &daemon {
                fds.push(PollFd::new(d, PollFlags::IN));
            }
            match poll(&mut fds, waiting.then_some(&idle)) {
                Ok(0) => return,
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return,
            }
            (!fds[0].revents().is_empty(), fds.get(1).is_some_and(|f| !f.revents().is_empty()))
        };
        if ready_listener && let Ok(conn) = rustix::net::accept_with(listener, SocketFlags::CLOEXEC) {
            // Only the daemon's own user; a newer daemon replaces an older connection (that
            // daemon has died or re-executed).
            if rustix::net::sockopt::socket_peercred(&conn).is_ok_and(|cred| cred.uid == uid) {
                daemon = Some(conn);
            }
            continue;
        }
        if !ready_daemon {
            continue;
        }
        let Some(conn) = daemon.as_ref() else { continue };
        match wire::recv(conn) {
            Ok(Some((text, fd))) => answer(conn, &mut held, &text, fd),
            Ok(None) | Err(_) => {
                daemon = None;
                if held.is_empty() {
                    return;
                }
            }
        }
    }
}

fn answer(conn: &OwnedFd, held: &mut BTreeMap<String, OwnedFd>, text: &str, fd: Option<OwnedFd>) {
    match (text.split_once(' '), fd) {
        (Some(("PUT", name)), Some(fd)) => {
            held.insert(name.to_owned(), fd);
        }
        (Some(("DEL", name)), _) => {
            held.remove(name);
        }
        (None, _) if text == "TAKE" => {
            for (name, fd) in held.iter() {
                if wire::send(conn.as_fd(), None, &format!("FD {name}"), Some(fd.as_fd())).is_err() {
                    return;
                }
            }
            let _ = wire::send(conn.as_fd(), None, "END", None);
        }
        _ => {}
    }
}
