//! Running a short-lived child process with a deadline: `gh` and `git` calls, worktree setup
//! scripts, `ai_terminal_run_command`. One runner, so every caller gets the same guarantees:
//! - the child leads its own process group; when the run ends (at its deadline, or once the
//!   child has exited and its pipes are closed) whatever is left of the group is killed, so a
//!   command's own children never outlive it;
//! - the deadline holds for the whole run: the wait for the child and the reading of its pipes
//!   both stop there, so a background child (`sleep 40 &`) that keeps the pipes open after the
//!   shell exited ends the run at the deadline with `timed_out`;
//! - at the deadline the group gets SIGTERM, then SIGKILL after [`CHILD_TERM_GRACE`];
//! - stdout and stderr are read with a cap on what is kept (the rest is counted and dropped), so
//!   a flood neither grows memory nor blocks the child on a full pipe;
//! - a grandchild that escapes the group (`setsid`) and holds a pipe open cannot hold the caller:
//!   after the kill, the pipes get [`CHILD_DRAIN_GRACE`] and are abandoned;
//! - a caller that stops waiting (its request dropped) kills the group too.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::limits::{CHILD_DRAIN_GRACE, CHILD_GROUP_POLL, CHILD_TERM_GRACE};
use crate::lock::Recover;

/// What to run.
#[derive(Debug)]
pub(crate) struct Spec<'a> {
    pub program: &'a str,
    pub args: &'a [&'a str],
    pub cwd: &'a Path,
    /// Set on top of the daemon's environment.
    pub env: &'a [(&'a str, &'a str)],
    /// Fed to stdin, which is closed after it (and null without it).
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    /// Most bytes kept of each stream (of the one merged stream with `merge_output`).
    pub keep: usize,
    /// stderr goes to the same pipe as stdout, so the two keep the order they were written in.
    pub merge_output: bool,
    /// Past `keep`, a stream's pipe is closed instead of drained: the child stops on a broken
    /// pipe rather than producing what nobody keeps (`git log` on a huge history).
    pub stop_at_cap: bool,
}

/// One stream's output: the bytes kept and how many were dropped past the cap.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    pub bytes: Vec<u8>,
    pub dropped: u64,
}

impl Captured {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// How a run ended. `code` is None when a signal ended it (the deadline's kill included).
#[derive(Debug)]
pub(crate) struct Finished {
    pub code: Option<i32>,
    pub stdout: Captured,
    /// Empty with `merge_output`.
    pub stderr: Captured,
    pub timed_out: bool,
    pub elapsed: Duration,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum SpawnError {
    #[error("'{program}' was not found on PATH")]
    NotFound { program: String },
    #[error("'{program}' could not be run: {source}")]
    Io { program: String, source: std::io::Error },
}

/// Runs `spec` to its end or its deadline.
pub(crate) async fn run(spec: Spec<'_>) -> Result<Finished, SpawnError> {
    let program = spec.program;
    let io = |source| SpawnError::Io { program: program.into(), source };
    let started = Instant::now();
    let deadline = tokio::time::Instant::from_std(started + spec.timeout);
    let mut command = Command::new(program);
    command
        .args(spec.args)
        .current_dir(spec.cwd)
        .envs(spec.env.iter().copied())
        .stdin(if spec.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .process_group(0)
        .kill_on_drop(true);
    let merged = if spec.merge_output {
        let (reader, writer) = std::io::pipe().map_err(io)?;
        let writer_err = writer.try_clone().map_err(io)?;
        command.stdout(writer).stderr(writer_err);
        Some(reader)
    } else {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        None
    };
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => SpawnError::NotFound { program: program.into() },
        _ => io(e),
    })?;
    // The parent's copies of the merged pipe's write ends go with `command`: only the child's
    // group holds them now, so the reader sees their end.
    drop(command);
    // The child leads its group (`process_group(0)`): its pid is the group's id.
    let group = Group(child.id().and_then(|p| Pid::from_raw(p as i32)));
    let (keep, stop_at_cap) = (spec.keep, spec.stop_at_cap);
    let (out_kept, err_kept) = (Kept::default(), Kept::default());
    let mut readers = Vec::with_capacity(2);
    match merged {
        Some(reader) => {
            let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into()).map_err(io)?;
            readers.push(tokio::spawn(capture(reader, keep, stop_at_cap, out_kept.clone())));
        }
        None => {
            if let Some(stdout) = child.stdout.take() {
                readers.push(tokio::spawn(capture(stdout, keep, stop_at_cap, out_kept.clone())));
            }
        }
    }
    if let Some(stderr) = child.stderr.take() {
        readers.push(tokio::spawn(capture(stderr, keep, stop_at_cap, err_kept.clone())));
    }
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), spec.stdin) {
        // A child that exits without reading its input closes the pipe: not our error.
        tokio::spawn(async move {
            let _ = pipe.write_all(&bytes).await;
        });
    }
    let mut code = None;
    // The run ends when the child has exited and every pipe is closed, or at the deadline.
    let in_time = tokio::time::timeout_at(deadline, async {
        let status = child.wait().await;
        code = status.as_ref().ok().and_then(std::process::ExitStatus::code);
        for reader in &mut readers {
            let _ = reader.await;
        }
        status
    })
    .await;
    let timed_out = match in_time {
        Ok(status) => {
            status.map_err(io)?;
            false
        }
        Err(_) => {
            group.stop(&mut child).await;
            // The leader's status when it was still running at the deadline: the kill ended it.
            if code.is_none()
                && let Ok(Ok(status)) = tokio::time::timeout(CHILD_TERM_GRACE, child.wait()).await
            {
                code = status.code();
            }
            // What the group wrote before it died is still in the pipes: read it briefly, then
            // abandon a pipe an escaped grandchild holds.
            let drain = tokio::time::Instant::now() + CHILD_DRAIN_GRACE;
            for reader in &mut readers {
                if !reader.is_finished() {
                    let _ = tokio::time::timeout_at(drain, &mut *reader).await;
                }
            }
            true
        }
    };
    for reader in &readers {
        reader.abort();
    }
    // Whatever of the group outlived the child with its pipes closed (`cmd >/dev/null 2>&1 &`)
    // ends with the run.
    group.kill();
    let (stdout, stderr) = (out_kept.take(), err_kept.take());
    Ok(Finished { code, stdout, stderr, timed_out, elapsed: started.elapsed() })
}

/// What a reader has kept so far; shared so the runner takes it whenever the reading stops.
#[derive(Debug, Default, Clone)]
struct Kept(Arc<Mutex<Captured>>);

impl Kept {
    fn take(&self) -> Captured {
        std::mem::take(&mut *self.0.locked())
    }
}

async fn capture(mut stream: impl AsyncRead + Unpin, keep: usize, stop_at_cap: bool, kept: Kept) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut captured = kept.0.locked();
                let room = keep.saturating_sub(captured.bytes.len());
                captured.bytes.extend_from_slice(&buf[..n.min(room)]);
                captured.dropped += n.saturating_sub(room) as u64;
                if stop_at_cap && captured.dropped > 0 {
                    return;
                }
            }
        }
    }
}

/// A run's process group. Dropped (the caller stopped waiting) it is killed, so a cancelled
/// request leaves nothing running.
struct Group(Option<Pid>);

impl Group {
    /// Whether any process of the group is still alive.
    fn alive(&self) -> bool {
        self.0.is_some_and(|pid| rustix::process::test_kill_process_group(pid).is_ok())
    }

    fn signal(&self, signal: Signal) {
        if let Some(pid) = self.0 {
            // ESRCH: the group is already gone.
            let _ = rustix::process::kill_process_group(pid, signal);
        }
    }

    /// SIGTERM, then SIGKILL to whatever is left after [`CHILD_TERM_GRACE`]. `leader` is reaped
    /// meanwhile: a zombie still counts as a member of its group.
    async fn stop(&self, leader: &mut tokio::process::Child) {
        self.signal(Signal::TERM);
        let grace = Instant::now() + CHILD_TERM_GRACE;
        loop {
            let _ = leader.try_wait();
            if !self.alive() || Instant::now() >= grace {
                break;
            }
            tokio::time::sleep(CHILD_GROUP_POLL).await;
        }
        self.signal(Signal::KILL);
    }

    fn kill(&self) {
        self.signal(Signal::KILL);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(args: &'a [&'a str], cwd: &'a Path) -> Spec<'a> {
        Spec {
            program: "sh",
            args,
            cwd,
            env: &[],
            stdin: None,
            timeout: Duration::from_secs(10),
            keep: 1024,
            merge_output: false,
            stop_at_cap: false,
        }
    }

    #[tokio::test]
    async fn a_run_past_its_deadline_is_stopped_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-c", "echo started; sleep 30 & sleep 30"];
        let started = Instant::now();
        let done = run(Spec { timeout: Duration::from_millis(300), ..spec(&args, dir.path()) }).await.unwrap();
        assert!(done.timed_out && done.code.is_none(), "{done:?}");
        assert_eq!(done.stdout.text(), "started\n");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    /// Whether the process whose pid `file` holds has ended (gone, or a zombie not yet reaped by
    /// whoever adopted it).
    /// A SIGKILL lands a moment after it is sent: waits up to 5 s for it.
    fn gone(file: &Path) -> bool {
        let pid = std::fs::read_to_string(file).unwrap();
        let ended = || {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
            stat.rsplit_once(')').is_none_or(|(_, rest)| rest.trim_start().starts_with('Z'))
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !ended() {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    #[tokio::test]
    async fn a_background_child_holding_the_pipes_ends_the_run_at_the_deadline_and_dies() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!("sleep 40 & echo $! > {}; echo started", pid_file.display());
        let args = ["-c", script.as_str()];
        let started = Instant::now();
        let done = run(Spec { timeout: Duration::from_millis(700), ..spec(&args, dir.path()) }).await.unwrap();
        let took = started.elapsed();
        // The shell itself exited at once, with 0: only the sleep held the pipes.
        assert!(done.timed_out && done.code == Some(0), "{done:?}");
        assert_eq!(done.stdout.text(), "started\n");
        assert!(took < Duration::from_millis(700) + Duration::from_secs(2), "{took:?}");
        assert!(gone(&pid_file), "the background sleep was killed");
    }

    #[tokio::test]
    async fn a_quiet_background_child_dies_with_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!("sleep 40 >/dev/null 2>&1 & echo $! > {}", pid_file.display());
        let args = ["-c", script.as_str()];
        let done = run(spec(&args, dir.path())).await.unwrap();
        assert!(!done.timed_out && done.code == Some(0), "{done:?}");
        assert!(gone(&pid_file), "the group was killed when the run ended");
    }

    #[tokio::test]
    async fn an_escaped_grandchild_holding_the_pipe_does_not_hold_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        // setsid leaves the process group, so the deadline's kill misses it; its pipe is abandoned.
        let args = ["-c", "setsid sleep 30 & sleep 30"];
        let started = Instant::now();
        let done = run(Spec { timeout: Duration::from_millis(300), ..spec(&args, dir.path()) }).await.unwrap();
        assert!(done.timed_out, "{done:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn output_exit_code_and_stdin_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-c", "cat; echo oops >&2; exit 3"];
        let done = run(Spec { stdin: Some(b"in".to_vec()), ..spec(&args, dir.path()) }).await.unwrap();
        assert_eq!((done.code, done.stdout.text().as_str(), done.stderr.text().trim()), (Some(3), "in", "oops"));
        let missing = run(Spec { program: "no-such-tool-here", ..spec(&[], dir.path()) }).await.unwrap_err();
        assert!(matches!(missing, SpawnError::NotFound { .. }), "{missing}");
    }

    #[tokio::test]
    async fn output_past_the_cap_is_counted_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-c", "head -c 100000 /dev/zero"];
        let done = run(Spec { keep: 1000, ..spec(&args, dir.path()) }).await.unwrap();
        assert_eq!((done.stdout.bytes.len(), done.stdout.dropped), (1000, 99_000));
    }

    #[tokio::test]
    async fn stop_at_cap_closes_the_pipe_instead_of_draining_it() {
        let dir = tempfile::tempdir().unwrap();
        // Endless output: only a closed pipe stops it before the deadline.
        let args = ["-c", "yes"];
        let done = run(Spec { keep: 1000, stop_at_cap: true, ..spec(&args, dir.path()) }).await.unwrap();
        // `yes` dies of SIGPIPE; the shell around it reports 141 (128 + SIGPIPE) or is the one killed.
        assert!(!done.timed_out && matches!(done.code, None | Some(141)), "{:?} {:?}", done.code, done.elapsed);
        assert_eq!(done.stdout.bytes.len(), 1000);
        assert!(done.stdout.dropped > 0);
    }

    #[tokio::test]
    async fn merged_output_keeps_the_order_it_was_written_in() {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-c", "echo one; echo two >&2; echo three"];
        let done = run(Spec { merge_output: true, ..spec(&args, dir.path()) }).await.unwrap();
        assert_eq!(done.stdout.text(), "one\ntwo\nthree\n");
        assert!(done.stderr.bytes.is_empty());
    }
}
