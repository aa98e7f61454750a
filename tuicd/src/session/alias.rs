//! Human-friendly aliases (`tu-1`): a prefix derived from the repository directory name plus a
//! per-prefix counter. A restored alias is untrusted input: it is reserved only when it has the
//! `<prefix>-<number>` shape and no live session holds it.

use std::collections::HashMap;
use std::path::Path;

/// Prefix for sessions outside any repository ("shell").
const NO_REPO_PREFIX: &str = "sh";
/// A restored alias's prefix is at most this long; longer values are not ours.
const PREFIX_MAX_LEN: usize = 8;

#[derive(Debug, Default)]
pub(super) struct AliasBook {
    counters: HashMap<String, u64>,
}

impl AliasBook {
    /// Reserves `restored` when it is well-formed and `taken` says no live session holds it, raising
    /// its prefix's counter past it; otherwise mints the next alias for `cwd`'s repository.
    pub(super) fn assign(&mut self, cwd: &Path, restored: Option<&str>, taken: impl Fn(&str) -> bool) -> String {
        if let Some(alias) = restored
            && let Some((prefix, n)) = parse(alias)
            && !taken(alias)
        {
            let counter = self.counters.entry(prefix.to_owned()).or_default();
            *counter = (*counter).max(n);
            return alias.to_owned();
        }
        let prefix = prefix_for(cwd);
        loop {
            let counter = self.counters.entry(prefix.clone()).or_default();
            *counter += 1;
            let alias = format!("{prefix}-{counter}");
            if !taken(&alias) {
                return alias;
            }
        }
    }
}

/// `<prefix>-<n>`: a lowercase alphanumeric prefix and a positive decimal counter.
pub(super) fn parse(alias: &str) -> Option<(&str, u64)> {
    let (prefix, number) = alias.rsplit_once('-')?;
    let prefix_ok = !prefix.is_empty()
        && prefix.len() <= PREFIX_MAX_LEN
        && prefix.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let number_ok = !number.is_empty() && number.len() <= 9 && number.bytes().all(|b| b.is_ascii_digit());
    if !prefix_ok || !number_ok || number.starts_with('0') {
        return None;
    }
    Some((prefix, number.parse().ok()?))
}

/// The top level of the git work tree holding `cwd` (the nearest directory with a `.git`).
pub(super) fn repo_root(cwd: &Path) -> Option<&Path> {
    cwd.ancestors().find(|dir| dir.join(".git").exists())
}

/// The repository root's directory name: a multi-word name gives the first character of each
/// segment (`tui-commander` -> `tc`), a single word its first two characters (`tuicommander` -> `tu`).
pub(super) fn prefix_for(cwd: &Path) -> String {
    let Some(root) = repo_root(cwd) else {
        return NO_REPO_PREFIX.into();
    };
    let name = root.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let words: Vec<&str> = name.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let prefix: String = match words.as_slice() {
        [] => String::new(),
        [word] => word.chars().take(2).collect(),
        many => many.iter().filter_map(|w| w.chars().next()).take(PREFIX_MAX_LEN).collect(),
    };
    if prefix.is_empty() { NO_REPO_PREFIX.into() } else { prefix }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(name: &str) -> tempfile::TempDir {
        let dir = tempfile::Builder::new().prefix("alias").tempdir().unwrap();
        let root = dir.path().join(name);
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        dir
    }

    #[test]
    fn prefixes_follow_the_repository_name() {
        let one = repo("tuicommander");
        assert_eq!(prefix_for(&one.path().join("tuicommander/src")), "tu");
        let many = repo("tui-commander_app");
        assert_eq!(prefix_for(&many.path().join("tui-commander_app")), "tca");
        assert_eq!(prefix_for(Path::new("/")), "sh");
    }

    #[test]
    fn counters_are_per_prefix_and_restores_are_checked() {
        let mut book = AliasBook::default();
        let cwd = Path::new("/");
        assert_eq!(book.assign(cwd, None, |_| false), "sh-1");
        assert_eq!(book.assign(cwd, Some("sh-7"), |_| false), "sh-7");
        assert_eq!(book.assign(cwd, None, |_| false), "sh-8");
        // Taken or malformed restores are dropped for a fresh alias.
        assert_eq!(book.assign(cwd, Some("sh-7"), |a| a == "sh-7"), "sh-9");
        assert_eq!(book.assign(cwd, Some("../x-1"), |_| false), "sh-10");
        assert_eq!(book.assign(cwd, Some("tu-0"), |_| false), "sh-11");
        assert_eq!(book.assign(cwd, Some("tu-3"), |_| false), "tu-3");
        // A minted alias skips one a live session restored.
        assert_eq!(book.assign(cwd, None, |a| a == "sh-12"), "sh-13");
    }
}
