//! Where credentials live, decided without IO: which store the environment asks for, and what
//! moves from `credentials.json` into the keyring when the keyring answers.

use std::collections::BTreeMap;

/// The environment variable that picks the store.
pub(crate) const MODE_VAR: &str = "TUIC_CREDENTIALS_STORE";

/// Which store `TUIC_CREDENTIALS_STORE` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The OS keyring when its probe succeeds, else the 0600 file (the default).
    Auto,
    /// The OS keyring only: when it does not answer, credentials are refused rather than written
    /// to a file.
    Keyring,
    /// The 0600 file only; the keyring is never contacted.
    File,
}

impl Mode {
    /// Reads the mode from `value` (unset is `auto`); an unknown value is an error naming the
    /// allowed ones.
    pub(crate) fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.map(str::trim) {
            None | Some("" | "auto") => Ok(Self::Auto),
            Some("keyring") => Ok(Self::Keyring),
            Some("file") => Ok(Self::File),
            Some(other) => Err(format!("{MODE_VAR}={other:?} is not one of \"auto\", \"keyring\", \"file\"")),
        }
    }

    /// The mode of this process's environment; an unknown value is the file store (the one that
    /// contacts nothing) and the error that says so.
    pub(crate) fn from_env() -> (Self, Option<String>) {
        match Self::parse(std::env::var(MODE_VAR).ok().as_deref()) {
            Ok(mode) => (mode, None),
            Err(e) => (Self::File, Some(e)),
        }
    }
}

/// What opening the keyring store does with what both stores hold.
#[derive(Debug, PartialEq)]
pub(crate) struct Migration<E> {
    /// Every upstream's entry as the daemon sees it from now on.
    pub merged: BTreeMap<String, E>,
    /// The upstream ids whose file entry is written into the keyring (then removed from the file).
    pub to_keyring: Vec<String>,
}

/// Merges the file's entries into the keyring's. The file only receives an entry while the
/// keyring does not take it (no keyring at the time, or a write it refused), so where both hold
/// one the file's is the newer, and every file entry moves into the keyring.
pub(crate) fn migrate<E: Clone>(file: &BTreeMap<String, E>, keyring: BTreeMap<String, E>) -> Migration<E> {
    let mut merged = keyring;
    for (id, entry) in file {
        merged.insert(id.clone(), entry.clone());
    }
    Migration { merged, to_keyring: file.keys().cloned().collect() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_auto_unless_the_environment_names_another() {
        assert_eq!(Mode::parse(None), Ok(Mode::Auto));
        assert_eq!(Mode::parse(Some("")), Ok(Mode::Auto));
        assert_eq!(Mode::parse(Some("file")), Ok(Mode::File));
        assert_eq!(Mode::parse(Some(" keyring ")), Ok(Mode::Keyring));
        let err = Mode::parse(Some("vault")).unwrap_err();
        assert!(
            err.contains("TUIC_CREDENTIALS_STORE") && err.contains("\"vault\"") && err.contains("\"file\""),
            "{err}"
        );
    }

    #[test]
    fn every_file_entry_moves_into_the_keyring_and_wins_over_an_older_keyring_entry() {
        let file = BTreeMap::from([("a".to_owned(), "file-a"), ("b".to_owned(), "file-b")]);
        let keyring = BTreeMap::from([("b".to_owned(), "old-b"), ("c".to_owned(), "keyring-c")]);
        let m = migrate(&file, keyring);
        assert_eq!(m.to_keyring, vec!["a".to_owned(), "b".to_owned()]);
        assert_eq!(m.merged.get("a"), Some(&"file-a"));
        assert_eq!(m.merged.get("b"), Some(&"file-b"));
        assert_eq!(m.merged.get("c"), Some(&"keyring-c"));
    }

    #[test]
    fn an_empty_file_moves_nothing() {
        let keyring = BTreeMap::from([("c".to_owned(), 1)]);
        let m = migrate(&BTreeMap::new(), keyring.clone());
        assert!(m.to_keyring.is_empty());
        assert_eq!(m.merged, keyring);
    }
}
