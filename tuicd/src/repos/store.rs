//! `repositories.json`: read whole, written atomically (a private temp file, fsync, rename).

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::RepoEntry;

/// The file's name in the config dir.
pub(crate) const FILE_NAME: &str = "repositories.json";

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    repositories: Vec<RepoEntry>,
}

/// The list in `file`; a missing file is an empty list. The error names the file and what is wrong.
pub(super) fn read(file: &Path) -> Result<Vec<RepoEntry>, String> {
    let text = match std::fs::read(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", file.display())),
    };
    let parsed: File = serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(parsed.repositories)
}

/// Replaces `file` with `repos`, atomically: a reader sees the old list or the new one, whole.
pub(super) fn write(file: &Path, repos: &[RepoEntry]) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut out = OpenOptions::new().create(true).truncate(true).write(true).mode(0o600).open(&tmp)?;
        let body = File { repositories: repos.to_vec() };
        let mut text = serde_json::to_vec_pretty(&body).map_err(std::io::Error::other)?;
        text.push(b'\n');
        out.write_all(&text)?;
        out.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
