//! `ai_terminal_run_command`: a shell command in the session's repository, after the
//! destructive-command check and the person's confirmation; output captured, bounded, redacted.

use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{claim, confirmed, preview, sandbox_root, target};
use crate::child::{self, Spec};
use crate::limits::{
    AI_TERMINAL_INPUT_MAX_BYTES, AI_TERMINAL_RUN_DEFAULT_MS, AI_TERMINAL_RUN_MAX_MS, AI_TERMINAL_RUN_OUTPUT_MAX,
    SESSION_WAIT_RUN_MAX_MS,
};
use crate::mcp::tools::{CallContext, ToolError};
use crate::safety::command::check;
use crate::safety::redact::redact;

const TOOL: &str = "ai_terminal_run_command";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunCommand {
    /// PTY id, tuic_session or alias (tu-1): the command runs in its repository.
    session_id: String,
    /// One shell command line (sh -c).
    command: String,
    /// Default 120000; at most 600000, and one call answers within 295000.
    timeout_ms: Option<u64>,
    /// Inside the repository; default the session's cwd.
    cwd: Option<String>,
}

#[derive(Debug, Serialize)]
pub(super) struct Ran {
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
    /// Bytes left out of stdout and stderr beyond the capture limit.
    #[serde(skip_serializing_if = "is_zero")]
    truncated_bytes: u64,
    duration_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `cwd` (absolute, or relative to the session's cwd) checked to stay inside `root`.
fn working_dir(requested: Option<&str>, session_cwd: &Path, root: &Path) -> Result<PathBuf, ToolError> {
    let Some(requested) = requested else {
        let cwd = std::fs::canonicalize(session_cwd).unwrap_or_else(|_| session_cwd.to_path_buf());
        return Ok(if cwd.starts_with(root) { cwd } else { root.to_path_buf() });
    };
    if requested.contains('\0') {
        return Err(ToolError::new("cwd: must not contain NUL"));
    }
    let joined =
        if Path::new(requested).is_absolute() { PathBuf::from(requested) } else { session_cwd.join(requested) };
    let real = std::fs::canonicalize(&joined)
        .map_err(|e| ToolError::new(format!("cwd: {} is not a directory here: {e}", joined.display())))?;
    if !real.starts_with(root) || !real.is_dir() {
        return Err(ToolError::new(format!(
            "cwd: {} is outside the session's repository {}",
            real.display(),
            root.display()
        )));
    }
    Ok(real)
}

pub(super) async fn run_command(ctx: &CallContext, p: RunCommand) -> Result<Ran, ToolError> {
    if p.command.trim().is_empty() {
        return Err(ToolError::new("command: must not be empty"));
    }
    if p.command.len() > AI_TERMINAL_INPUT_MAX_BYTES {
        return Err(ToolError::new(format!("command: over the limit of {AI_TERMINAL_INPUT_MAX_BYTES} bytes")));
    }
    let requested = p.timeout_ms.unwrap_or(AI_TERMINAL_RUN_DEFAULT_MS);
    if requested == 0 || requested > AI_TERMINAL_RUN_MAX_MS {
        return Err(ToolError::new(format!("timeout_ms: must be between 1 and {AI_TERMINAL_RUN_MAX_MS}")));
    }
    let timeout = Duration::from_millis(requested.min(SESSION_WAIT_RUN_MAX_MS));
    let session = target(ctx, &p.session_id)?;
    let root = sandbox_root(&session)?;
    let cwd = working_dir(p.cwd.as_deref(), &session.cwd, &root)?;
    check(&p.command, &cwd, &root).map_err(|refusal| {
        ToolError::new(format!("{TOOL} refused: destructive command ({refusal}); nothing was run"))
            .with("blocked", true)
    })?;
    let what = format!("Run in {}:\n{}", cwd.display(), preview(&p.command, 600));
    confirmed(ctx, TOOL, &session, what).await?;
    let _lease = claim(ctx, TOOL, &session)?;
    run(&p.command, &cwd, timeout).await
}

async fn run(command: &str, cwd: &Path, timeout: Duration) -> Result<Ran, ToolError> {
    let args = ["-c", command];
    let spec = Spec {
        program: "/bin/sh",
        args: &args,
        cwd,
        env: &[],
        stdin: None,
        timeout,
        keep: AI_TERMINAL_RUN_OUTPUT_MAX,
        merge_output: false,
    };
    let done = child::run(spec).await.map_err(|e| ToolError::new(format!("{TOOL}: {e}")))?;
    Ok(Ran {
        exit_code: done.code,
        stdout: redact(&done.stdout.text()).into_owned(),
        stderr: redact(&done.stderr.text()).into_owned(),
        timed_out: done.timed_out,
        truncated_bytes: done.stdout.dropped + done.stderr.dropped,
        duration_ms: done.elapsed.as_millis() as u64,
    })
}
