//! The one gate every absolute-path file operation goes through (the `/fs/*` routes, and the
//! file tools later): a path is accepted only when it lies inside a registered repository.
//!
//! The checks run in this order, each refusing with an error that names the rule:
//! 1. lexical, before anything touches the disk: empty, NUL, over [`FS_PATH_MAX_BYTES`],
//!    relative, a `..` component, or a percent-encoded sequence left in it (a double-encoded
//!    request);
//! 2. the path (or, for a write target that does not exist yet, its parent) is canonicalized, so
//!    symlinks are resolved, and must then lie inside a canonical root *by components*: a sibling
//!    `/src/repo-evil` is not inside `/src/repo`, and a symlink out of the root is refused.
//!
//! Without the lexical layer `/repo/../../etc/passwd` would pass a lexical containment check while
//! the OS resolves it outside; canonicalizing makes the containment check mean what the OS means.
//! Between the check and the use a local process could still swap a component for a symlink; the
//! callers are the repository's own users, and the gate bounds what a remote or confused caller
//! can name, not what the local user can do.

mod io;
#[cfg(test)]
mod tests;

use std::path::{Component, Path, PathBuf};

pub(crate) use io::{FileError, copy_file, read_capped, write_atomic};

use crate::limits::{FS_PATH_MAX_BYTES, FS_READ_CAP_LOOPBACK, FS_READ_CAP_REMOTE};

/// Why the gate refused a path. `Invalid` is bad input (400), `Outside` a path that names
/// something outside every registered repository (403), `Missing` nothing there (404).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum GateError {
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
    #[error("{field}: {path} is outside every registered repository{how}")]
    Outside { field: String, path: String, how: String },
    #[error("{field}: {path} does not exist")]
    Missing { field: String, path: String },
    #[error("{field}: {path}: {reason}")]
    Io { field: String, path: String, reason: String },
}

/// The registered repositories' canonical roots, checked against.
#[derive(Debug, Clone)]
pub(crate) struct Gate {
    roots: Vec<PathBuf>,
}

impl Gate {
    /// A gate over `roots`. Each is canonicalized here; a root that no longer exists is dropped
    /// (nothing can lie inside it).
    pub(crate) fn new(roots: impl IntoIterator<Item = PathBuf>) -> Self {
        let roots = roots.into_iter().filter_map(|r| std::fs::canonicalize(r).ok()).collect();
        Self { roots }
    }

    /// An existing file or directory: its canonical path, inside a root. `field` names the
    /// request field in errors.
    pub(crate) fn existing(&self, field: &str, raw: &str) -> Result<PathBuf, GateError> {
        let path = lexical(field, raw)?;
        let canonical = canonical(field, raw, &path)?;
        self.contain(field, raw, canonical, &path)
    }

    /// A write target that may not exist yet: its parent must exist and lie inside a root; an
    /// existing target (a symlink included) must itself resolve inside one. Answers the path the
    /// write goes to: the canonical parent joined with the file name.
    pub(crate) fn target(&self, field: &str, raw: &str) -> Result<PathBuf, GateError> {
        let path = lexical(field, raw)?;
        let name = path.file_name().ok_or_else(|| invalid(field, "names no file (it ends at the root)"))?;
        let parent = path.parent().ok_or_else(|| invalid(field, "names no file (it ends at the root)"))?;
        let parent = canonical(field, &parent.to_string_lossy(), parent)?;
        let parent = self.contain(field, raw, parent, &path)?;
        let target = parent.join(name);
        if std::fs::symlink_metadata(&target).is_ok() {
            // An existing entry, a dangling symlink included: where it resolves must be inside.
            let resolved = std::fs::canonicalize(&target).map_err(|_| GateError::Outside {
                field: field.into(),
                path: raw.into(),
                how: " (a symlink whose target does not resolve)".into(),
            })?;
            self.contain(field, raw, resolved, &path)?;
        }
        Ok(target)
    }

    /// Whether `path` (canonical) is one of the roots themselves.
    pub(crate) fn is_root(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| root == path)
    }

    fn contain(&self, field: &str, raw: &str, canonical: PathBuf, given: &Path) -> Result<PathBuf, GateError> {
        if self.roots.iter().any(|root| canonical.starts_with(root)) {
            return Ok(canonical);
        }
        let how = if canonical != given && self.roots.iter().any(|root| given.starts_with(root)) {
            format!(" (it resolves through a symlink to {})", canonical.display())
        } else if self.roots.is_empty() {
            " (no repository is registered)".into()
        } else {
            String::new()
        };
        Err(GateError::Outside { field: field.into(), path: raw.into(), how })
    }
}

/// The read cap for a caller: remote (TCP) callers get the smaller one, so a phone on a metered
/// link cannot pull 250 MB.
pub(crate) fn read_cap(remote: bool) -> u64 {
    if remote { FS_READ_CAP_REMOTE } else { FS_READ_CAP_LOOPBACK }
}

/// The lexical checks, before the disk is touched.
fn lexical(field: &str, raw: &str) -> Result<PathBuf, GateError> {
    if raw.is_empty() {
        return Err(invalid(field, "is empty; an absolute path is required"));
    }
    if raw.contains('\0') {
        return Err(invalid(field, "contains a NUL byte"));
    }
    if raw.len() > FS_PATH_MAX_BYTES {
        return Err(invalid(field, &format!("is {} bytes long, over the {FS_PATH_MAX_BYTES} byte limit", raw.len())));
    }
    if has_percent_escape(raw) {
        return Err(invalid(field, "still holds a percent-encoded sequence (it was encoded twice); send it decoded"));
    }
    let path = Path::new(raw);
    if !path.is_absolute() {
        return Err(invalid(field, &format!("'{raw}' is relative; an absolute path is required")));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(invalid(field, "contains a '..' component"));
    }
    Ok(path.to_path_buf())
}

fn canonical(field: &str, raw: &str, path: &Path) -> Result<PathBuf, GateError> {
    std::fs::canonicalize(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => GateError::Missing { field: field.into(), path: raw.into() },
        _ => GateError::Io { field: field.into(), path: raw.into(), reason: e.to_string() },
    })
}

/// `%` followed by two hex digits: a name that still reads as an escape after the one decoding
/// the transport does.
fn has_percent_escape(raw: &str) -> bool {
    raw.as_bytes().windows(3).any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

fn invalid(field: &str, reason: &str) -> GateError {
    GateError::Invalid { field: field.into(), reason: reason.into() }
}
