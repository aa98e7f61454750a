//! Which socket to talk to: `--socket`/`TUIC_SOCKET`, else the named instance's short path, else
//! the default instance's `mcp.sock` in its config dir. The rules are tuicd's own, from
//! `proto::paths`; this module supplies the environment.

use std::path::{Path, PathBuf};

pub(crate) fn default_config_dir() -> PathBuf {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    proto::paths::config_dir_from(xdg.as_deref(), home.as_deref())
}

pub(crate) fn socket_path(config_dir: &Path, instance: Option<&str>) -> PathBuf {
    let short_dir = proto::paths::short_socket_dir(&std::env::temp_dir(), rustix::process::getuid().as_raw());
    proto::paths::socket_path(config_dir, instance, &short_dir)
}
