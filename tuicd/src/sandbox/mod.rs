//! The kernel barrier for commands tuicd runs for an outside agent (`ai_terminal_run_command`):
//! a Landlock ruleset, so what a person confirmed cannot write outside the session's repository
//! however the shell spells it (`sh -c`, `eval`, `find -delete`, `python3 -c`, `${IFS}`...).
//!
//! - Reads: everywhere (the policy keeps to the simple rule; secrets in files are the
//!   redaction's job on what comes back).
//! - Writes: only beneath the repository's work tree, its git directory and its other worktrees
//!   ([`writable_dirs`]), a private temp dir made per run (`TMPDIR` points there) and the null
//!   devices.
//! - Network: TCP bind and connect refused (Landlock ABI 4+) unless `ai_terminal_allow_network`.
//! - Signals and abstract Unix sockets are scoped (ABI 6+): the command cannot signal tuicd or any
//!   process outside its own sandbox.
//!
//! The ruleset is applied by tuicd itself re-executed as a tiny launcher, `tuicd sandbox-exec
//! [--write DIR]... [--network] -- PROGRAM ARGS...` ([`exec_main`]): a fresh single-threaded
//! process builds the ruleset, restricts itself and `exec`s the command, so nothing has to run
//! between `fork` and `exec` of the multi-threaded daemon (where only async-signal-safe code may),
//! and the command keeps the launcher's pid and process group (the runner's deadline kills it).
//!
//! The ABI is detected once at start ([`status`]) and shown in `/health`. Without Landlock,
//! `run_command` is refused unless `ai_terminal_unsandboxed` is set, and then the confirmation
//! says the command runs unsandboxed.

mod launch;
mod repo;
mod rules;
mod seccomp;

use std::sync::OnceLock;

pub(crate) use launch::confine;
pub use launch::{SUBCOMMAND, exec_main};
pub(crate) use repo::writable_dirs;

/// Set in tuicd's environment (tests), the sandbox reads as unavailable: the refusal and the
/// unsandboxed path can be exercised on a kernel that has Landlock.
const OFF_ENV: &str = "TUIC_SANDBOX_OFF";

/// What the kernel offers, detected once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Status {
    /// Landlock works; the kernel's ABI version.
    Available {
        abi: i32,
    },
    Unavailable {
        reason: String,
    },
}

impl Status {
    pub(crate) fn abi(&self) -> Option<i32> {
        match self {
            Status::Available { abi } => Some(*abi),
            Status::Unavailable { .. } => None,
        }
    }

    /// Whether TCP can be refused (Landlock's network rules came with ABI 4).
    pub(crate) fn blocks_network(&self) -> bool {
        self.abi().is_some_and(|abi| abi >= 4)
    }

    /// The `/health` shape: `{available, landlock_abi, network}` or `{available: false, reason}`.
    /// `network` says whether sandboxed commands can open TCP connections.
    pub(crate) fn to_json(&self, allow_network: bool, unsandboxed_allowed: bool) -> serde_json::Value {
        match self {
            Status::Available { abi } => serde_json::json!({
                "available": true,
                "landlock_abi": abi,
                "network": allow_network || !self.blocks_network(),
            }),
            Status::Unavailable { reason } => serde_json::json!({
                "available": false,
                "reason": reason,
                "unsandboxed_allowed": unsandboxed_allowed,
            }),
        }
    }
}

/// The Landlock support of this kernel, probed on first use (the daemon asks at start).
pub(crate) fn status() -> &'static Status {
    static STATUS: OnceLock<Status> = OnceLock::new();
    STATUS.get_or_init(|| {
        let status = if std::env::var_os(OFF_ENV).is_some() {
            Status::Unavailable { reason: format!("turned off by {OFF_ENV} in tuicd's environment") }
        } else {
            rules::probe()
        };
        match &status {
            Status::Available { abi } => tracing::info!(landlock_abi = abi, "ai_terminal commands run sandboxed"),
            Status::Unavailable { reason } => tracing::warn!(%reason, "no Landlock: ai_terminal_run_command is refused unless ai_terminal_unsandboxed"),
        }
        status
    })
}
