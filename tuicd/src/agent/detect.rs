//! Which known agent CLIs are installed: one list, shared by REST `GET /agents/detect` and MCP
//! `agent action=detect`. The pure core takes the PATH string and an is-executable test, so it
//! is tested without touching the file system; [`detect_installed`] is the thin real wrapper.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::adapters::ADAPTERS;

/// One installed agent binary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct InstalledAgent {
    /// The wire `agent_type`.
    pub agent_type: &'static str,
    /// The agent's display name (`Claude Code`).
    pub display_name: &'static str,
    /// The binary name found.
    pub name: &'static str,
    pub path: PathBuf,
}

/// Every adapter binary found on `path_var`, in table order; the first PATH entry wins per
/// binary, as the shell would pick it.
pub(crate) fn detect_on_path(path_var: &OsStr, is_executable: impl Fn(&Path) -> bool) -> Vec<InstalledAgent> {
    let dirs: Vec<PathBuf> = std::env::split_paths(path_var).filter(|dir| !dir.as_os_str().is_empty()).collect();
    let mut found = Vec::new();
    for adapter in ADAPTERS {
        for &name in adapter.binaries {
            let hit = dirs.iter().flat_map(|dir| candidates(dir, name)).find(|candidate| is_executable(candidate));
            if let Some(path) = hit {
                found.push(InstalledAgent { agent_type: adapter.id, display_name: adapter.name, name, path });
            }
        }
    }
    found
}

fn candidates(dir: &Path, name: &str) -> Vec<PathBuf> {
    if cfg!(windows) {
        ["exe", "cmd", "bat"].iter().map(|ext| dir.join(format!("{name}.{ext}"))).collect()
    } else {
        vec![dir.join(name)]
    }
}

/// [`detect_on_path`] over this process's `PATH` and the real file system. Blocking (stats files):
/// run it off the async workers.
pub(crate) fn detect_installed() -> Vec<InstalledAgent> {
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    detect_on_path(&path_var, is_executable_file)
}

/// A regular file (symlinks followed) that someone may execute.
pub(crate) fn is_executable_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_found_in_path_order_and_missing_ones_skipped() {
        let installed = ["/opt/a/claude", "/usr/bin/claude", "/usr/bin/aider"];
        let found = detect_on_path(OsStr::new("/opt/a::/usr/bin"), |p| installed.iter().any(|i| Path::new(i) == p));
        let summary: Vec<_> = found.iter().map(|a| (a.agent_type, a.path.to_str().unwrap())).collect();
        if cfg!(unix) {
            assert_eq!(summary, [("claude", "/opt/a/claude"), ("aider", "/usr/bin/aider")]);
        }
        assert!(detect_on_path(OsStr::new(""), |_| true).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn the_real_wrapper_needs_an_executable_regular_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let codex = dir.path().join("codex");
        std::fs::write(&codex, "#!/bin/sh\n").unwrap();
        std::fs::write(dir.path().join("gemini"), "not executable").unwrap();
        std::fs::create_dir(dir.path().join("aider")).unwrap();
        std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o755)).unwrap();
        let found = detect_on_path(dir.path().as_os_str(), is_executable_file);
        assert_eq!(
            found,
            vec![InstalledAgent { agent_type: "codex", display_name: "Codex", name: "codex", path: codex }]
        );
    }
}
