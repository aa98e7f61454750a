//! `ai_terminal_run_command`: a shell command in the session's repository, after the
//! destructive-command check and the person's confirmation; output captured, bounded, redacted.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::common::{claim, confirmed, preview, sandbox_root, target};
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
    let started = Instant::now();
    let mut child = tokio::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| ToolError::new(format!("{TOOL}: could not start /bin/sh: {e}")))?;
    let pid = child.id();
    let stdout = tokio::spawn(capture(child.stdout.take()));
    let stderr = tokio::spawn(capture(child.stderr.take()));
    let (exit_code, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (status.ok().and_then(|s| s.code()), false),
        Err(_) => {
            // The whole process group: a command's own children must not outlive its deadline.
            if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            let _ = child.wait().await;
            (None, true)
        }
    };
    let (out, out_dropped) = stdout.await.unwrap_or_default();
    let (err, err_dropped) = stderr.await.unwrap_or_default();
    Ok(Ran {
        exit_code,
        stdout: redact(&out).into_owned(),
        stderr: redact(&err).into_owned(),
        timed_out,
        truncated_bytes: out_dropped + err_dropped,
        duration_ms: started.elapsed().as_millis() as u64,
    })
}

/// Reads a stream to its end, keeping the first [`AI_TERMINAL_RUN_OUTPUT_MAX`] bytes and
/// counting the rest (so a flood neither grows memory nor blocks the child on a full pipe).
async fn capture(stream: Option<impl AsyncRead + Unpin>) -> (String, u64) {
    let Some(mut stream) = stream else { return (String::new(), 0) };
    let mut kept = Vec::new();
    let mut dropped = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = AI_TERMINAL_RUN_OUTPUT_MAX.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                dropped += n.saturating_sub(room) as u64;
            }
        }
    }
    (String::from_utf8_lossy(&kept).into_owned(), dropped)
}
