//! Writing a file that may hold secrets (`config.json`, `mcp-upstreams.json`,
//! `credentials.json`): readable by the daemon's user only, and replaced atomically so a reader
//! never sees half of it.

use std::fs::{File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Writes `bytes` to a 0600 temporary beside `path`, syncs it, renames it over `path` and syncs
/// the directory (the rename is durable once the directory entry is). A failure removes the
/// temporary and leaves `path` as it was.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut out = OpenOptions::new().create(true).truncate(true).write(true).mode(0o600).open(&tmp)?;
        // A temporary left by an older umask keeps its mode on truncate: set it again.
        out.set_permissions(Permissions::from_mode(0o600))?;
        out.write_all(bytes)?;
        out.sync_all()?;
        std::fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_replaced_whole_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.json");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
        write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary left");
        assert!(write(&dir.path().join("missing/x.json"), b"x").is_err());
    }
}
