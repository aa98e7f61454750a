//! Where a tuicd instance listens, as pure rules shared by the daemon and its clients (the bridge,
//! the GUI), so that they can never disagree. Callers supply the environment (config dir, temp
//! dir, uid); nothing here reads it.

use std::path::{Path, PathBuf};

/// The default instance's socket file, in its config dir.
pub const SOCKET_FILE: &str = "mcp.sock";
/// `sun_path` is 104 bytes on macOS and 108 on Linux; every socket path is kept under the smaller.
pub const SOCKET_PATH_MAX: usize = 104;

/// `$XDG_CONFIG_HOME/tuic`, else `$HOME/.config/tuic`, from the two variables' values.
pub fn config_dir_from(xdg_config_home: Option<&Path>, home: Option<&Path>) -> PathBuf {
    match xdg_config_home.filter(|p| !p.as_os_str().is_empty()) {
        Some(xdg) => xdg.join("tuic"),
        None => home.unwrap_or(Path::new("/")).join(".config").join("tuic"),
    }
}

/// The per-user directory (mode 0700) that holds short socket paths: `<temp>/tuic-<uid>`.
pub fn short_socket_dir(temp_dir: &Path, uid: u32) -> PathBuf {
    temp_dir.join(format!("tuic-{uid}"))
}

/// The IPC socket of an instance. The default instance lives in its config dir; a named instance
/// (or a config dir too deep for `sun_path`) gets a short deterministic name in `short_dir`, so
/// any name yields a path under [`SOCKET_PATH_MAX`] (for a short temp dir).
pub fn socket_path(config_dir: &Path, instance: Option<&str>, short_dir: &Path) -> PathBuf {
    let in_config = config_dir.join(SOCKET_FILE);
    let short = |key: &str| short_dir.join(format!("{:016x}.sock", fnv1a64(key.as_bytes())));
    match instance {
        None if in_config.as_os_str().len() < SOCKET_PATH_MAX => in_config,
        None => short(&config_dir.to_string_lossy()),
        Some(name) => short(name),
    }
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

    const SHORT: &str = "/tmp/tuic-1000";

    #[test]
    fn any_instance_name_gives_a_short_stable_path() {
        let dir = Path::new("/home/someone/.config/tuic");
        let long = "x".repeat(500);
        let a = socket_path(dir, Some(&long), Path::new(SHORT));
        assert!(a.as_os_str().len() < SOCKET_PATH_MAX, "{a:?}");
        assert_eq!(a, socket_path(dir, Some(&long), Path::new(SHORT)));
        assert_ne!(a, socket_path(dir, Some("other"), Path::new(SHORT)));
        // The hash is part of the wire contract between daemon and clients: pin one value.
        assert_eq!(
            socket_path(dir, Some("work"), Path::new(SHORT)),
            Path::new(SHORT).join(format!("{:016x}.sock", fnv1a64(b"work")))
        );
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn default_instance_lives_in_its_config_dir_unless_too_deep() {
        let dir = Path::new("/home/someone/.config/tuic");
        assert_eq!(socket_path(dir, None, Path::new(SHORT)), dir.join(SOCKET_FILE));
        let deep = PathBuf::from(format!("/{}", "d".repeat(120)));
        assert!(socket_path(&deep, None, Path::new(SHORT)).starts_with(SHORT));
    }

    #[test]
    fn config_dir_prefers_xdg_then_home() {
        assert_eq!(config_dir_from(Some(Path::new("/x")), Some(Path::new("/h"))), Path::new("/x/tuic"));
        assert_eq!(config_dir_from(Some(Path::new("")), Some(Path::new("/h"))), Path::new("/h/.config/tuic"));
        assert_eq!(config_dir_from(None, None), Path::new("/.config/tuic"));
    }
}
