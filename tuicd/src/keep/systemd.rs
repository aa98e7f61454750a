//! systemd's file-descriptor store, as `sd_notify(3)` and `sd_listen_fds(3)` document it: a
//! descriptor is stored with `FDSTORE=1` and `FDNAME=<name>` (sent with `SCM_RIGHTS` to
//! `$NOTIFY_SOCKET`) and dropped with `FDSTOREREMOVE=1`; at the service's next start systemd passes
//! the stored ones from descriptor 3 on, with `LISTEN_FDS`, `LISTEN_FDNAMES` and `LISTEN_PID`.
//! The unit must allow it: `FileDescriptorStoreMax=` (and `FileDescriptorStorePreserve=yes` to
//! keep the store while the service is down), with `KillMode=process` so that a crash does not
//! take the terminals' programs with it.

use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};

use super::wire;

/// What the environment said at start: the notify socket and the descriptors passed in.
#[derive(Debug, Default)]
struct Environment {
    notify: Option<String>,
    passed: Vec<(String, RawFd)>,
}

static ENVIRONMENT: OnceLock<Environment> = OnceLock::new();

/// Reads and removes `NOTIFY_SOCKET` and the `LISTEN_*` variables, so that no session's program
/// inherits them. Called first thing in `main`, while the process has one thread.
pub fn take_env() {
    let var = |name: &str| std::env::var(name).ok();
    let mut environment = Environment { notify: var("NOTIFY_SOCKET").filter(|s| !s.is_empty()), passed: Vec::new() };
    let ours = var("LISTEN_PID").and_then(|p| p.parse::<u32>().ok()) == Some(std::process::id());
    if ours {
        let count = var("LISTEN_FDS").and_then(|n| n.parse::<RawFd>().ok()).unwrap_or(0);
        let names = var("LISTEN_FDNAMES").unwrap_or_default();
        let mut names = names.split(':');
        environment.passed = (0..count).map(|i| (names.next().unwrap_or("unknown").to_owned(), 3 + i)).collect();
    }
    for name in ["NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] {
        if std::env::var_os(name).is_some() {
            // SAFETY: called before the runtime starts, while this is the process's only thread.
            #[allow(unsafe_code)]
            unsafe {
                std::env::remove_var(name)
            };
        }
    }
    let _ = ENVIRONMENT.set(environment);
}

/// The notify socket, when systemd started this daemon.
pub(super) fn notify_address() -> Option<String> {
    ENVIRONMENT.get()?.notify.clone()
}

/// The descriptors systemd passed in, by name (once; each becomes owned here).
pub(super) fn take_passed() -> Vec<(String, OwnedFd)> {
    static TAKEN: OnceLock<()> = OnceLock::new();
    let Some(environment) = ENVIRONMENT.get() else { return Vec::new() };
    if TAKEN.set(()).is_err() {
        return Vec::new();
    }
    environment
        .passed
        .iter()
        .filter_map(|(name, raw)| {
            // SAFETY: `fcntl` proves the number names an open descriptor; systemd passed it to
            // this process alone (`LISTEN_PID`), and this runs once, so nothing else owns it.
            #[allow(unsafe_code)]
            let fd = unsafe {
                rustix::io::fcntl_getfd(BorrowedFd::borrow_raw(*raw)).ok()?;
                OwnedFd::from_raw_fd(*raw)
            };
            rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::CLOEXEC).ok()?;
            Some((name.clone(), fd))
        })
        .collect()
}

/// A datagram socket to systemd's notify socket.
#[derive(Debug)]
pub(super) struct Notifier {
    socket: OwnedFd,
    address: SocketAddrUnix,
}

impl Notifier {
    pub(super) fn open(address: &str) -> std::io::Result<Self> {
        let address = match address.strip_prefix('@') {
            Some(abstract_name) => SocketAddrUnix::new_abstract_name(abstract_name.as_bytes())?,
            None => SocketAddrUnix::new(address)?,
        };
        let socket = rustix::net::socket_with(AddressFamily::UNIX, SocketType::DGRAM, SocketFlags::CLOEXEC, None)?;
        Ok(Self { socket, address })
    }

    pub(super) fn store(&self, name: &str, fd: BorrowedFd<'_>) -> std::io::Result<()> {
        wire::send(self.socket.as_fd(), Some(&self.address), &format!("FDSTORE=1\nFDNAME={name}"), Some(fd))
    }

    pub(super) fn remove(&self, name: &str) -> std::io::Result<()> {
        wire::send(self.socket.as_fd(), Some(&self.address), &format!("FDSTOREREMOVE=1\nFDNAME={name}"), None)
    }
}
