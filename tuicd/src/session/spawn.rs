//! Turning a create request into a checked spawn plan, and starting the child on a fresh PTY.
//! Every check runs before anything is created, so a refused request leaves nothing behind.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use proto::session::CreateSessionRequest;

use super::SessionError;
use super::child::ChildProcess;
use crate::limits::{DEFAULT_COLS, DEFAULT_ROWS, TERMINAL_SIZE_MAX, TERMINAL_SIZE_MIN};

/// A create request whose every field has been checked.
#[derive(Debug, Clone)]
pub(super) struct SpawnPlan {
    pub rows: u16,
    pub cols: u16,
    /// The program, resolved to an absolute executable path.
    pub program: PathBuf,
    /// What the client asked for (shown in listings).
    pub shell: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    /// The session's own size rule, if the request named one.
    pub window_size: Option<proto::session::WindowSize>,
}

/// `[A-Za-z_][A-Za-z0-9_]*`: what a shell can name. Anything else (`=`, a line break, NUL) would
/// corrupt the child's environment block or smuggle a second variable into it.
fn is_env_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Checks rows/cols, the program, the working directory and the environment names.
pub(super) fn plan(req: &CreateSessionRequest) -> Result<SpawnPlan, SessionError> {
    let rows = check_size("rows", req.rows.unwrap_or(DEFAULT_ROWS))?;
    let cols = check_size("cols", req.cols.unwrap_or(DEFAULT_COLS))?;
    let shell = match &req.shell {
        Some(s) if !s.trim().is_empty() => s.clone(),
        Some(_) => return Err(SessionError::InvalidField("shell: must not be empty".into())),
        None => std::env::var("SHELL").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "/bin/sh".into()),
    };
    let program = resolve_program(&shell)?;
    let cwd = match &req.cwd {
        Some(dir) => {
            let path = PathBuf::from(dir);
            if !path.is_absolute() {
                return Err(SessionError::InvalidField(format!("cwd: '{dir}' is not an absolute path")));
            }
            if !path.is_dir() {
                return Err(SessionError::InvalidField(format!("cwd: '{dir}' is not a directory")));
            }
            path
        }
        None => std::env::var_os("HOME").map(PathBuf::from).filter(|p| p.is_dir()).unwrap_or_else(|| "/".into()),
    };
    for (key, value) in &req.env {
        if !is_env_name(key) {
            return Err(SessionError::InvalidField(format!(
                "env: {key:?} is not a valid variable name (letters, digits and _, not starting with a digit)"
            )));
        }
        if value.contains('\0') {
            return Err(SessionError::InvalidField(format!("env.{key}: the value must not contain NUL")));
        }
    }
    if let Some(i) = req.args.iter().position(|a| a.contains('\0')) {
        return Err(SessionError::InvalidField(format!("args[{i}]: must not contain NUL")));
    }
    Ok(SpawnPlan {
        rows,
        cols,
        program,
        shell,
        args: req.args.clone(),
        cwd,
        env: req.env.clone(),
        window_size: req.window_size,
    })
}

pub(super) fn check_size(field: &str, value: u16) -> Result<u16, SessionError> {
    if (TERMINAL_SIZE_MIN..=TERMINAL_SIZE_MAX).contains(&value) {
        Ok(value)
    } else {
        Err(SessionError::InvalidField(format!(
            "{field}: {value} is out of range; allowed {TERMINAL_SIZE_MIN}..={TERMINAL_SIZE_MAX}"
        )))
    }
}

/// A path is checked as given; a bare name is looked up in `PATH`. Either must be an executable file.
fn resolve_program(shell: &str) -> Result<PathBuf, SessionError> {
    let executable = |p: &Path| p.is_file() && p.metadata().is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    if shell.contains('/') {
        let path = PathBuf::from(shell);
        return if executable(&path) {
            Ok(path)
        } else if path.exists() {
            Err(SessionError::InvalidField(format!("shell: '{shell}' is not an executable file")))
        } else {
            Err(SessionError::InvalidField(format!("shell: '{shell}' does not exist")))
        };
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_var)
        .map(|dir| dir.join(shell))
        .find(|p| executable(p))
        .ok_or_else(|| SessionError::InvalidField(format!("shell: '{shell}' was not found in PATH")))
}

/// Opens a PTY of the planned size and starts the program on it. `TUIC_SESSION` is exported.
/// The master comes back non-blocking (the reader thread and the async writer share it) and
/// close-on-exec (pty-process opens it so); the child comes back with its pidfd.
pub(super) fn start(plan: &SpawnPlan, tuic_session: &str) -> Result<(OwnedFd, ChildProcess), SessionError> {
    let fail = |what: &str, e: pty_process::Error| SessionError::Spawn(format!("{what}: {e}"));
    let (pty, pts) = pty_process::blocking::open().map_err(|e| fail("opening a PTY", e))?;
    pty.resize(pty_process::Size::new(plan.rows, plan.cols)).map_err(|e| fail("sizing the PTY", e))?;
    let master = OwnedFd::from(pty);
    let flags = |e: rustix::io::Errno| SessionError::Spawn(format!("setting the PTY's flags: {e}"));
    rustix::fs::fcntl_setfl(&master, rustix::fs::fcntl_getfl(&master).map_err(flags)? | rustix::fs::OFlags::NONBLOCK)
        .map_err(flags)?;
    let mut child = pty_process::blocking::Command::new(&plan.program)
        .args(&plan.args)
        .current_dir(&plan.cwd)
        .env("TERM", "xterm-256color")
        .env("COLORTERM", "truecolor")
        .envs(&plan.env)
        .env("TUIC_SESSION", tuic_session)
        .spawn(pts)
        .map_err(|e| fail(&format!("starting {}", plan.program.display()), e))?;
    match ChildProcess::spawned(&child) {
        Ok(process) => Ok((master, process)),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(SessionError::Spawn(format!("opening the child's pidfd: {e}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_names_the_field() {
        let err = |req: CreateSessionRequest| plan(&req).unwrap_err().to_string();
        assert!(err(CreateSessionRequest { rows: Some(0), ..Default::default() }).starts_with("rows: 0"));
        assert!(err(CreateSessionRequest { cols: Some(501), ..Default::default() }).starts_with("cols: 501"));
        let e = err(CreateSessionRequest { shell: Some("/nonexistent/sh".into()), ..Default::default() });
        assert!(e.contains("does not exist"), "{e}");
        let e = err(CreateSessionRequest { cwd: Some("/etc/hostname".into()), ..Default::default() });
        assert!(e.contains("not a directory"), "{e}");
        assert!(plan(&CreateSessionRequest { shell: Some("sh".into()), ..Default::default() }).is_ok());
    }
}
