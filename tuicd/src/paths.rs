//! Where the daemon keeps its files: the config dir and the IPC socket path.

use std::path::{Path, PathBuf};

use crate::limits::SOCKET_PATH_MAX;

pub const CONFIG_FILE: &str = "config.json";
pub const SOCKET_FILE: &str = "mcp.sock";

/// `$XDG_CONFIG_HOME/tuic`, else `~/.config/tuic`.
pub fn default_config_dir() -> PathBuf {
    if let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(xdg).join("tuic");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"));
    home.join(".config").join("tuic")
}

/// The IPC socket for an instance. The default instance lives in its config dir; a named
/// instance (or a config dir too deep for `sun_path`) gets a short deterministic path in the temp
/// dir, in a per-user 0700 directory, so any name yields a path under [`SOCKET_PATH_MAX`].
pub fn socket_path(config_dir: &Path, instance: Option<&str>) -> PathBuf {
    let in_config = config_dir.join(SOCKET_FILE);
    match instance {
        None if in_config.as_os_str().len() < SOCKET_PATH_MAX => in_config,
        None => short_socket_path(&config_dir.to_string_lossy()),
        Some(name) => short_socket_path(name),
    }
}

/// The per-user directory holding short socket paths.
pub fn short_socket_dir() -> PathBuf {
    let uid = rustix::process::getuid().as_raw();
    std::env::temp_dir().join(format!("tuic-{uid}"))
}

fn short_socket_path(key: &str) -> PathBuf {
    short_socket_dir().join(format!("{:016x}.sock", fnv1a64(key.as_bytes())))
}

/// FNV-1a: stable across releases and platforms, which `DefaultHasher` does not promise.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_instance_name_gives_a_short_stable_path() {
        let dir = Path::new("/home/someone/.config/tuic");
        let long = "x".repeat(500);
        let a = socket_path(dir, Some(&long));
        assert!(a.as_os_str().len() < SOCKET_PATH_MAX, "{a:?}");
        assert_eq!(a, socket_path(dir, Some(&long)));
        assert_ne!(a, socket_path(dir, Some("other")));
    }

    #[test]
    fn default_instance_lives_in_its_config_dir_unless_too_deep() {
        let dir = Path::new("/home/someone/.config/tuic");
        assert_eq!(socket_path(dir, None), dir.join(SOCKET_FILE));
        let deep = PathBuf::from(format!("/{}", "d".repeat(120)));
        assert!(socket_path(&deep, None).as_os_str().len() < SOCKET_PATH_MAX);
    }
}
