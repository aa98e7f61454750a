//! Running a command-line tool (`gh`, and `git` for the tag a changelog starts at) with a
//! deadline: its own process group, killed whole when the deadline passes, stdin closed (or fed
//! a body), stdout and stderr read up to [`GH_OUTPUT_MAX_BYTES`] each.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::limits::GH_OUTPUT_MAX_BYTES;

/// What a finished run left: its exit code (None when a signal ended it) and its output.
#[derive(Debug)]
pub(crate) struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("'{program}' was not found on PATH")]
    NotFound { program: String },
    #[error("'{program}' did not finish within {} s and was stopped", .timeout.as_secs())]
    TimedOut { program: String, timeout: Duration },
    #[error("'{program}' could not be run: {source}")]
    Io { program: String, source: std::io::Error },
}

/// Runs `program args` in `cwd` with `env` set on top of the daemon's environment, feeding it
/// `stdin` when given, and stops its whole process group after `timeout`.
pub(crate) async fn run(
    program: &str,
    args: &[String],
    cwd: &Path,
    env: &[(&str, &str)],
    stdin: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<Output, RunError> {
    let io = |source| RunError::Io { program: program.into(), source };
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => RunError::NotFound { program: program.into() },
        _ => io(e),
    })?;
    let pid = child.id();
    let input = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let finished = async {
        let feed = async {
            if let (Some(mut pipe), Some(bytes)) = (input, stdin) {
                // A tool that exits without reading its input closes the pipe: not our error.
                let _ = pipe.write_all(&bytes).await;
            }
        };
        let (_, out, err) = tokio::join!(feed, read_capped(stdout), read_capped(stderr));
        let status = child.wait().await?;
        Ok::<_, std::io::Error>(Output { code: status.code(), stdout: out, stderr: err })
    };
    match tokio::time::timeout(timeout, finished).await {
        Ok(result) => result.map_err(io),
        Err(_) => {
            if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            Err(RunError::TimedOut { program: program.into(), timeout })
        }
    }
}

async fn read_capped(pipe: Option<impl AsyncRead + Unpin>) -> String {
    let mut bytes = Vec::new();
    if let Some(pipe) = pipe {
        let mut limited = pipe.take(GH_OUTPUT_MAX_BYTES as u64);
        let _ = limited.read_to_end(&mut bytes).await;
        // Drain the rest so the tool is never blocked on a full pipe.
        let mut rest = limited.into_inner();
        let _ = tokio::io::copy(&mut rest, &mut tokio::io::sink()).await;
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_owned()).collect()
    }

    #[tokio::test]
    async fn a_run_past_its_deadline_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        // A child holding the pipes open must not hold the run either.
        let script = "sleep 30 & sleep 30";
        let started = std::time::Instant::now();
        let err =
            run("sh", &strings(&["-c", script]), dir.path(), &[], None, Duration::from_millis(200)).await.unwrap_err();
        assert!(matches!(err, RunError::TimedOut { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        assert!(err.to_string().contains("did not finish within"), "{err}");
    }

    #[tokio::test]
    async fn output_exit_code_and_stdin_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            "sh",
            &strings(&["-c", "cat; echo oops >&2; exit 3"]),
            dir.path(),
            &[],
            Some(b"in".to_vec()),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
        assert_eq!((out.code, out.stdout.as_str(), out.stderr.trim()), (Some(3), "in", "oops"));
        let missing = run("no-such-tool-here", &[], dir.path(), &[], None, Duration::from_secs(1)).await.unwrap_err();
        assert!(matches!(missing, RunError::NotFound { .. }), "{missing}");
    }
}
