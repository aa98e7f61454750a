//! The absolute-path file routes (`/fs/read-external`, `/fs/read-editor`,
//! `/fs/read-editor-external`, `/fs/write-external`, `/fs/copy-abs`, `/fs/move-abs`; `/fs/transfer`
//! in `fs_transfer.rs`). Every path goes through [`crate::fsgate::Gate`] over the registered
//! repositories before anything is read or written; the disk work runs on the blocking pool.
//!
//! Read caps: `/fs/read-external` has the standard cap ([`FS_READ_CAP_REMOTE`]) for everyone; the
//! editor reads and copies have the large cap on this machine and the standard one over TCP.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::fsgate::{self, Gate};
use crate::http::body::{ok_json, query, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request, Transport};
use crate::limits::FS_READ_CAP_REMOTE;
use crate::state::App;

/// The gate over the repositories registered now.
pub(super) fn gate(app: &App) -> Gate {
    Gate::new(app.repos.roots())
}

/// Whether the caller came over the TCP listener (remote access), which gets the standard cap.
pub(super) fn is_remote(caller: &Caller) -> bool {
    matches!(caller.transport, Transport::Tcp { .. })
}

/// Runs disk work on the blocking pool.
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("file work failed unexpectedly: {e}")))?
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathQuery {
    path: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EditorQuery {
    repo_path: String,
    file: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteBody {
    path: String,
    content: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FromTo {
    from: String,
    to: String,
}

/// `GET /fs/read-external?path=`: a file's text, at the standard cap.
pub(crate) async fn read_external(app: &App, req: Request) -> ApiResult {
    let q: PathQuery = query(&req)?;
    let path = gate(app).existing("path", &q.path)?;
    ok_json(&blocking(move || read_text(&path, FS_READ_CAP_REMOTE)).await?)
}

/// `GET /fs/read-editor-external?path=`: a file's text, at the caller's cap.
pub(crate) async fn read_editor_external(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let q: PathQuery = query(&req)?;
    let path = gate(app).existing("path", &q.path)?;
    let cap = fsgate::read_cap(is_remote(caller));
    ok_json(&blocking(move || read_text(&path, cap)).await?)
}

/// `GET /fs/read-editor?repoPath=&file=`: `file` (relative) in the repository at `repoPath`.
pub(crate) async fn read_editor(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let q: EditorQuery = query(&req)?;
    let gate = gate(app);
    let repo = gate.existing("repoPath", &q.repo_path)?;
    let file = Path::new(&q.file);
    if q.file.is_empty() || file.is_absolute() {
        return Err(ApiError::InvalidField("file: a path relative to repoPath is required".into()));
    }
    // A `..` may step back up inside the repository (`../x` from `repo/sub`, as git reads it):
    // the joined path is normalised lexically and must stay in the repository holding repoPath;
    // the gate then resolves symlinks and contains where they lead.
    let joined = lexically_normal(&repo.join(file));
    let holder = app.repos.roots().into_iter().filter(|r| repo.starts_with(r)).max_by_key(|r| r.as_os_str().len());
    if !holder.as_ref().is_some_and(|root| joined.starts_with(root)) {
        return Err(ApiError::Forbidden(format!(
            "file: {} resolves to {}, outside the repository {}",
            q.file,
            joined.display(),
            holder.as_deref().unwrap_or(&repo).display()
        )));
    }
    let path = gate.existing("file", &joined.to_string_lossy())?;
    let cap = fsgate::read_cap(is_remote(caller));
    ok_json(&blocking(move || read_text(&path, cap)).await?)
}

/// `path` with `.` dropped and each `..` taking back the component before it (never above `/`).
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn read_text(path: &Path, cap: u64) -> Result<String, ApiError> {
    let bytes = fsgate::read_capped(path, cap)?;
    String::from_utf8(bytes).map_err(|_| ApiError::BadRequest(format!("{} is not UTF-8 text", path.display())))
}

/// `POST /fs/write-external {path, content}`: replaces (or creates) the file atomically.
pub(crate) async fn write_external(app: &App, req: Request) -> ApiResult {
    let body: WriteBody = read_json(req).await?;
    let path = gate(app).target("path", &body.path)?;
    blocking(move || fsgate::write_atomic(&path, body.content.as_bytes()).map_err(ApiError::from)).await?;
    ok_json(&serde_json::json!({"ok": true}))
}

/// `POST /fs/copy-abs {from, to}`: copies a file to a path that does not exist yet.
pub(crate) async fn copy_abs(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let body: FromTo = read_json(req).await?;
    let gate = gate(app);
    let from = gate.existing("from", &body.from)?;
    let to = new_target(&gate, "to", &body.to)?;
    if from.is_dir() {
        return Err(ApiError::BadRequest(format!(
            "from: {} is a directory; copy-abs copies files (use /fs/transfer with allowRecursive)",
            body.from
        )));
    }
    let cap = fsgate::read_cap(is_remote(caller));
    let bytes = blocking(move || fsgate::copy_file(&from, &to, cap).map_err(ApiError::from)).await?;
    ok_json(&serde_json::json!({"ok": true, "bytes": bytes}))
}

/// `POST /fs/move-abs {from, to}`: renames a file or directory to a path that does not exist yet.
pub(crate) async fn move_abs(app: &App, req: Request) -> ApiResult {
    let body: FromTo = read_json(req).await?;
    let gate = gate(app);
    let from = movable(&gate, "from", &body.from)?;
    let to = new_target(&gate, "to", &body.to)?;
    blocking(move || rename(&from, &to)).await?;
    ok_json(&serde_json::json!({"ok": true}))
}

/// A path to create: through the gate, and refused when something is already there.
pub(super) fn new_target(gate: &Gate, field: &str, raw: &str) -> Result<PathBuf, ApiError> {
    let target = gate.target(field, raw)?;
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(ApiError::Conflict(format!("{field}: {raw} already exists")));
    }
    Ok(target)
}

/// A path to move: the entry itself (a symlink is moved, not its target), which must exist and
/// must not be a registered repository's root.
pub(super) fn movable(gate: &Gate, field: &str, raw: &str) -> Result<PathBuf, ApiError> {
    let path = gate.target(field, raw)?;
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(ApiError::NotFound(format!("{field}: {raw} does not exist")));
    }
    if gate.is_root(&path) {
        return Err(ApiError::Forbidden(format!("{field}: {raw} is a registered repository's root")));
    }
    Ok(path)
}

pub(super) fn rename(from: &Path, to: &Path) -> Result<(), ApiError> {
    std::fs::rename(from, to).map_err(|e| {
        let why = if e.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error()) {
            "they are on different filesystems".to_owned()
        } else {
            e.to_string()
        };
        ApiError::BadRequest(format!("could not move {} to {}: {why}", from.display(), to.display()))
    })
}
