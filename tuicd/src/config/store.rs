//! Loading and saving `config.json`: atomic writes (temp file + rename) under a cross-process
//! lock, and load errors that name the file, the line and the key. A broken file is never
//! overwritten: the daemon refuses to start instead.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use super::AppConfig;
use super::merge::parse_config;
use crate::lock::{Recover, RecoverRw};
use crate::paths::CONFIG_FILE;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: line {line}, column {column}: not valid JSON: {message}")]
    Syntax { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{path}: line {line}: {message}")]
    Invalid { path: PathBuf, line: usize, message: String },
}

/// The live config and the file behind it. Readers take a cheap clone of the `Arc`; a save
/// swaps it only after the file is durably replaced.
#[derive(Debug)]
pub(crate) struct ConfigStore {
    path: PathBuf,
    current: RwLock<Arc<AppConfig>>,
    /// Serialises saves within the process; the file lock does so across processes.
    save_lock: std::sync::Mutex<()>,
}

impl ConfigStore {
    /// Loads `config.json` from `dir`, or the defaults when there is none (nothing is written
    /// until the first save).
    pub(crate) fn open(dir: &Path) -> Result<Self, ConfigError> {
        let path = dir.join(CONFIG_FILE);
        let config = match std::fs::read_to_string(&path) {
            Ok(text) => parse_file(&path, &text)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => AppConfig::default(),
            Err(source) => return Err(ConfigError::Io { path, source }),
        };
        Ok(Self { path, current: RwLock::new(Arc::new(config)), save_lock: Default::default() })
    }

    /// Re-reads the file (SIGHUP) and makes it live. A missing file means the defaults; a broken
    /// one changes nothing and says why. Returns `(previous, next)`.
    pub(crate) fn reload(&self) -> Result<(Arc<AppConfig>, Arc<AppConfig>), ConfigError> {
        let _in_process = self.save_lock.locked();
        let next = match std::fs::read_to_string(&self.path) {
            Ok(text) => parse_file(&self.path, &text)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => AppConfig::default(),
            Err(source) => return Err(ConfigError::Io { path: self.path.clone(), source }),
        };
        let previous = self.get();
        let next = Arc::new(next);
        *self.current.write_locked() = next.clone();
        Ok((previous, next))
    }

    pub(crate) fn get(&self) -> Arc<AppConfig> {
        self.current.read_locked().clone()
    }

    /// Computes the next config from the current one and persists it. Nothing changes when
    /// `update` fails or the write fails. Returns `(previous, next)`.
    pub(crate) fn update<E: From<ConfigError>>(
        &self,
        update: impl FnOnce(&AppConfig) -> Result<AppConfig, E>,
    ) -> Result<(Arc<AppConfig>, Arc<AppConfig>), E> {
        let _in_process = self.save_lock.locked();
        let previous = self.get();
        let next = Arc::new(update(&previous)?);
        if *next != *previous {
            write_atomically(&self.path, &next)?;
            *self.current.write_locked() = next.clone();
        }
        Ok((previous, next))
    }
}

fn parse_file(path: &Path, text: &str) -> Result<AppConfig, ConfigError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
        path: path.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    parse_config(value).map_err(|message| ConfigError::Invalid {
        path: path.to_owned(),
        line: line_of_key(text, &message),
        message,
    })
}

/// Finds the line of the last key named in `message` (`services.server.port: ...`), for an error
/// a person can act on. Falls back to line 1.
fn line_of_key(text: &str, message: &str) -> usize {
    let key_path = message.split(':').next().unwrap_or("");
    let key = key_path.rsplit('.').next().unwrap_or("").trim_matches(|c| c == '`' || c == '\'');
    let key = key.split('[').next().unwrap_or(key);
    if key.is_empty() {
        return 1;
    }
    let needle = format!("\"{key}\"");
    text.lines().position(|l| l.contains(&needle)).map_or(1, |i| i + 1)
}

fn write_atomically(path: &Path, config: &AppConfig) -> Result<(), ConfigError> {
    let io_err = |source| ConfigError::Io { path: path.to_owned(), source };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err)?;
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(dir.join(".config.json.lock"))
        .map_err(io_err)?;
    lock.lock().map_err(io_err)?;
    let result = serde_json::to_vec_pretty(config).map_err(std::io::Error::other).and_then(|mut text| {
        text.push(b'\n');
        crate::private_file::write(path, &text)
    });
    let _ = lock.unlock();
    result.map_err(io_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_type_names_file_line_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let text =
            "{\n  \"mcp_server_enabled\": true,\n  \"services\": {\n    \"server\": {\"port\": \"high\"}\n  }\n}\n";
        std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
        let err = ConfigStore::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("config.json"), "{err}");
        assert!(err.contains("line 4"), "{err}");
        assert!(err.contains("services.server.port"), "{err}");
        assert_eq!(std::fs::read_to_string(dir.path().join(CONFIG_FILE)).unwrap(), text);
    }

    #[test]
    fn invalid_json_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), "{\n\"a\": 1,,\n}").unwrap();
        let err = ConfigStore::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn saves_are_atomic_and_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = ConfigStore::open(dir.path()).unwrap();
        store
            .update(|c| {
                let mut next = c.clone();
                next.collapse_tools = true;
                Ok::<_, ConfigError>(next)
            })
            .unwrap();
        let reread = ConfigStore::open(dir.path()).unwrap();
        assert!(reread.get().collapse_tools);
        let mode = std::fs::metadata(dir.path().join(CONFIG_FILE)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }
}
