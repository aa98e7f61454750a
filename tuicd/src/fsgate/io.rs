//! File IO for paths the gate accepted: capped reads, atomic writes (a temp file in the same
//! directory, fsync, rename), and copies built on them. Blocking: callers run these on the
//! blocking pool.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Why a read or write failed after the gate accepted the path.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    #[error("{path} is {size} bytes, over the {cap} byte read cap for this caller")]
    TooLarge { path: String, size: u64, cap: u64 },
    #[error("{path} is a directory, not a file")]
    IsDirectory { path: String },
    #[error("{path} is not a regular file (a FIFO, socket or device)")]
    NotAFile { path: String },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> FileError + '_ {
    move |source| FileError::Io { path: path.display().to_string(), source }
}

/// Reads the whole file at `path`, refusing one larger than `cap` bytes before reading it. The
/// read itself stops at `cap + 1` bytes, so a file that grows meanwhile is still refused.
pub(crate) fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    // Checked before opening: opening a FIFO or a device could block or never end.
    let meta = std::fs::metadata(path).map_err(io_error(path))?;
    if meta.is_dir() {
        return Err(FileError::IsDirectory { path: path.display().to_string() });
    }
    if !meta.is_file() {
        return Err(FileError::NotAFile { path: path.display().to_string() });
    }
    let file = File::open(path).map_err(io_error(path))?;
    if meta.len() > cap {
        return Err(FileError::TooLarge { path: path.display().to_string(), size: meta.len(), cap });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1).read_to_end(&mut bytes).map_err(io_error(path))?;
    if bytes.len() as u64 > cap {
        return Err(FileError::TooLarge { path: path.display().to_string(), size: bytes.len() as u64, cap });
    }
    Ok(bytes)
}

/// Replaces `path` with `bytes` atomically: a reader sees the old file or the new one, never a
/// part. The temp file lives in the same directory (so the rename stays on one filesystem) and
/// is removed when anything fails. An existing file's permissions are kept.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    if path.is_dir() {
        return Err(FileError::IsDirectory { path: path.display().to_string() });
    }
    let temp = temp_beside(path)?;
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&temp)?;
        if let Ok(meta) = std::fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)?;
        if let Some(dir) = path.parent() {
            // The rename is durable once the directory entry is.
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result.map_err(io_error(path))
}

/// Copies the file `from` to `to` through [`write_atomic`], reading at most `cap` bytes.
pub(crate) fn copy_file(from: &Path, to: &Path, cap: u64) -> Result<u64, FileError> {
    let bytes = read_capped(from, cap)?;
    write_atomic(to, &bytes)?;
    Ok(bytes.len() as u64)
}

fn temp_beside(path: &Path) -> Result<PathBuf, FileError> {
    let dir = path.parent().ok_or_else(|| FileError::IsDirectory { path: path.display().to_string() })?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(dir.join(format!(".{name}.tuic-{}.tmp", uuid::Uuid::new_v4().simple())))
}
