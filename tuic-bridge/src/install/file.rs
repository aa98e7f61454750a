//! Reading a client's config and replacing it safely. The new text goes to a temp file in the same
//! directory, then a rename: a client reading the file (or a crash mid-write) sees the old file or
//! the new one, never half of one. The file keeps its permission bits; a new one is 0600 and a new
//! directory 0700, since these configs often hold API tokens. A symlinked config (a dotfiles
//! checkout) is written through to its target instead of being replaced by a plain file.

use std::fs::{self, DirBuilder, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

const NEW_FILE_MODE: u32 = 0o600;
const NEW_DIR_MODE: u32 = 0o700;

/// The file to read and write: `path` itself, or where it points when it is a symlink.
pub(crate) fn resolve(path: &Path) -> io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path),
        _ => Ok(path.to_owned()),
    }
}

/// The file's text, or None when there is no file yet.
pub(crate) fn read(path: &Path) -> io::Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

pub(crate) fn write(path: &Path, text: &str) -> io::Result<()> {
    let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    DirBuilder::new().recursive(true).mode(NEW_DIR_MODE).create(dir)?;
    let mode = match fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o7777,
        Err(e) if e.kind() == io::ErrorKind::NotFound => NEW_FILE_MODE,
        Err(e) => return Err(e),
    };
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let temp = dir.join(format!(".{name}.tuic-bridge-{}.tmp", std::process::id()));
    let written = write_new(&temp, text, mode).and_then(|()| fs::rename(&temp, path));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Creates `path` (never follows or reuses an existing one) with `text`, flushed to disk.
fn write_new(path: &Path, text: &str, mode: u32) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).mode(mode).open(path)?;
    // The open mode passes through the umask; set the bits again so they match the old file's.
    file.set_permissions(Permissions::from_mode(mode))?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}
