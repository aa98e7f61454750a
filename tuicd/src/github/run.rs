//! `gh` and `git` calls through the one child runner ([`crate::child`]): a deadline that stops
//! the whole process group, stdin fed a body or closed, each stream kept up to
//! [`GH_OUTPUT_MAX_BYTES`].

use std::path::Path;
use std::time::Duration;

use crate::child::{self, SpawnError, Spec};
use crate::limits::GH_OUTPUT_MAX_BYTES;

/// What a finished run left: its exit code (None when a signal ended it) and its output.
#[derive(Debug)]
pub(crate) struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// stdout passed [`GH_OUTPUT_MAX_BYTES`]: `stdout` is its first part only (JSON cut there).
    pub stdout_truncated: bool,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("'{program}' was not found on PATH")]
    NotFound { program: String },
    #[error("'{program}' did not finish within {} s and was stopped", .timeout.as_secs())]
    TimedOut { program: String, timeout: Duration },
    #[error("{0}")]
    Io(SpawnError),
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
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let spec = Spec {
        program,
        args: &args,
        cwd,
        env,
        stdin,
        timeout,
        keep: GH_OUTPUT_MAX_BYTES,
        merge_output: false,
        stop_at_cap: false,
    };
    let done = child::run(spec).await.map_err(|e| match e {
        SpawnError::NotFound { program } => RunError::NotFound { program },
        other => RunError::Io(other),
    })?;
    if done.timed_out {
        return Err(RunError::TimedOut { program: program.into(), timeout });
    }
    Ok(Output {
        code: done.code,
        stdout_truncated: done.stdout.dropped > 0,
        stdout: done.stdout.text(),
        stderr: done.stderr.text(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_deadline_is_an_error_naming_the_program() {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-c".to_owned(), "sleep 30".to_owned()];
        let err = run("sh", &args, dir.path(), &[], None, Duration::from_millis(200)).await.unwrap_err();
        assert!(err.to_string().starts_with("'sh' did not finish within"), "{err}");
        let missing = run("no-such-tool-here", &[], dir.path(), &[], None, Duration::from_secs(1)).await.unwrap_err();
        assert!(matches!(missing, RunError::NotFound { .. }), "{missing}");
    }
}
