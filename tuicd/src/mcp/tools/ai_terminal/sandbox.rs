//! Where the file tools may look: the session's repository, through the same gate as the `/fs`
//! routes. A relative `file_path` is joined to the session's cwd first; the gate then refuses a
//! `..` component, a path outside the root, and a symlink that resolves out of it.

use std::path::{Path, PathBuf};

use super::common::sandbox_root;
use crate::fsgate::{FileError, Gate, GateError};
use crate::limits::AI_TERMINAL_FILE_MAX_BYTES;
use crate::mcp::tools::ToolError;
use crate::session::Session;

/// The session's repository root and the gate over it.
pub(super) struct Sandbox {
    pub root: PathBuf,
    cwd: PathBuf,
    gate: Gate,
}

impl Sandbox {
    pub(super) fn of(session: &Session) -> Result<Self, ToolError> {
        let root = sandbox_root(session)?;
        let cwd = std::fs::canonicalize(&session.cwd).unwrap_or_else(|_| session.cwd.clone());
        // The cwd may have left the repository; relative paths then start at the root.
        let cwd = if cwd.starts_with(&root) { cwd } else { root.clone() };
        Ok(Self { gate: Gate::new([root.clone()]), root, cwd })
    }

    /// The directory relative paths start from.
    pub(super) fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// An existing file or directory `raw` names, canonical and inside the root.
    pub(super) fn existing(&self, field: &str, raw: &str) -> Result<PathBuf, ToolError> {
        let joined = self.join(field, raw)?;
        self.gate.existing(field, &joined).map_err(|e| self.refusal(e))
    }

    /// A file to write: its parent exists inside the root; the file itself may not exist yet.
    pub(super) fn target(&self, field: &str, raw: &str) -> Result<PathBuf, ToolError> {
        let joined = self.join(field, raw)?;
        self.gate.target(field, &joined).map_err(|e| self.refusal(e))
    }

    /// `path` as the answer shows it: relative to the root when inside it.
    pub(super) fn show(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).unwrap_or(path).to_string_lossy().into_owned()
    }

    fn join(&self, field: &str, raw: &str) -> Result<String, ToolError> {
        if raw.trim().is_empty() {
            return Err(ToolError::new(format!("{field}: must not be empty")));
        }
        if Path::new(raw).is_absolute() {
            return Ok(raw.to_owned());
        }
        Ok(self.cwd.join(raw).to_string_lossy().into_owned())
    }

    fn refusal(&self, error: GateError) -> ToolError {
        let message = match &error {
            GateError::Outside { field, path, how } => {
                format!("{field}: {path} is outside the session's repository {}{how}", self.root.display())
            }
            _ => error.to_string(),
        };
        ToolError::new(message).with("root", self.root.display().to_string())
    }
}

/// A file's text, refused when it is over the file limit or binary (a NUL byte, or not UTF-8).
pub(super) fn read_text(field: &str, path: &Path, shown: &str) -> Result<String, ToolError> {
    let bytes =
        crate::fsgate::read_capped(path, AI_TERMINAL_FILE_MAX_BYTES).map_err(|e| file_error(field, shown, e))?;
    if bytes.contains(&0) {
        return Err(ToolError::new(format!(
            "{field}: {shown} is a binary file (it holds NUL bytes); only text is read"
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| ToolError::new(format!("{field}: {shown} is a binary file (not UTF-8 text); only text is read")))
}

pub(super) fn file_error(field: &str, shown: &str, error: FileError) -> ToolError {
    match error {
        FileError::TooLarge { size, .. } => ToolError::new(format!(
            "{field}: {shown} is {size} bytes, over the {AI_TERMINAL_FILE_MAX_BYTES} byte (10 MB) limit of the file tools"
        )),
        FileError::IsDirectory { .. } => ToolError::new(format!("{field}: {shown} is a directory, not a file")),
        FileError::NotAFile { .. } => {
            ToolError::new(format!("{field}: {shown} is not a regular file (a FIFO, socket or device)"))
        }
        FileError::Io { source, .. } => ToolError::new(format!("{field}: {shown}: {source}")),
    }
}
