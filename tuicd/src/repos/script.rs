//! Running a setup script in a directory (`/worktrees/run-script`, a new worktree's setup):
//! `sh -c <script>` through the one child runner ([`crate::child`]), bounded in time ([`WORKTREE_SCRIPT_TIMEOUT`]) and in
//! output kept ([`WORKTREE_SCRIPT_OUTPUT_MAX_BYTES`], stdout and stderr interleaved as written).

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::RepoError;
use crate::child::{self, Spec};
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
    let args = ["-c", script];
    let spec = Spec {
        program: "sh",
        args: &args,
        cwd: dir,
        env: &[],
        stdin: None,
        timeout,
        keep: WORKTREE_SCRIPT_OUTPUT_MAX_BYTES,
        merge_output: true,
        stop_at_cap: false,
    };
    let done =
        child::run(spec).await.map_err(|e| RepoError::Failed(format!("starting sh in {}: {e}", dir.display())))?;
    if done.timed_out {
        // What it printed before the deadline, then why it stopped.
        let mut output = done.stdout.text();
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&format!(
            "[the script (or a process it left running) ran longer than {} s; its process group was killed]",
            timeout.as_secs_f32()
        ));
        return Ok(ScriptResult { exit_code: None, output, truncated: done.stdout.dropped > 0, timed_out: true });
    }
    Ok(ScriptResult {
        exit_code: done.code,
        output: done.stdout.text(),
        truncated: done.stdout.dropped > 0,
        timed_out: false,
    })
}
