//! Where the daemon keeps its files: the config dir and the IPC socket path. The rules live in
//! `proto::paths` so that the bridge and the GUI compute the same paths; this module supplies the
//! process's environment.

use std::path::{Path, PathBuf};

pub const CONFIG_FILE: &str = "config.json";

/// `$XDG_CONFIG_HOME/tuic`, else `~/.config/tuic`.
pub fn default_config_dir() -> PathBuf {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    proto::paths::config_dir_from(xdg.as_deref(), home.as_deref())
}

/// The per-user directory holding short socket paths (created 0700 when binding).
fn short_socket_dir() -> PathBuf {
    proto::paths::short_socket_dir(&std::env::temp_dir(), rustix::process::getuid().as_raw())
}

/// The IPC socket of the default instance (`instance: None`) or a named one.
pub fn socket_path(config_dir: &Path, instance: Option<&str>) -> PathBuf {
    proto::paths::socket_path(config_dir, instance, &short_socket_dir())
}

/// Crash recovery's directory beside the socket (`mcp.keep` for `mcp.sock`): the keeper's socket
/// and each session's record (see `keep`). In the socket's private directory, one per instance.
pub fn keep_dir(socket_path: &Path) -> PathBuf {
    socket_path.with_extension("keep")
}

/// Where the upstream MCP servers' stderr logs go: `<config_dir>/logs/upstreams`, beside the
/// configuration that names them (a named instance has its own).
pub fn upstream_logs_dir(config_dir: &Path) -> PathBuf {
    config_dir.join("logs").join("upstreams")
}

/// Each ACP connection's agent stderr: `<config_dir>/logs/acp/<connection>.log`.
pub fn acp_logs_dir(config_dir: &Path) -> PathBuf {
    config_dir.join("logs").join("acp")
}
