//! `<config_dir>/mcp-upstreams.json` on disk: loading with errors that name the file and the
//! problem, and the one way to change it: under an advisory `flock` on a sibling lock file (so
//! two processes never interleave a read-modify-write), validated, written atomically with mode
//! 0600. A save is a three-way delta ([`merge`]) applied to the file as it is inside the lock,
//! and returns the exact pair before and after, for the live registry to apply.
//!
//! The blocking work runs on the blocking pool; the async functions are what handlers call.

pub(crate) mod merge;
pub(crate) mod redact;

use std::fs::OpenOptions;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub(crate) use redact::redacted;

use self::merge::{Delta, MergeError};
use super::config::{ConfigError, UpstreamsFile};

pub(crate) const UPSTREAMS_FILE: &str = "mcp-upstreams.json";
/// The sibling every writer locks; the data file itself is replaced by rename, so it cannot
/// carry the lock.
pub(crate) const LOCK_FILE: &str = "mcp-upstreams.json.lock";

/// Why the file was not read or a change not saved. Nothing was written in any case.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: line {line}, column {column}: not valid JSON: {message}")]
    Syntax { path: PathBuf, line: usize, column: usize, message: String },
    /// Valid JSON of the wrong shape (a wrong type, an unknown field), or an entry that breaks a rule.
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
    /// The configuration asked for breaks a rule; the message starts with the rule's name.
    #[error("config: {0}")]
    Invalid(ConfigError),
    /// The delta does not apply to the file as it is now.
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// The delta applied, but together with what another save wrote meanwhile it breaks a rule.
    #[error("the merged configuration is not valid: {0}; another save changed the file meanwhile, reload and retry")]
    MergedInvalid(ConfigError),
    /// What an [`update`] refused.
    #[error("{0}")]
    Refused(String),
    /// The save was based on another revision than the file has now (`If-Match`).
    #[error(
        "mcp-upstreams.json is at revision {current}, not {expected} (If-Match): another save changed it meanwhile; reload it (GET /mcp/upstreams) and retry"
    )]
    Stale { expected: String, current: String },
}

/// The file's revision, as `GET /mcp/upstreams` states it in its `ETag`: a hash of its content,
/// so it moves with every change whoever made it, and needs no counter kept anywhere.
pub(crate) fn revision(file: &UpstreamsFile) -> String {
    let bytes = serde_json::to_vec(file).unwrap_or_default();
    // FNV-1a, written out so a revision never depends on a library's hasher.
    let hash =
        bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3));
    format!("{hash:016x}")
}

pub(crate) fn path(config_dir: &Path) -> PathBuf {
    config_dir.join(UPSTREAMS_FILE)
}

/// Reads the file: a missing one is `{servers: []}`, a broken one an error naming the file and
/// the problem (never an empty list). No lock: writers replace the file by rename, so a reader
/// sees one whole version.
pub(crate) fn load(config_dir: &Path) -> Result<UpstreamsFile, StoreError> {
    let path = path(config_dir);
    let text = match std::fs::read(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(UpstreamsFile::default()),
        Err(source) => return Err(StoreError::Io { path, source }),
    };
    parse(&path, &text)
}

/// The file at start-up. A broken file is logged and treated as empty, so a typo there never
/// keeps the daemon from starting; a save or a SIGHUP after the fix applies it.
pub(crate) fn load_at_boot(config_dir: &Path) -> UpstreamsFile {
    load(config_dir).unwrap_or_else(|e| {
        tracing::error!(source = "upstream", error = %e, "mcp-upstreams.json not loaded; no upstreams until it is fixed");
        UpstreamsFile::default()
    })
}

/// [`load`] on the blocking pool.
pub(crate) async fn read(config_dir: &Path) -> Result<UpstreamsFile, StoreError> {
    let dir = config_dir.to_owned();
    blocking(config_dir, move || load(&dir)).await
}

/// Saves the caller's change from `base` (the snapshot it loaded) to `desired` onto the latest
/// file, inside the lock: see [`merge`]. `own_port` is the daemon's TCP port, if it listens, so
/// an upstream pointing at tuicd itself is refused. With `if_match` (the revisions the caller
/// accepts), a file at any other revision is refused as [`StoreError::Stale`] instead of merged.
/// Returns the file before and after.
pub(crate) async fn save_delta(
    config_dir: &Path,
    base: UpstreamsFile,
    desired: UpstreamsFile,
    own_port: Option<u16>,
    if_match: Option<Vec<String>>,
) -> Result<(UpstreamsFile, UpstreamsFile), StoreError> {
    desired.validate(own_port).map_err(StoreError::Invalid)?;
    let delta = Delta::between(&base, &desired)?;
    let dir = config_dir.to_owned();
    blocking(config_dir, move || {
        locked(&dir, |before| {
            if let Some(accepted) = if_match {
                let current = revision(before);
                if !accepted.iter().any(|r| r == "*" || *r == current) {
                    return Err(StoreError::Stale { expected: accepted.join(", "), current });
                }
            }
            let after = delta.apply(before)?;
            after.validate(own_port).map_err(StoreError::MergedInvalid)?;
            Ok(after)
        })
    })
    .await
}

/// Changes the latest file with `change` under the same lock as every save (the OAuth flow
/// writes a registered `client_id` this way). `change` refuses with a message. Returns the file
/// before and after.
pub(crate) async fn update<F>(config_dir: &Path, change: F) -> Result<(UpstreamsFile, UpstreamsFile), StoreError>
where
    F: FnOnce(&mut UpstreamsFile) -> Result<(), String> + Send + 'static,
{
    let dir = config_dir.to_owned();
    blocking(config_dir, move || {
        locked(&dir, |before| {
            let mut after = before.clone();
            change(&mut after).map_err(StoreError::Refused)?;
            after.validate(None).map_err(StoreError::Invalid)?;
            Ok(after)
        })
    })
    .await
}

async fn blocking<T: Send + 'static>(
    config_dir: &Path,
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::Io { path: path(config_dir), source: std::io::Error::other(e) })?
}

/// Holds the lock while it reads the latest file, computes the next one with `next` and, when it
/// differs, writes it. Returns `(before, after)`.
fn locked(
    config_dir: &Path,
    next: impl FnOnce(&UpstreamsFile) -> Result<UpstreamsFile, StoreError>,
) -> Result<(UpstreamsFile, UpstreamsFile), StoreError> {
    let io_err = |path: PathBuf| move |source| StoreError::Io { path, source };
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(config_dir).map_err(io_err(config_dir.into()))?;
    let lock_path = config_dir.join(LOCK_FILE);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&lock_path)
        .map_err(io_err(lock_path.clone()))?;
    // Released when `lock` is closed, on every return path.
    lock.lock().map_err(io_err(lock_path))?;
    let before = load(config_dir)?;
    let after = next(&before)?;
    if after != before {
        write_atomically(&path(config_dir), &after)?;
    }
    Ok((before, after))
}

fn parse(path: &Path, text: &[u8]) -> Result<UpstreamsFile, StoreError> {
    let de = &mut serde_json::Deserializer::from_slice(text);
    let file: UpstreamsFile = serde_path_to_error::deserialize(de).map_err(|e| {
        let at = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            let (line, column) = (inner.line(), inner.column());
            StoreError::Syntax { path: path.to_owned(), line, column, message: inner.to_string() }
        } else {
            StoreError::Unreadable { path: path.to_owned(), message: format!("{at}: {inner}") }
        }
    })?;
    file.validate(None).map_err(|e| StoreError::Unreadable { path: path.to_owned(), message: e.to_string() })?;
    Ok(file)
}

fn write_atomically(path: &Path, file: &UpstreamsFile) -> Result<(), StoreError> {
    let mut text = serde_json::to_vec_pretty(file).map_err(std::io::Error::other);
    if let Ok(text) = &mut text {
        text.push(b'\n');
    }
    text.and_then(|text| crate::private_file::write(path, &text))
        .map_err(|source| StoreError::Io { path: path.to_owned(), source })
}

#[cfg(test)]
#[path = "store/store_tests.rs"]
mod tests;
