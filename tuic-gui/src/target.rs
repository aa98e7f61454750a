//! Where the daemon is: its Unix socket, or a TCP address with Basic Auth (and TLS for
//! `https://`). The address and user are remembered in the GUI's own file; the password never is.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The GUI's remembered connection, `<config dir>/gui.json`.
const GUI_CONFIG_FILE: &str = "gui.json";

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    Socket(PathBuf),
    Remote(Remote),
}

#[derive(Clone, PartialEq)]
pub(crate) struct Remote {
    /// `http://host:port` or `https://host:port`.
    pub url: String,
    pub user: String,
    pub password: String,
    /// A PEM file of the CA (or self-signed certificate) to trust for `https://`; without it the
    /// system's roots are used.
    pub ca_cert: Option<PathBuf>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote").field("url", &self.url).field("user", &self.user).finish_non_exhaustive()
    }
}

impl Target {
    /// What the status bar shows.
    pub(crate) fn label(&self) -> String {
        match self {
            Self::Socket(path) => path.display().to_string(),
            Self::Remote(remote) => format!("{}@{}", remote.user, remote.url),
        }
    }
}

/// The remembered part of a connection: never the password.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Remembered {
    pub socket: Option<PathBuf>,
    pub url: Option<String>,
    pub user: Option<String>,
    pub ca_cert: Option<PathBuf>,
}

impl Remembered {
    pub(crate) fn of(target: &Target) -> Self {
        match target {
            Target::Socket(path) => Self { socket: Some(path.clone()), ..Self::default() },
            Target::Remote(r) => {
                Self { url: Some(r.url.clone()), user: Some(r.user.clone()), ca_cert: r.ca_cert.clone(), socket: None }
            }
        }
    }

    pub(crate) fn load(config_dir: &Path) -> Self {
        std::fs::read(config_dir.join(GUI_CONFIG_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Written through a temporary file and a rename, so a crash never leaves half a file.
    pub(crate) fn save(&self, config_dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(config_dir)?;
        let path = config_dir.join(GUI_CONFIG_FILE);
        let tmp = config_dir.join(format!("{GUI_CONFIG_FILE}.tmp"));
        std::fs::write(&tmp, serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?)?;
        std::fs::rename(tmp, path)
    }
}

/// The config dir by the daemon's own rules (`proto::paths`).
pub(crate) fn config_dir() -> PathBuf {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    proto::paths::config_dir_from(xdg.as_deref(), home.as_deref())
}

/// The default instance's socket, by the daemon's own rules.
pub(crate) fn default_socket() -> PathBuf {
    proto::paths::socket_path(
        &config_dir(),
        None,
        &proto::paths::short_socket_dir(&std::env::temp_dir(), rustix::process::getuid().as_raw()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remembered_connection_never_holds_the_password() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = Target::Remote(Remote {
            url: "https://box:9877".into(),
            user: "me".into(),
            password: "s3cret-pass".into(),
            ca_cert: None,
        });
        Remembered::of(&target).save(dir.path()).expect("save");
        let written = std::fs::read_to_string(dir.path().join(GUI_CONFIG_FILE)).expect("read");
        assert!(!written.contains("s3cret-pass"), "{written}");
        let loaded = Remembered::load(dir.path());
        assert_eq!((loaded.url.as_deref(), loaded.user.as_deref()), (Some("https://box:9877"), Some("me")));
        assert!(!format!("{target:?}").contains("s3cret"), "Debug hides the password too");
    }
}
