//! Which socket to talk to: `--socket`/`TUIC_SOCKET`, else the named instance's short path, else
//! the default instance's `mcp.sock` in its config dir. The path rules replicate tuicd's
//! `paths.rs` exactly (tests compare the two), without depending on tuicd.

use std::path::{Path, PathBuf};

const SOCKET_FILE: &str = "mcp.sock";
/// `sun_path` is 104 bytes on macOS; tuicd keeps every socket path under it.
const SOCKET_PATH_MAX: usize = 104;

pub fn default_config_dir() -> PathBuf {
    if let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(xdg).join("tuic");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"));
    home.join(".config").join("tuic")
}

pub fn socket_path(config_dir: &Path, instance: Option<&str>) -> PathBuf {
    let in_config = config_dir.join(SOCKET_FILE);
    match instance {
        None if in_config.as_os_str().len() < SOCKET_PATH_MAX => in_config,
        None => short_socket_path(&config_dir.to_string_lossy()),
        Some(name) => short_socket_path(name),
    }
}

fn short_socket_path(key: &str) -> PathBuf {
    let uid = rustix::process::getuid().as_raw();
    std::env::temp_dir().join(format!("tuic-{uid}")).join(format!("{:016x}.sock", fnv1a64(key.as_bytes())))
}

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
    fn paths_follow_the_daemons_rules() {
        let dir = Path::new("/home/someone/.config/tuic");
        assert_eq!(socket_path(dir, None), dir.join("mcp.sock"));
        let named = socket_path(dir, Some("work"));
        assert!(named.to_string_lossy().ends_with(&format!("{:016x}.sock", fnv1a64(b"work"))));
        // FNV-1a reference value, so a change to the hash is caught here and in tuicd alike.
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
