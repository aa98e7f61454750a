//! Running the `git` CLI: one child per call, `--no-optional-locks` on every read (a read never
//! takes the index lock another git holds), no prompts, a deadline ([`GIT_CALL_TIMEOUT`] unless the
//! caller gives its own) and a bound on the output kept ([`GIT_OUTPUT_MAX_BYTES`]): beyond it the
//! child is killed and the answer says `truncated`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::RepoError;
use crate::limits::{GIT_CALL_TIMEOUT, GIT_OUTPUT_MAX_BYTES, GIT_STDERR_MAX_BYTES};

/// What one git call printed.
#[derive(Debug)]
pub(crate) struct Output {
    pub stdout: Vec<u8>,
    /// The output passed the bound: `stdout` holds its first [`GIT_OUTPUT_MAX_BYTES`].
    pub truncated: bool,
    pub status: std::process::ExitStatus,
    pub stderr: String,
}

impl Output {
    pub(crate) fn ok(&self) -> bool {
        self.status.success()
    }
}

/// The error when `git` itself cannot be started.
pub(crate) fn missing() -> RepoError {
    RepoError::GitMissing(
        "git is not installed or not on the daemon's PATH; install git (e.g. `apt install git`) and restart tuicd"
            .into(),
    )
}

/// Runs a read: `git --no-optional-locks -C <dir> <args>`; a non-zero exit is an error naming
/// the command and git's own first line.
pub(crate) async fn read(dir: &Path, args: &[&str]) -> Result<Output, RepoError> {
    let out = Box::pin(run(dir, args, GIT_CALL_TIMEOUT, true)).await?;
    if !out.ok() {
        return Err(failed(args, &out));
    }
    Ok(out)
}

/// Runs a read whose non-zero exit the caller judges (a probe: "is there a commit?").
pub(crate) async fn probe(dir: &Path, args: &[&str]) -> Result<Output, RepoError> {
    Box::pin(run(dir, args, GIT_CALL_TIMEOUT, true)).await
}

/// Runs a command that changes the repository (no `--no-optional-locks`), with its own deadline;
/// the caller judges the exit status.
pub(crate) async fn write(dir: &Path, args: &[&str], timeout: Duration) -> Result<Output, RepoError> {
    Box::pin(run(dir, args, timeout, false)).await
}

/// The error for a git command that exited non-zero.
pub(crate) fn failed(args: &[&str], out: &Output) -> RepoError {
    let first = out.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message");
    RepoError::Git(format!("git {} failed: {first}", args.first().copied().unwrap_or("")))
}

/// Boxed by its callers: its state (the child, two readers) would otherwise sit inline in every
/// caller's future, and a handler that runs several git commands would outgrow a worker's stack.
/// Configuration a repository cannot set for tuicd's own git: what would make `git status`,
/// `git diff` or `git worktree add` run a program the repository names. Not covered: filter
/// drivers (`filter.<name>.clean`) a repository's config defines and its `.gitattributes` uses.
const NO_REPO_PROGRAMS: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.sshCommand=ssh",
    "protocol.ext.allow=never",
    "diff.external=",
];

async fn run(dir: &Path, args: &[&str], timeout: Duration, read_only: bool) -> Result<Output, RepoError> {
    let mut command = Command::new("git");
    for setting in NO_REPO_PROGRAMS {
        command.arg("-c").arg(setting);
    }
    if read_only {
        command.arg("--no-optional-locks");
    }
    command
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => missing(),
        _ => RepoError::Git(format!("starting git: {e}")),
    })?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    // Each reader owns its pipe: the stdout reader drops it when the bound is reached, so git
    // stops on a broken pipe instead of blocking on a full one.
    let bounded_out = async move {
        let mut out = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let n = stdout.read(&mut chunk).await.unwrap_or(0);
            if n == 0 {
                return (out, false);
            }
            let room = GIT_OUTPUT_MAX_BYTES - out.len();
            out.extend_from_slice(&chunk[..n.min(room)]);
            if n >= room {
                return (out, true);
            }
        }
    };
    let bounded_err = async move {
        let mut err = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = stderr.read(&mut chunk).await.unwrap_or(0);
            if n == 0 {
                return err;
            }
            let room = GIT_STDERR_MAX_BYTES.saturating_sub(err.len());
            err.extend_from_slice(&chunk[..n.min(room)]);
        }
    };
    let collect = async {
        let ((out, truncated), err) = tokio::join!(bounded_out, bounded_err);
        (out, err, truncated)
    };
    let what = || format!("git {} in {}", args.first().copied().unwrap_or(""), dir.display());
    let (stdout, stderr, truncated, status) = match tokio::time::timeout(timeout, async {
        let (out, err, truncated) = collect.await;
        if truncated {
            // Enough kept: stop git instead of reading the rest.
            let _ = child.start_kill();
        }
        let status = child.wait().await;
        (out, err, truncated, status)
    })
    .await
    {
        Ok((out, err, truncated, status)) => {
            (out, err, truncated, status.map_err(|e| RepoError::Git(format!("{}: {e}", what())))?)
        }
        Err(_) => {
            return Err(RepoError::Timeout(format!(
                "{} took longer than {} s and was stopped",
                what(),
                timeout.as_secs()
            )));
        }
    };
    Ok(Output { stdout, truncated, status, stderr: String::from_utf8_lossy(&stderr).into_owned() })
}
