//! Running the `git` CLI through the one child runner ([`crate::child`]): one child per call,
//! `--no-optional-locks` on every read (a read never takes the index lock another git holds), no
//! prompts, a deadline ([`GIT_CALL_TIMEOUT`] unless the caller gives its own) that stops git's
//! whole process group, and a bound on the output kept ([`GIT_OUTPUT_MAX_BYTES`]): beyond it the
//! reading stops (git ends on a broken pipe) and the answer says `truncated`.

use std::path::Path;
use std::time::Duration;

use super::RepoError;
use crate::child::{self, SpawnError, Spec};
use crate::limits::{GIT_CALL_TIMEOUT, GIT_OUTPUT_MAX_BYTES, GIT_STDERR_MAX_BYTES};

/// What one git call printed.
#[derive(Debug)]
pub(crate) struct Output {
    pub stdout: Vec<u8>,
    /// The output passed the bound: `stdout` holds its first [`GIT_OUTPUT_MAX_BYTES`].
    pub truncated: bool,
    /// None when a signal ended git.
    pub code: Option<i32>,
    pub stderr: String,
}

impl Output {
    pub(crate) fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// The bound the output was cut at, when it was: what an answer's `truncated_at_bytes` says.
    pub(crate) fn truncated_at(&self) -> Option<usize> {
        self.truncated.then_some(GIT_OUTPUT_MAX_BYTES)
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
/// the command and git's own first line. Output past the bound is not an error: the reading stops
/// there, so git dies on the broken pipe (a signal, or exit 128 "write failure"), and the answer is
/// the first [`GIT_OUTPUT_MAX_BYTES`] with `truncated`.
pub(crate) async fn read(dir: &Path, args: &[&str]) -> Result<Output, RepoError> {
    let out = Box::pin(run(dir, args, GIT_CALL_TIMEOUT, true)).await?;
    if !out.ok() && !out.truncated {
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
    let dir_arg = dir.to_string_lossy();
    let mut argv: Vec<&str> = Vec::with_capacity(NO_REPO_PROGRAMS.len() * 2 + args.len() + 3);
    for setting in NO_REPO_PROGRAMS {
        argv.extend(["-c", setting]);
    }
    if read_only {
        argv.push("--no-optional-locks");
    }
    argv.extend(["-C", dir_arg.as_ref()]);
    argv.extend_from_slice(args);
    let spec = Spec {
        program: "git",
        args: &argv,
        // `-C` names the directory; a missing one is git's error to report, not a failed spawn.
        cwd: Path::new("."),
        env: &[("GIT_TERMINAL_PROMPT", "0"), ("LC_ALL", "C")],
        stdin: None,
        timeout,
        keep: GIT_OUTPUT_MAX_BYTES,
        merge_output: false,
        stop_at_cap: true,
    };
    let what = || format!("git {} in {}", args.first().copied().unwrap_or(""), dir.display());
    let done = child::run(spec).await.map_err(|e| match e {
        SpawnError::NotFound { .. } => missing(),
        other => RepoError::Git(format!("starting git: {other}")),
    })?;
    if done.timed_out {
        return Err(RepoError::Timeout(format!("{} took longer than {} s and was stopped", what(), timeout.as_secs())));
    }
    let mut stderr = done.stderr.bytes;
    stderr.truncate(GIT_STDERR_MAX_BYTES);
    Ok(Output {
        truncated: done.stdout.dropped > 0,
        stdout: done.stdout.bytes,
        code: done.code,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}
