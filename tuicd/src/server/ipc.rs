//! The always-on IPC listener: a Unix socket, born 0600 (`ownership.rs`), with the seed's two
//! safety layers: a retried bind that clears stale files, and a real connect (not a file-exists
//! check) to tell a live daemon from a dead socket.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};

use crate::limits::{SOCKET_BIND_ATTEMPTS, SOCKET_BIND_RETRY, SOCKET_PROBE_TIMEOUT};

#[derive(Debug, thiserror::Error)]
pub(crate) enum BindError {
    #[error("another tuicd is already serving on {0}; stop it first (tuicd status shows it)")]
    AlreadyRunning(PathBuf),
    #[error("cannot bind {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// The bound socket, and the file identity used to remove only our own file at exit.
#[derive(Debug)]
pub(crate) struct IpcListener {
    pub listener: UnixListener,
    pub path: PathBuf,
    inode: (u64, u64),
}

impl IpcListener {
    pub(crate) async fn bind(path: &Path) -> Result<Self, BindError> {
        let io_err = |source| BindError::Io { path: path.to_owned(), source };
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(io_err)?;
        }
        if is_live(path).await {
            return Err(BindError::AlreadyRunning(path.to_owned()));
        }
        let mut last_error = None;
        for attempt in 0..SOCKET_BIND_ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(SOCKET_BIND_RETRY).await;
            }
            // A crashed run leaves a dead socket file that blocks bind(2); the liveness probe
            // above showed nobody answers on it.
            match std::fs::remove_file(path) {
                Ok(()) => tracing::info!(path = %path.display(), "removed a stale socket file"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => tracing::warn!(path = %path.display(), error = %e, "cannot remove the stale socket file"),
            }
            match super::ownership::with_private_umask(|| UnixListener::bind(path)) {
                Ok(listener) => {
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io_err)?;
                    let meta = std::fs::metadata(path).map_err(io_err)?;
                    return Ok(Self { listener, path: path.to_owned(), inode: (meta.dev(), meta.ino()) });
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), attempt = attempt + 1, error = %e, "socket bind failed");
                    last_error = Some(e);
                }
            }
        }
        Err(io_err(last_error.unwrap_or_else(|| std::io::Error::other("bind failed"))))
    }

    /// The listener a previous process image bound at `path` and handed over (upgrade in place).
    pub(crate) fn inherit(fd: std::os::fd::OwnedFd, path: &Path) -> Result<Self, BindError> {
        let io_err = |source| BindError::Io { path: path.to_owned(), source };
        let std = std::os::unix::net::UnixListener::from(fd);
        std.set_nonblocking(true).map_err(io_err)?;
        let listener = UnixListener::from_std(std).map_err(io_err)?;
        let meta = std::fs::metadata(path).map_err(io_err)?;
        Ok(Self { listener, path: path.to_owned(), inode: (meta.dev(), meta.ino()) })
    }

    /// Removes the socket file if it is still the one we bound (a newer daemon may own the path).
    pub(crate) fn remove_file(&self) {
        if let Ok(meta) = std::fs::metadata(&self.path)
            && (meta.dev(), meta.ino()) == self.inode
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// True when something accepts connections on `path`.
pub(crate) async fn is_live(path: &Path) -> bool {
    matches!(tokio::time::timeout(SOCKET_PROBE_TIMEOUT, UnixStream::connect(path)).await, Ok(Ok(_)))
}
