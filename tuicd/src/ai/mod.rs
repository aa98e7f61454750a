//! The headless agent slot: the configured agent CLI (`headless_agent`: Claude Code, Codex or
//! Gemini CLI) run non-interactively for one task, and its answer parsed into the task's typed
//! shape. Behind `POST /ai/review/pr`, `GET /repo/changelog` and `POST /ai/improvements/scan`.
//!
//! Every input is explicit: the task's instructions and JSON schema, the repository context
//! (gathered by the caller through git and `gh`), the program, a scratch directory, a deadline and
//! an output bound ([`Slot`], [`Limits`]). The run goes through the one child runner
//! ([`crate::child`]): the prompt and the context on stdin, the process group killed at the
//! deadline, each stream kept up to the bound.
//!
//! The agent never runs in the repository: its working directory is an empty scratch directory
//! under the config dir (removed after the run), so a repository's own agent settings (hooks in
//! `.claude/settings.json`, `.gemini/`, `AGENTS.md`) are never read, and it gets no tools that
//! write or run anything (Claude Code `--tools ""`, Codex `--sandbox read-only`, Gemini CLI
//! `--approval-mode plan`). Everything it may look at is on its stdin.
//!
//! A reply that is not the JSON object the prompt asked for is an error naming the agent and what
//! was wrong ([`AiError::BadReply`], a 502), never a guess: the only unwrapping done is of the
//! CLI's own envelope and of one Markdown code fence around the whole answer.

mod agent;
pub(crate) mod context;
mod reply;
pub(crate) mod tasks;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub(crate) use agent::Kind;

use crate::child::{self, SpawnError, Spec};

/// The longest one headless run may take: below the request timeout (301 s) with room for the
/// git and `gh` calls that gather its context.
pub(crate) const HEADLESS_TIMEOUT: Duration = Duration::from_secs(240);
/// Most bytes kept of the agent's stdout (and of its stderr); an answer past it is refused.
pub(crate) const HEADLESS_OUTPUT_MAX_BYTES: usize = 1024 * 1024;
/// Most headless runs at once across the daemon; one more is refused (503) rather than queued.
pub(crate) const HEADLESS_RUNS_MAX: usize = 4;
/// Most bytes of repository context (a diff, a file list) put into one prompt; the prompt says
/// when it was cut.
pub(crate) const CONTEXT_MAX_BYTES: usize = 256 * 1024;

/// Why a headless run gave no typed answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AiError {
    #[error(
        "the headless agent '{agent}' ('{program}') was not found on the daemon's PATH; install it, or set headless_agent to another CLI (claude, codex, gemini) or to its path"
    )]
    Missing { agent: &'static str, program: String },
    #[error("the headless agent '{agent}' did not answer within {} s and was stopped", .timeout.as_secs())]
    TimedOut { agent: &'static str, timeout: Duration },
    #[error("the headless agent '{agent}' failed: {message}")]
    Failed { agent: &'static str, message: String },
    #[error("the headless agent '{agent}' answered something that is not the JSON asked for: {message}")]
    BadReply { agent: &'static str, message: String },
    #[error("{HEADLESS_RUNS_MAX} headless agent runs are already in progress; retry when one has finished")]
    Busy,
    #[error("the headless agent could not be run: {0}")]
    Io(String),
}

impl From<AiError> for crate::http::ApiError {
    fn from(e: AiError) -> Self {
        use crate::http::ApiError;
        match e {
            AiError::Missing { .. } => ApiError::DependencyMissing(e.to_string()),
            AiError::TimedOut { .. } => ApiError::Timeout(e.to_string()),
            AiError::Busy => ApiError::Unavailable(e.to_string()),
            AiError::Failed { .. } | AiError::BadReply { .. } => ApiError::UpstreamFailed(e.to_string()),
            AiError::Io(_) => ApiError::Internal(anyhow::anyhow!(e.to_string())),
        }
    }
}

/// The deadline and the output bound of one run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub timeout: Duration,
    pub keep: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { timeout: HEADLESS_TIMEOUT, keep: HEADLESS_OUTPUT_MAX_BYTES }
    }
}

/// The configured agent CLI and where its runs get their scratch directories.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    pub kind: Kind,
    /// The program run: the setting as written (a name on PATH or a path).
    pub program: String,
    /// Scratch directories are made (and removed) in here.
    pub scratch_root: PathBuf,
    pub limits: Limits,
}

impl Slot {
    /// The slot the `headless_agent` setting names; `scratch_root` is made on first use.
    pub(crate) fn from_setting(setting: &str, scratch_root: PathBuf) -> Result<Slot, AiError> {
        let kind = Kind::from_setting(setting).ok_or_else(|| AiError::Failed {
            agent: "unknown",
            message: format!("headless_agent '{setting}' names no known agent CLI (claude, codex, gemini)"),
        })?;
        Ok(Slot { kind, program: setting.trim().to_owned(), scratch_root, limits: Limits::default() })
    }

    /// Runs the agent on `prompt` (fed on stdin) and parses its answer as `T`.
    pub(crate) async fn ask<T: serde::de::DeserializeOwned>(&self, prompt: String) -> Result<T, AiError> {
        let text = self.run(prompt).await?;
        reply::parse(self.kind.name(), &text)
    }

    /// Runs the agent on `prompt`; answers the text of its final message.
    async fn run(&self, prompt: String) -> Result<String, AiError> {
        static RUNS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(HEADLESS_RUNS_MAX);
        let _run = RUNS.try_acquire().map_err(|_| AiError::Busy)?;
        let agent = self.kind.name();
        let scratch = Scratch::new(&self.scratch_root)?;
        let args = self.kind.args();
        let spec = Spec {
            program: &self.program,
            args: &args,
            cwd: &scratch.0,
            env: &[("NO_COLOR", "1")],
            stdin: Some(prompt.into_bytes()),
            timeout: self.limits.timeout,
            keep: self.limits.keep,
            merge_output: false,
            stop_at_cap: true,
        };
        let done = child::run(spec).await.map_err(|e| match e {
            SpawnError::NotFound { program } => AiError::Missing { agent, program },
            other => AiError::Io(other.to_string()),
        })?;
        if done.timed_out {
            return Err(AiError::TimedOut { agent, timeout: self.limits.timeout });
        }
        if done.stdout.dropped > 0 {
            return Err(AiError::BadReply {
                agent,
                message: format!("its output passed the {} byte bound and was cut off", self.limits.keep),
            });
        }
        self.kind.final_text(done.code, &done.stdout.text(), &done.stderr.text())
    }
}

/// An empty directory of its own for one run, removed when the run ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(root: &Path) -> Result<Scratch, AiError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let io = |e: std::io::Error| AiError::Io(format!("cannot make a scratch directory in {}: {e}", root.display()));
        std::fs::create_dir_all(root).map_err(io)?;
        let name = format!("run-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = root.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700).create(&dir).map_err(io)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn fake(dir: &Path, name: &str, script: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Answer {
        ok: bool,
    }

    #[tokio::test]
    async fn the_prompt_goes_on_stdin_and_the_envelope_is_unwrapped() {
        let dir = tempfile::tempdir().unwrap();
        // Echoes its stdin's first line back inside Claude Code's JSON envelope.
        let program = fake(
            dir.path(),
            "claude",
            r#"read line; printf '{"type":"result","subtype":"success","is_error":false,"result":"{\\"ok\\": %s}"}' "$line""#,
        );
        let slot = Slot::from_setting(&program, dir.path().join("scratch")).unwrap();
        let answer: Answer = slot.ask("true\nmore context".into()).await.unwrap();
        assert_eq!(answer, Answer { ok: true });
        let left: Vec<_> = std::fs::read_dir(dir.path().join("scratch")).unwrap().collect();
        assert!(left.is_empty(), "the scratch directory is removed: {left:?}");
    }

    #[tokio::test]
    async fn a_deadline_a_flood_and_a_failure_are_errors_naming_the_agent() {
        let dir = tempfile::tempdir().unwrap();
        let mut slot = Slot::from_setting(&fake(dir.path(), "codex", "sleep 30"), dir.path().join("s")).unwrap();
        slot.limits.timeout = Duration::from_millis(300);
        let err = slot.ask::<Answer>(String::new()).await.unwrap_err();
        assert!(matches!(err, AiError::TimedOut { agent: "codex", .. }), "{err}");

        let mut slot = Slot::from_setting(&fake(dir.path(), "gemini", "yes"), dir.path().join("s")).unwrap();
        slot.limits.keep = 1000;
        let err = slot.ask::<Answer>(String::new()).await.unwrap_err();
        assert!(err.to_string().contains("1000 byte bound"), "{err}");

        let script = "echo 'Error: quota exceeded' >&2; exit 3";
        let slot = Slot::from_setting(&fake(dir.path(), "claude", script), dir.path().join("s")).unwrap();
        let err = slot.ask::<Answer>(String::new()).await.unwrap_err().to_string();
        assert!(err.contains("'claude' failed") && err.contains("quota exceeded"), "{err}");

        let slot = Slot::from_setting("/no/such/dir/claude", dir.path().join("s")).unwrap();
        let err = slot.ask::<Answer>(String::new()).await.unwrap_err();
        assert!(matches!(err, AiError::Missing { agent: "claude", .. }), "{err}");
    }
}
