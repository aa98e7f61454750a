//! Crash recovery: every session's PTY master and pidfd are also held outside the daemon, so that
//! when the daemon dies (kill -9, a panic, the OOM killer) the terminals stay open and their
//! programs keep running, and the next daemon takes them back. The holder is systemd's
//! file-descriptor store when systemd runs the daemon (`systemd.rs`), otherwise a keeper process of
//! tuicd's own (`keeper.rs`); without either the daemon says so at start. What the descriptors
//! belong to (each session's identity) is a small journal on disk beside them, one file per
//! session, in the daemon's private runtime directory.
//!
//! What a crash still loses: the output the daemon had read and not yet sent (its ring), so a
//! re-adopted session's cursors start again at 0 and its screen is rebuilt from what its program
//! prints next; the exit code of a re-adopted program (no longer tuicd's child: its exit is seen
//! through the pidfd, its code is unknown).

pub(crate) mod keeper;
pub(crate) mod systemd;
mod wire;

use std::collections::BTreeMap;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};

use crate::lock::Recover;

/// `TUIC_KEEPER=off` starts no keeper (under systemd the store is used regardless).
const ENV_SWITCH: &str = "TUIC_KEEPER";
/// How long a keeper just started may take to listen.
const KEEPER_START: Duration = Duration::from_secs(5);

#[derive(Debug)]
enum Holder {
    Systemd(systemd::Notifier),
    Keeper(Mutex<OwnedFd>),
    Off,
}

/// The holder of the daemon's descriptors and the journal of what they are.
#[derive(Debug)]
pub(crate) struct Keep {
    holder: Holder,
    dir: PathBuf,
}

impl Keep {
    /// Opens the holder for the daemon whose runtime directory is `dir` (created 0700 by the
    /// daemon): systemd's store when systemd started the daemon, else the keeper (started when
    /// none answers). Returns what a previous daemon left there, by name; with `upgraded` (the
    /// sessions were handed over with their descriptors) nothing is taken back from the keeper.
    pub(crate) fn open(dir: &Path, upgraded: bool) -> (Self, BTreeMap<String, OwnedFd>) {
        let dir = dir.to_owned();
        let created = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir);
        if let Err(e) = created {
            tracing::warn!(dir = %dir.display(), error = %e, "crash recovery is off: cannot create its directory");
            return (Self { holder: Holder::Off, dir }, BTreeMap::new());
        }
        if let Some(address) = systemd::notify_address() {
            match systemd::Notifier::open(&address) {
                Ok(notifier) => {
                    let left: BTreeMap<_, _> = systemd::take_passed().into_iter().collect();
                    tracing::info!(held = left.len(), "crash recovery: sessions are kept in systemd's fd store");
                    return (Self { holder: Holder::Systemd(notifier), dir }, left);
                }
                Err(e) => tracing::warn!(error = %e, "systemd's notify socket is unusable; trying the keeper"),
            }
        }
        if std::env::var(ENV_SWITCH).is_ok_and(|v| v == "off") {
            tracing::warn!("crash recovery is off ({ENV_SWITCH}=off): sessions end if the daemon dies");
            return (Self { holder: Holder::Off, dir }, BTreeMap::new());
        }
        match connect_keeper(&dir.join("keeper.sock"), !upgraded) {
            Ok((conn, left)) => {
                tracing::info!(held = left.len(), "crash recovery: sessions are kept by tuicd's keeper process");
                (Self { holder: Holder::Keeper(Mutex::new(conn)), dir }, left)
            }
            Err(e) => {
                tracing::warn!(error = %e, "crash recovery is off: no keeper; sessions end if the daemon dies");
                (Self { holder: Holder::Off, dir }, BTreeMap::new())
            }
        }
    }

    /// Which holder keeps the descriptors (`/health`).
    pub(crate) fn holder(&self) -> &'static str {
        match self.holder {
            Holder::Systemd(_) => "systemd",
            Holder::Keeper(_) => "keeper",
            Holder::Off => "off",
        }
    }

    /// Holds `fds` under their names and records `record` (the identity they belong to) as `id`.
    pub(crate) fn hold(&self, id: &str, record: &[u8], fds: &[(&str, BorrowedFd<'_>)]) {
        if matches!(self.holder, Holder::Off) {
            return;
        }
        if let Err(e) = crate::private_file::write(&self.dir.join(format!("{id}.json")), record) {
            tracing::warn!(session = %id, error = %e, "crash recovery: cannot record the session");
            return;
        }
        for (name, fd) in fds {
            let held = match &self.holder {
                Holder::Systemd(notifier) => notifier.store(name, *fd),
                Holder::Keeper(conn) => wire::send(conn.locked().as_fd(), None, &format!("PUT {name}"), Some(*fd)),
                Holder::Off => Ok(()),
            };
            if let Err(e) = held {
                tracing::warn!(session = %id, error = %e, "crash recovery: the holder refused a descriptor");
            }
        }
    }

    /// Lets go of `names` and forgets `id`'s record, if any.
    pub(crate) fn release(&self, id: Option<&str>, names: &[&str]) {
        if matches!(self.holder, Holder::Off) {
            return;
        }
        for name in names {
            let _ = match &self.holder {
                Holder::Systemd(notifier) => notifier.remove(name),
                Holder::Keeper(conn) => wire::send(conn.locked().as_fd(), None, &format!("DEL {name}"), None),
                Holder::Off => Ok(()),
            };
        }
        if let Some(id) = id {
            let _ = std::fs::remove_file(self.dir.join(format!("{id}.json")));
        }
    }

    /// The records a previous daemon left, by id.
    pub(crate) fn records(&self) -> Vec<(String, Vec<u8>)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let id = name.strip_suffix(".json")?.to_owned();
                Some((id, std::fs::read(e.path()).ok()?))
            })
            .collect()
    }
}

/// Connects to the keeper at `path`, starting one when none answers, and (with `take`) takes back
/// what it holds.
fn connect_keeper(path: &Path, take: bool) -> std::io::Result<(OwnedFd, BTreeMap<String, OwnedFd>)> {
    let conn = match connect(path) {
        Ok(conn) => conn,
        Err(_) => {
            start_keeper(path)?;
            let started = Instant::now();
            loop {
                match connect(path) {
                    Ok(conn) => break conn,
                    Err(e) if started.elapsed() > KEEPER_START => return Err(e),
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        }
    };
    let mut left = BTreeMap::new();
    if !take {
        return Ok((conn, left));
    }
    wire::send(conn.as_fd(), None, "TAKE", None)?;
    loop {
        match wire::recv(&conn)? {
            Some((text, Some(fd))) => {
                if let Some(name) = text.strip_prefix("FD ") {
                    left.insert(name.to_owned(), fd);
                }
            }
            Some((text, None)) if text == "END" => break,
            Some(_) => {}
            None => return Err(std::io::Error::other("the keeper closed the connection")),
        }
    }
    Ok((conn, left))
}

fn connect(path: &Path) -> std::io::Result<OwnedFd> {
    let socket = rustix::net::socket_with(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)?;
    rustix::net::connect(&socket, &SocketAddrUnix::new(path)?)?;
    Ok(socket)
}

/// Starts `tuicd keeper PATH` in a session of its own; a thread reaps it when it exits.
fn start_keeper(path: &Path) -> std::io::Result<()> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe()?;
    let mut command = std::process::Command::new(exe);
    command
        .arg(keeper::SUBCOMMAND)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: `setsid` is async-signal-safe and touches no memory of the parent.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(|| rustix::process::setsid().map(drop).map_err(Into::into));
    }
    let mut child = command.spawn()?;
    std::thread::Builder::new().name("tuicd-keeper-reap".into()).spawn(move || child.wait())?;
    Ok(())
}
