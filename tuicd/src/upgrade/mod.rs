//! Upgrade in place: the running daemon re-executes its binary (the one now on disk) in the same
//! process, so every session's child stays its child, and the new image carries on serving with
//! every PTY, the IPC listener, the rings and the `/events` history.
//!
//! The sequence ([`run`]):
//! 1. The new binary reads a trial snapshot (`tuicd handover-check`, fed on stdin). A binary that
//!    reads another snapshot format (a downgrade) or a snapshot it cannot parse refuses here, and
//!    the old daemon keeps serving and says why.
//! 2. ACP agents and upstream MCP servers are stopped (the new image starts its own); no session is
//!    created from now on; every PTY reader stops, so what programs write meanwhile waits in the
//!    kernel; queued input is written.
//! 3. The snapshot goes into a memfd; the descriptors it names lose close-on-exec; `exec`.
//! 4. The new image ([`take_inherited`]) reads the snapshot before anything else, adopts the
//!    listener and every session (rings continuing at the same cursors, screens replayed from
//!    them) and serves. Clients see their connection close and resume at their cursor.
//!
//! Not carried over: connections (clients reconnect), ACP agents and upstream server processes
//! (restarted), the agent engine's view of each agent (re-learnt from the output that follows),
//! the remote-access TCP listener (bound again; connection attempts in the gap are refused).

pub(crate) mod snapshot;

use std::io::{Read, Seek, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};

use crate::events::EventBus;
use crate::lock::Recover;
use crate::session::SessionRegistry;
use crate::session::handover::Handed;
pub(crate) use snapshot::FORMAT;
use snapshot::{Header, SessionEntry};

/// The environment variable naming the snapshot's memfd in the new image.
const ENV: &str = "TUICD_HANDOVER_FD";
/// The hidden subcommand that reads a trial snapshot on stdin.
pub const CHECK_SUBCOMMAND: &str = "handover-check";
/// How long the new binary may take to read the trial.
const CHECK_DEADLINE: Duration = Duration::from_secs(20);
/// How long freezing the sessions may take in all.
const FREEZE_DEADLINE: Duration = Duration::from_secs(2);

/// Why an upgrade was refused (the old daemon serves on).
pub(crate) type Refusal = String;

/// Upgrade requests from the route and SIGUSR2 to the serve loop, which owns the listener.
#[derive(Debug)]
pub(crate) struct Requests {
    sender: mpsc::Sender<oneshot::Sender<Refusal>>,
    receiver: Mutex<Option<mpsc::Receiver<oneshot::Sender<Refusal>>>>,
}

impl Default for Requests {
    fn default() -> Self {
        let (sender, receiver) = mpsc::channel(4);
        Self { sender, receiver: Mutex::new(Some(receiver)) }
    }
}

impl Requests {
    /// Asks for an upgrade. Resolves with the refusal; on success the process image is replaced
    /// and it never resolves (the caller's connection closes).
    pub(crate) async fn request(&self) -> Refusal {
        let (reply, answer) = oneshot::channel();
        if self.sender.send(reply).await.is_err() {
            return "the daemon is not serving".into();
        }
        answer.await.unwrap_or_else(|_| "the upgrade was abandoned".into())
    }

    /// The serve loop's end (once).
    pub(crate) fn take_receiver(&self) -> Option<mpsc::Receiver<oneshot::Sender<Refusal>>> {
        self.receiver.locked().take()
    }
}

/// What [`run`] hands over, as explicit parts.
pub(crate) struct Parts<'a> {
    pub sessions: &'a SessionRegistry,
    pub events: &'a EventBus,
    pub mcp_sessions: Vec<snapshot::McpSession>,
    pub ipc: BorrowedFd<'a>,
}

/// Hands everything over and execs the binary on disk. `stop_children` stops what the new image
/// restarts (ACP agents, upstream servers); it runs once the trial passed. Returns only when
/// refused; if `exec` itself fails, the sessions are frozen already and the process exits.
pub(crate) async fn run(parts: Parts<'_>, stop_children: impl FnOnce()) -> Refusal {
    let exe = match new_binary() {
        Ok(exe) => exe,
        Err(refusal) => return refusal,
    };
    let trial = parts.sessions.hand_trial();
    let (header, rings) = snapshot_of(&parts, &trial);
    if let Err(refusal) = check(&exe, snapshot::encode(&header, &rings)).await {
        return refusal;
    }
    drop(trial);
    tracing::info!(binary = %exe.display(), "upgrading in place: handing over every session");
    stop_children();
    let freezing = std::time::Instant::now();
    let handed = parts.sessions.freeze(FREEZE_DEADLINE).await;
    let (header, rings) = snapshot_of(&parts, &handed);
    tracing::info!(
        sessions = handed.len(),
        ring_bytes = rings.iter().map(|r| r.len()).sum::<usize>(),
        freeze_ms = freezing.elapsed().as_millis() as u64,
        "sessions frozen; executing the new binary"
    );
    let mut keep: Vec<BorrowedFd<'_>> = vec![parts.ipc];
    keep.extend(handed.iter().flat_map(|h| [h.master.as_fd(), h.pidfd.as_fd()]));
    let error = exec(&exe, &snapshot::encode(&header, &rings), &keep);
    tracing::error!(binary = %exe.display(), error = %error, "exec failed after the sessions were frozen; exiting");
    std::process::exit(1);
}

fn snapshot_of<'h>(parts: &Parts<'_>, handed: &'h [Handed]) -> (Header, Vec<&'h [u8]>) {
    let sessions = handed
        .iter()
        .map(|h| SessionEntry {
            meta: h.meta.clone(),
            ring_len: h.ring.len() as u64,
            master_fd: h.master.as_raw_fd(),
            pidfd: h.pidfd.as_raw_fd(),
        })
        .collect();
    let (next_id, history) = parts.events.export();
    let header = Header {
        daemon_version: env!("CARGO_PKG_VERSION").into(),
        ipc_fd: parts.ipc.as_raw_fd(),
        sessions,
        events: snapshot::Events {
            next_id,
            history: history.into_iter().map(|e| (e.id, e.kind.to_owned(), e.data.to_string())).collect(),
        },
        mcp_sessions: parts.mcp_sessions.clone(),
        frozen_unix_ms: unix_ms(),
    };
    (header, handed.iter().map(|h| h.ring.as_slice()).collect())
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// How long ago the previous image froze its sessions (`Inherited::frozen_unix_ms`).
pub(crate) fn since(frozen_unix_ms: u64) -> Duration {
    Duration::from_millis(unix_ms().saturating_sub(frozen_unix_ms))
}

/// The binary now at the path this process was started from (`/proc/self/exe` names the old
/// inode, marked deleted once a new file took its place).
fn new_binary() -> Result<PathBuf, Refusal> {
    let link = std::fs::read_link("/proc/self/exe").map_err(|e| format!("cannot read /proc/self/exe: {e}"))?;
    let text = link.to_string_lossy();
    let path = PathBuf::from(text.strip_suffix(" (deleted)").unwrap_or(&text));
    if !path.is_file() {
        return Err(format!("no binary at {} to upgrade to", path.display()));
    }
    Ok(path)
}

/// The new binary reads the trial snapshot; its refusal is the upgrade's.
async fn check(exe: &std::path::Path, trial: Vec<u8>) -> Result<(), Refusal> {
    let mut child = tokio::process::Command::new(exe)
        .arg(CHECK_SUBCOMMAND)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run {} {CHECK_SUBCOMMAND}: {e}", exe.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin for the check")?;
    let feed = async move {
        // A binary that refuses early stops reading: the write then fails, which says nothing more.
        let _ = stdin.write_all(&trial).await;
    };
    let run = async {
        let ((), output) = tokio::join!(feed, child.wait_with_output());
        output
    };
    let output = tokio::time::timeout(CHECK_DEADLINE, run)
        .await
        .map_err(|_| format!("{} {CHECK_SUBCOMMAND} did not answer within {CHECK_DEADLINE:?}", exe.display()))?
        .map_err(|e| format!("{} {CHECK_SUBCOMMAND}: {e}", exe.display()))?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let said = said.trim().trim_start_matches("tuicd: ");
    Err(format!("the binary at {} cannot take over: {said}", exe.display()))
}

/// Writes the snapshot to a memfd and execs `exe` with the same arguments, keeping `keep` (and the
/// memfd) open. Returns only on failure.
fn exec(exe: &std::path::Path, bytes: &[u8], keep: &[BorrowedFd<'_>]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    let memfd = match rustix::fs::memfd_create("tuicd-handover", rustix::fs::MemfdFlags::empty()) {
        Ok(fd) => fd,
        Err(e) => return e.into(),
    };
    let mut file = std::fs::File::from(memfd);
    if let Err(e) = file.write_all(bytes).and_then(|()| file.rewind()) {
        return e;
    }
    for fd in keep {
        if let Err(e) = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty()) {
            return e.into();
        }
    }
    std::process::Command::new(exe).args(std::env::args_os().skip(1)).env(ENV, file.as_raw_fd().to_string()).exec()
}

/// The snapshot's memfd, taken from the environment by [`take_env`] before any thread starts.
static INHERITED_FD: OnceLock<Option<RawFd>> = OnceLock::new();

/// Reads and removes [`ENV`]. Called first thing in `main`, while the process has one thread.
pub fn take_env() {
    let fd = std::env::var(ENV).ok().and_then(|v| v.parse::<RawFd>().ok());
    if std::env::var_os(ENV).is_some() {
        // SAFETY: called before the runtime starts, while this is the process's only thread.
        #[allow(unsafe_code)]
        unsafe {
            std::env::remove_var(ENV)
        };
    }
    let _ = INHERITED_FD.set(fd);
}

/// What the previous image handed over, besides its IPC listener.
pub(crate) struct Inherited {
    pub sessions: Vec<Handed>,
    pub events: snapshot::Events,
    pub mcp_sessions: Vec<snapshot::McpSession>,
    pub from_version: String,
    pub frozen_unix_ms: u64,
}

/// The hand-over (the IPC listener and the rest), when this process image is an upgrade's:
/// `None` for a fresh start.
pub(crate) fn take_inherited() -> Option<Result<(OwnedFd, Inherited), String>> {
    let raw = (*INHERITED_FD.get()?)?;
    Some(adopt_fd(raw).ok_or_else(|| format!("{ENV}={raw} names no open descriptor")).and_then(read_inherited))
}

fn read_inherited(memfd: OwnedFd) -> Result<(OwnedFd, Inherited), String> {
    let mut bytes = Vec::new();
    std::fs::File::from(memfd).read_to_end(&mut bytes).map_err(|e| format!("reading the snapshot: {e}"))?;
    let (header, rings) = snapshot::decode(&bytes).map_err(|e| e.to_string())?;
    let ipc = adopt_fd(header.ipc_fd).ok_or("the IPC listener's descriptor is not open")?;
    let mut sessions = Vec::with_capacity(header.sessions.len());
    for (entry, ring) in header.sessions.into_iter().zip(rings) {
        let (Some(master), Some(pidfd)) = (adopt_fd(entry.master_fd), adopt_fd(entry.pidfd)) else {
            tracing::warn!(session = %entry.meta.id, "a handed-over session's descriptors are not open; dropped");
            continue;
        };
        sessions.push(Handed { meta: entry.meta, ring: ring.to_vec(), master, pidfd });
    }
    let inherited = Inherited {
        sessions,
        events: header.events,
        mcp_sessions: header.mcp_sessions,
        from_version: header.daemon_version,
        frozen_unix_ms: header.frozen_unix_ms,
    };
    Ok((ipc, inherited))
}

/// Owns a descriptor the previous image left open for this one, close-on-exec again.
fn adopt_fd(raw: RawFd) -> Option<OwnedFd> {
    if raw < 3 {
        return None;
    }
    // SAFETY: `fcntl` proves the number names an open descriptor; the previous image left it open
    // across `exec` for this process alone and named it once in the snapshot, so nothing else in
    // this process owns it.
    #[allow(unsafe_code)]
    let fd = unsafe {
        rustix::io::fcntl_getfd(BorrowedFd::borrow_raw(raw)).ok()?;
        OwnedFd::from_raw_fd(raw)
    };
    rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::CLOEXEC).ok()?;
    Some(fd)
}

/// `tuicd handover-check`: reads a trial snapshot on stdin; exit 0 when this binary can take it
/// over, else the reason on stderr.
pub fn check_main() -> std::process::ExitCode {
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
        eprintln!("tuicd: reading the snapshot: {e}");
        return std::process::ExitCode::FAILURE;
    }
    match snapshot::decode(&bytes) {
        Ok((header, _)) => {
            println!(
                "snapshot format {FORMAT} from tuicd {}: {} sessions, {} events",
                header.daemon_version,
                header.sessions.len(),
                header.events.history.len()
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tuicd: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
