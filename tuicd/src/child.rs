//! Running a short-lived child process with a deadline: `gh` and `git` calls, worktree setup
//! scripts, `ai_terminal_run_command`. One runner, so every caller gets the same guarantees:
//! - the child leads its own process group, and the whole group is killed at the deadline (a
//!   command's own children never outlive it);
//! - stdout and stderr are read to their end with a cap on what is kept (the rest is counted and
//!   dropped), so a flood neither grows memory nor blocks the child on a full pipe;
//! - a grandchild that escapes the group and holds a pipe open cannot hold the caller: after the
//!   kill, the pipes get [`DRAIN_GRACE`] and are abandoned.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

/// How long the pipes are still read after the group is killed at its deadline.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

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
    // The parent's copies of the merged pipe's write ends went with `command`'s drop below.
    drop(command);
    let pid = child.id();
    let keep = spec.keep;
    let stdout = match merged {
        Some(reader) => {
            let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into()).map_err(io)?;
            tokio::spawn(capture(Some(reader), keep))
        }
        None => tokio::spawn(capture(child.stdout.take(), keep)),
    };
    let stderr = tokio::spawn(capture(child.stderr.take(), keep));
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), spec.stdin) {
        // A child that exits without reading its input closes the pipe: not our error.
        tokio::spawn(async move {
            let _ = pipe.write_all(&bytes).await;
        });
    }
    let (code, timed_out) = match tokio::time::timeout(spec.timeout, child.wait()).await {
        Ok(status) => (status.map_err(io)?.code(), false),
        Err(_) => {
            if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            let _ = child.wait().await;
            (None, true)
        }
    };
    let drained = |task: tokio::task::JoinHandle<Captured>| async move {
        if timed_out {
            tokio::time::timeout(DRAIN_GRACE, task).await.ok().and_then(Result::ok).unwrap_or_default()
        } else {
            task.await.unwrap_or_default()
        }
    };
    let (stdout, stderr) = tokio::join!(drained(stdout), drained(stderr));
    Ok(Finished { code, stdout, stderr, timed_out, elapsed: started.elapsed() })
}

async fn capture(stream: Option<impl AsyncRead + Unpin>, keep: usize) -> Captured {
    let mut captured = Captured::default();
    let Some(mut stream) = stream else { return captured };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return captured,
            Ok(n) => {
                let room = keep.saturating_sub(captured.bytes.len());
                captured.bytes.extend_from_slice(&buf[..n.min(room)]);
                captured.dropped += n.saturating_sub(room) as u64;
            }
        }
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
    async fn merged_output_keeps_the_order_it_was_written_in() {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-c", "echo one; echo two >&2; echo three"];
        let done = run(Spec { merge_output: true, ..spec(&args, dir.path()) }).await.unwrap();
        assert_eq!(done.stdout.text(), "one\ntwo\nthree\n");
        assert!(done.stderr.bytes.is_empty());
    }
}
