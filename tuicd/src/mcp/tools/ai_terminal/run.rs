//! `ai_terminal_run_command`: a shell command in the session's repository, confirmed by a person
//! and run under the kernel's Landlock sandbox ([`crate::sandbox`]): writes only in the repository
//! (and its worktrees) and a private temp dir, TCP only when configured. The destructive-command
//! check is a warning in the confirmation, not the barrier: no list of refused spellings holds
//! against a shell. Without Landlock the command is refused unless `ai_terminal_unsandboxed`, and
//! then the confirmation says it runs unsandboxed. Output captured, bounded, redacted.

use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{RUN_INSTEAD, claim, confirmed, sandbox_root, shown_whole, target};
use crate::child::{self, Spec};
use crate::limits::{
    AI_TERMINAL_INPUT_MAX_BYTES, AI_TERMINAL_RUN_DEFAULT_MS, AI_TERMINAL_RUN_MAX_MS, AI_TERMINAL_RUN_OUTPUT_MAX,
    SESSION_WAIT_RUN_MAX_MS,
};
use crate::mcp::tools::{CallContext, ToolError};
use crate::safety::command::check;
use crate::safety::redact::redact;
use crate::sandbox::{self, Status};

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
    let config = ctx.app.config.get();
    let confinement = Confinement::of(sandbox::status(), &root, config.ai_terminal_allow_network)
        .or_else(
            |reason| if config.ai_terminal_unsandboxed { Ok(Confinement::Unsandboxed(reason)) } else { Err(reason) },
        )
        .map_err(|reason| {
            ToolError::new(format!(
                "{TOOL} refused: commands run only under the Landlock sandbox, and {reason}; nothing was run \
                 (a person may set ai_terminal_unsandboxed to allow unsandboxed commands, each still confirmed)"
            ))
            .with("sandbox", false)
        })?;
    let shown = shown_whole("command", &p.command, RUN_INSTEAD)?;
    let mut what = format!("Run in {}:\n{shown}\n\n{}", cwd.display(), confinement.describe(&root));
    if let Err(flagged) = check(&p.command, &cwd, &root) {
        // A warning for the person: the sandbox, not this list, is what stops the command.
        what.push_str(&format!("\n\nWarning: this command looks destructive ({flagged})."));
    }
    confirmed(ctx, TOOL, &session, what).await?;
    let _lease = claim(ctx, TOOL, &session)?;
    run(&p.command, &cwd, timeout, &confinement).await
}

/// How a command runs: under the sandbox (the directories it may write), or not at all confined.
enum Confinement {
    Sandboxed {
        abi: i32,
        writes: Vec<PathBuf>,
        network: bool,
    },
    /// Landlock is missing (the reason) and `ai_terminal_unsandboxed` allows it.
    Unsandboxed(String),
}

impl Confinement {
    /// The sandbox for a command in `root`, or why there is none.
    fn of(status: &Status, root: &Path, allow_network: bool) -> Result<Self, String> {
        match status {
            Status::Available { abi } => Ok(Confinement::Sandboxed {
                abi: *abi,
                writes: sandbox::writable_dirs(root),
                network: allow_network || !status.blocks_network(),
            }),
            Status::Unavailable { reason } => Err(format!("Landlock is unavailable here ({reason})")),
        }
    }

    /// What the confirmation tells the person about the barrier.
    fn describe(&self, root: &Path) -> String {
        match self {
            Confinement::Sandboxed { abi, network, .. } => format!(
                "Sandboxed (Landlock ABI {abi}): it may write only inside {} (and its worktrees) and a private temp dir; network {}.",
                root.display(),
                if *network { "allowed" } else { "off" }
            ),
            Confinement::Unsandboxed(reason) => format!(
                "UNSANDBOXED: {reason}, and ai_terminal_unsandboxed is on: this command runs with all of your \
                 rights and may change or delete anything you can, outside the repository too."
            ),
        }
    }
}

async fn run(command: &str, cwd: &Path, timeout: Duration, confinement: &Confinement) -> Result<Ran, ToolError> {
    let args = ["-c", command];
    let confined = match confinement {
        Confinement::Sandboxed { writes, network, .. } => Some(
            sandbox::confine(writes, *network, "/bin/sh", &args)
                .map_err(|e| ToolError::new(format!("{TOOL}: {e}; nothing was run")))?,
        ),
        Confinement::Unsandboxed(_) => None,
    };
    let launcher_args: Vec<&str> = confined.iter().flat_map(|c| c.args.iter().map(String::as_str)).collect();
    let env: Vec<(&str, &str)> = confined.iter().flat_map(|c| c.env.iter().map(|(k, v)| (*k, v.as_str()))).collect();
    let spec = Spec {
        program: confined.as_ref().map_or("/bin/sh", |c| c.program),
        args: if confined.is_some() { &launcher_args } else { &args },
        cwd,
        env: &env,
        stdin: None,
        timeout,
        keep: AI_TERMINAL_RUN_OUTPUT_MAX,
        merge_output: false,
        stop_at_cap: false,
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
