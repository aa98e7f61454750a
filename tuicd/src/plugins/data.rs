//! `GET /api/plugins/:plugin_id/data/*path`: one file of a plugin's data directory,
//! `<config dir>/plugins/<plugin_id>/data/`. The id and the path are checked as text before
//! anything touches the file system (`..` as any component, encoded or doubly encoded forms, NUL
//! and control bytes, backslashes, absolute paths); what is left is resolved and must still lie
//! inside the data directory, so a link out of it is refused too.

use std::path::{Path, PathBuf};

use crate::limits::PLUGIN_DATA_MAX_BYTES;

/// Longest plugin id and data path accepted, and most path components.
const ID_MAX_BYTES: usize = 128;
const PATH_MAX_BYTES: usize = 1024;
const PATH_MAX_COMPONENTS: usize = 32;

/// Why a data read was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum DataError {
    /// The id or the path is malformed or leaves the directory (the sentence says which).
    Invalid(String),
    /// No plugin by that id is installed.
    UnknownPlugin(String),
    /// The plugin has no such data file.
    NotFound(String),
    TooLarge(String),
    Io(String),
}

/// A data file: its bytes, and whether they are JSON.
#[derive(Debug)]
pub(crate) struct DataFile {
    pub bytes: Vec<u8>,
    pub json: bool,
}

/// A plugin id: 1..=128 bytes of `A-Z a-z 0-9 . _ -`, not starting with a dot.
pub(crate) fn check_id(id: &str) -> Result<(), DataError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if id.is_empty() || id.len() > ID_MAX_BYTES || id.starts_with('.') || !id.chars().all(allowed) {
        return Err(DataError::Invalid(format!(
            "plugin_id '{id}' is not a plugin id (1 to {ID_MAX_BYTES} of A-Z a-z 0-9 . _ -, not starting with a dot)"
        )));
    }
    Ok(())
}

/// The path as it came in the URL (still percent-encoded), checked and split into components.
pub(crate) fn check_path(raw: &str) -> Result<Vec<String>, DataError> {
    let refuse = |why: &str| Err(DataError::Invalid(format!("path '{raw}' {why}")));
    if raw.is_empty() {
        return refuse("is empty: name a file in the plugin's data directory");
    }
    if raw.len() > PATH_MAX_BYTES {
        return refuse(&format!("is longer than {PATH_MAX_BYTES} bytes"));
    }
    let Some(bytes) = percent_decode(raw) else { return refuse("has a malformed percent-encoding") };
    let Ok(decoded) = String::from_utf8(bytes) else { return refuse("is not UTF-8") };
    if decoded.chars().any(|c| c.is_control()) {
        return refuse("contains a NUL or control character");
    }
    if decoded.contains('%') {
        return refuse("is percent-encoded twice");
    }
    if decoded.contains('\\') {
        return refuse("contains a backslash");
    }
    if decoded.starts_with('/') {
        return refuse("is absolute: give it relative to the plugin's data directory");
    }
    let components: Vec<&str> = decoded.split('/').collect();
    if components.len() > PATH_MAX_COMPONENTS {
        return refuse(&format!("has more than {PATH_MAX_COMPONENTS} components"));
    }
    for component in &components {
        match *component {
            ".." => return refuse("contains '..'"),
            "." => return refuse("contains '.' as a component"),
            "" => return refuse("has an empty component ('//' or a trailing '/')"),
            _ => {}
        }
    }
    Ok(components.into_iter().map(str::to_owned).collect())
}

/// Strict percent-decoding: `%` must be followed by two hex digits.
fn percent_decode(raw: &str) -> Option<Vec<u8>> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The plugin's data directory (the plugin need not have one yet).
pub(crate) fn data_dir(config_dir: &Path, id: &str) -> PathBuf {
    config_dir.join("plugins").join(id).join("data")
}

/// Reads one data file of an installed plugin. `id` and `components` passed the checks above.
/// Blocking: call it on the blocking pool.
pub(crate) fn read(config_dir: &Path, id: &str, components: &[String]) -> Result<DataFile, DataError> {
    let plugin_dir = config_dir.join("plugins").join(id);
    if !plugin_dir.is_dir() {
        return Err(DataError::UnknownPlugin(format!("no plugin '{id}' is installed")));
    }
    let relative = components.join("/");
    let missing = || DataError::NotFound(format!("plugin '{id}' has no data file '{relative}'"));
    let io = |e: std::io::Error| DataError::Io(format!("plugin '{id}' data file '{relative}': {e}"));
    let root = match data_dir(config_dir, id).canonicalize() {
        Ok(root) => root,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => return Err(io(e)),
    };
    // The data directory (and the plugin's own) must stay where they are named: a symlink that
    // takes either elsewhere (`data -> /etc`) would make the rest of the check hold for the
    // wrong tree.
    let plugins = config_dir.join("plugins").canonicalize().map_err(io)?;
    let own = plugin_dir.canonicalize().map_err(io)?;
    if !own.starts_with(&plugins) || !root.starts_with(&own) {
        return Err(DataError::Invalid(format!(
            "plugin '{id}': its data directory leads out of the plugin's own directory (a symlink)"
        )));
    }
    let target = match components.iter().fold(root.clone(), |path, c| path.join(c)).canonicalize() {
        Ok(target) => target,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => return Err(io(e)),
    };
    if !target.starts_with(&root) {
        return Err(DataError::Invalid(format!("path '{relative}' leads out of the plugin's data directory")));
    }
    let meta = std::fs::metadata(&target).map_err(io)?;
    if !meta.is_file() {
        return Err(missing());
    }
    if meta.len() > PLUGIN_DATA_MAX_BYTES {
        return Err(DataError::TooLarge(format!(
            "plugin '{id}' data file '{relative}' is larger than {PLUGIN_DATA_MAX_BYTES} bytes"
        )));
    }
    let bytes = std::fs::read(&target).map_err(io)?;
    let json = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_ok();
    Ok(DataFile { bytes, json })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traversal_and_encoded_forms_are_refused_before_any_file_system_access() {
        let corpus = [
            "..",
            "../x",
            "a/../../x",
            "a/..",
            "%2e%2e/x",
            "%2E%2E%2Fx",
            "a%2f..%2f..%2fx",
            "%252e%252e/x",
            "..%5cx",
            "a\\..\\x",
            "/etc/passwd",
            "%2fetc%2fpasswd",
            "a%00.json",
            "a\u{0}b",
            "./a",
            "a//b",
            "a/",
            "",
            "%zz",
            "%2",
            "%ff%fe",
        ];
        for raw in corpus {
            assert!(matches!(check_path(raw), Err(DataError::Invalid(_))), "{raw:?} was accepted");
        }
        assert_eq!(check_path("state.json").unwrap(), ["state.json"]);
        assert_eq!(check_path("logs/2026%20dec.txt").unwrap(), ["logs", "2026 dec.txt"]);
        assert_eq!(check_path("v1..2.json").unwrap(), ["v1..2.json"], "'..' inside a name is a name");
    }

    #[test]
    fn plugin_ids_are_plain_names() {
        for bad in ["", ".", "..", ".hidden", "a/b", "a%2fb", "a b", &"x".repeat(129)] {
            assert!(check_id(bad).is_err(), "{bad:?} was accepted");
        }
        for good in ["my-plugin", "com.example.watch_2"] {
            check_id(good).unwrap();
        }
    }

    #[test]
    fn a_data_directory_or_plugin_directory_that_is_a_symlink_elsewhere_serves_nothing() {
        let config = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("passwd"), "root:x:0:0").unwrap();
        let plugin = config.path().join("plugins/p");
        std::fs::create_dir_all(&plugin).unwrap();
        std::os::unix::fs::symlink(outside.path(), data_dir(config.path(), "p")).unwrap();
        let refused = read(config.path(), "p", &["passwd".to_owned()]);
        assert!(matches!(&refused, Err(DataError::Invalid(m)) if m.contains("symlink")), "{:?}", refused.err());

        std::fs::create_dir_all(outside.path().join("data")).unwrap();
        std::fs::write(outside.path().join("data/passwd"), "root:x:0:0").unwrap();
        std::os::unix::fs::symlink(outside.path(), config.path().join("plugins/q")).unwrap();
        assert!(matches!(read(config.path(), "q", &["passwd".to_owned()]), Err(DataError::Invalid(_))));

        std::fs::remove_file(data_dir(config.path(), "p")).unwrap();
        std::fs::create_dir_all(data_dir(config.path(), "p")).unwrap();
        std::fs::write(data_dir(config.path(), "p").join("state.json"), "{}").unwrap();
        assert_eq!(
            read(config.path(), "p", &["state.json".to_owned()]).unwrap().bytes,
            b"{}",
            "a real data directory serves"
        );
    }
}
