//! A session's child process, known by a pidfd: the one way to wait for it and signal it, whether
//! tuicd spawned it, inherited it across an upgrade in place (`exec`, still its child) or re-adopted
//! it after a crash (reparented, no longer its child). A pidfd names one process for its whole
//! life, so a pid reused after the child is gone is never signalled.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::io::Errno;
use rustix::process::{Pid, PidfdFlags, Signal, WaitId, WaitIdOptions, pidfd_open, pidfd_send_signal, waitid};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

#[derive(Debug)]
pub(crate) struct ChildProcess {
    pid: u32,
    pidfd: OwnedFd,
}

impl ChildProcess {
    /// The child just spawned (not yet reaped, so its pid cannot have been reused).
    pub(super) fn spawned(child: &std::process::Child) -> io::Result<Self> {
        let pid = child.id();
        let raw = Pid::from_raw(pid as i32).ok_or_else(|| io::Error::other("the child has no pid"))?;
        let pidfd = pidfd_open(raw, PidfdFlags::empty())?;
        Ok(Self { pid, pidfd })
    }

    /// A process handed over with its pidfd (upgrade in place, or a fd holder after a crash).
    pub(crate) fn adopted(pid: u32, pidfd: OwnedFd) -> Self {
        Self { pid, pidfd }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    pub(crate) fn pidfd(&self) -> BorrowedFd<'_> {
        self.pidfd.as_fd()
    }

    /// Sends `signal` to the process (a no-op once it has exited).
    pub(crate) fn signal(&self, signal: Signal) {
        let _ = pidfd_send_signal(&self.pidfd, signal);
    }

    /// Whether the process still runs (a zombie counts as gone).
    pub(crate) fn is_running(&self) -> bool {
        running(self.pidfd.as_fd())
    }

    /// Waits for the process to exit. The exit code (or 128 + signal) when it is tuicd's child,
    /// reaping it; `None` when it is not (re-adopted after a crash: its parent now reaps it).
    pub(crate) async fn wait(&self) -> Option<i32> {
        let watched = self.pidfd.try_clone().ok()?;
        // SAFETY: the registered descriptor is the `OwnedFd` the `AsyncFd` owns: it stays open
        // until the `AsyncFd` is dropped, which deregisters it first.
        #[allow(unsafe_code)]
        let registered = unsafe { AsyncFd::register_with_interest(watched, Interest::READABLE) };
        if let Ok(readable) = registered {
            // A pidfd turns readable when its process exits, and stays so.
            let _ = readable.readable().await;
        }
        loop {
            match waitid(WaitId::PidFd(self.pidfd.as_fd()), WaitIdOptions::EXITED) {
                Ok(Some(status)) => {
                    return status.exit_status().or_else(|| status.terminating_signal().map(|s| 128 + s));
                }
                Ok(None) => return None,
                Err(Errno::INTR) => {}
                Err(_) => return None,
            }
        }
    }
}

/// Whether the process `pidfd` names still runs: a pidfd turns readable when it exits.
pub(crate) fn running(pidfd: BorrowedFd<'_>) -> bool {
    let mut fds = [rustix::event::PollFd::new(&pidfd, rustix::event::PollFlags::IN)];
    let zero = rustix::event::Timespec { tv_sec: 0, tv_nsec: 0 };
    !matches!(rustix::event::poll(&mut fds, Some(&zero)), Ok(n) if n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    #[allow(clippy::zombie_processes, reason = "reaped through the pidfd")]
    async fn the_exit_code_of_a_child_and_of_a_killed_child() {
        let child = std::process::Command::new("/bin/sh").args(["-c", "exit 7"]).spawn().unwrap();
        let process = ChildProcess::spawned(&child).unwrap();
        assert_eq!(process.wait().await, Some(7));
        assert!(!process.is_running());

        let child = std::process::Command::new("/bin/sleep").arg("30").spawn().unwrap();
        let process = ChildProcess::spawned(&child).unwrap();
        assert!(process.is_running());
        process.signal(Signal::KILL);
        assert_eq!(process.wait().await, Some(128 + 9));
    }

    #[tokio::test]
    async fn a_process_that_is_not_our_child_ends_with_an_unknown_code() {
        // `sh` starts `sleep` in the background and exits: `sleep` is reparented, not ours.
        let out =
            std::process::Command::new("/bin/sh").args(["-c", "sleep 0.3 >/dev/null 2>&1 & echo $!"]).output().unwrap();
        let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        let pidfd = pidfd_open(Pid::from_raw(pid as i32).unwrap(), PidfdFlags::empty()).unwrap();
        let process = ChildProcess::adopted(pid, pidfd);
        assert_eq!(tokio::time::timeout(std::time::Duration::from_secs(10), process.wait()).await.unwrap(), None);
    }
}
