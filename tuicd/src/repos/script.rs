//! Running a setup script in a directory (`/worktrees/run-script`, a new worktree's setup):
//! `sh -c <script>` in its own process group, bounded in time ([`WORKTREE_SCRIPT_TIMEOUT`]) and in
//! output kept ([`WORKTREE_SCRIPT_OUTPUT_MAX_BYTES`], stdout and stderr interleaved as written).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::RepoError;
use crate::limits::WORKTREE_SCRIPT_OUTPUT_MAX_BYTES;

/// What a script did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ScriptResult {
    /// None when it was killed (by the deadline or a signal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub output: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
}

/// Runs `script` with `sh -c` in `dir`; the whole process group is killed at `timeout`.
pub(crate) async fn run(dir: &Path, script: &str, timeout: Duration) -> Result<ScriptResult, RepoError> {
    if script.trim().is_empty() {
        return Err(RepoError::InvalidPath("script is empty".into()));
    }
    if script.contains('\0') {
        return Err(RepoError::InvalidPath("script contains a NUL byte".into()));
    }
    // One pipe for both streams keeps their order as written.
    let (reader, writer) = std::io::pipe().map_err(|e| RepoError::Failed(format!("creating a pipe: {e}")))?;
    let writer_err = writer.try_clone().map_err(|e| RepoError::Failed(format!("creating a pipe: {e}")))?;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer_err)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| RepoError::Failed(format!("starting sh in {}: {e}", dir.display())))?;
    let pgid = child.id();
    let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into())
        .map_err(|e| RepoError::Failed(format!("reading the script's output: {e}")))?;
    let read = async move {
        let mut reader = reader;
        let mut out = Vec::new();
        let mut truncated = false;
        let mut chunk = [0u8; 8192];
        loop {
            match reader.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = WORKTREE_SCRIPT_OUTPUT_MAX_BYTES.saturating_sub(out.len());
                    truncated |= n > room;
                    out.extend_from_slice(&chunk[..n.min(room)]);
                }
            }
        }
        (out, truncated)
    };
    let run = async { tokio::join!(read, child.wait()) };
    match tokio::time::timeout(timeout, run).await {
        Ok(((out, truncated), status)) => Ok(ScriptResult {
            exit_code: status.ok().and_then(|s| s.code()),
            output: String::from_utf8_lossy(&out).into_owned(),
            truncated,
            timed_out: false,
        }),
        Err(_) => {
            if let Some(pgid) = pgid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
                let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
            }
            let _ = child.wait().await;
            Ok(ScriptResult {
                exit_code: None,
                output: format!("the script ran longer than {} s and was killed", timeout.as_secs()),
                truncated: false,
                timed_out: true,
            })
        }
    }
}
