//! The two prompt libraries in the config dir, one Markdown file per prompt: `ai-prompts/` (the
//! prompts tuic's own AI features run) and `prompts/` (the user's saved prompts for agents).
//! A name is a file name: checked before any path is built, so nothing outside the library is
//! ever read or written.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::limits::{PROMPT_LIBRARY_MAX, PROMPT_MAX_BYTES, PROMPT_NAME_MAX_LEN};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Library {
    AiPrompts,
    Prompts,
}

impl Library {
    pub(crate) fn dir_name(self) -> &'static str {
        match self {
            Library::AiPrompts => "ai-prompts",
            Library::Prompts => "prompts",
        }
    }

    fn dir(self, config_dir: &Path) -> PathBuf {
        config_dir.join(self.dir_name())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct PromptInfo {
    pub name: String,
    pub bytes: u64,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum PromptError {
    #[error(
        "name '{0}' is not a prompt name: use 1 to {PROMPT_NAME_MAX_LEN} letters, digits, '-', '_' or '.', starting with a letter or digit"
    )]
    BadName(String),
    #[error("no prompt named '{0}' in {1}/")]
    NotFound(String, &'static str),
    #[error("content must not be empty")]
    Empty,
    #[error("content is {0} bytes; a prompt holds at most {PROMPT_MAX_BYTES}")]
    TooLarge(usize),
    #[error("{0}/ already holds {PROMPT_LIBRARY_MAX} prompts; overwrite one instead")]
    Full(&'static str),
    #[error("{0}")]
    Io(String),
}

/// A prompt's name as its file name allows: no separator, no `..`, no leading dot.
pub(crate) fn check_name(name: &str) -> Result<(), PromptError> {
    let ok = !name.is_empty()
        && name.len() <= PROMPT_NAME_MAX_LEN
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !name.contains("..")
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok { Ok(()) } else { Err(PromptError::BadName(name.chars().take(80).collect())) }
}

fn file(config_dir: &Path, library: Library, name: &str) -> Result<PathBuf, PromptError> {
    check_name(name)?;
    Ok(library.dir(config_dir).join(format!("{name}.md")))
}

/// The library's prompts by name, at most [`PROMPT_LIBRARY_MAX`]. A missing library is empty.
pub(crate) fn list(config_dir: &Path, library: Library) -> Result<Vec<PromptInfo>, PromptError> {
    let entries = match std::fs::read_dir(library.dir(config_dir)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(PromptError::Io(format!("cannot read {}/: {e}", library.dir_name()))),
    };
    let mut prompts: Vec<PromptInfo> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let file_name = entry.file_name().into_string().ok()?;
            let name = file_name.strip_suffix(".md")?;
            check_name(name).ok()?;
            let meta = entry.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some(PromptInfo { name: name.to_owned(), bytes: meta.len() })
        })
        .take(PROMPT_LIBRARY_MAX)
        .collect();
    prompts.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(prompts)
}

pub(crate) fn load(config_dir: &Path, library: Library, name: &str) -> Result<String, PromptError> {
    let path = file(config_dir, library, name)?;
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(PromptError::NotFound(name.to_owned(), library.dir_name()))
        }
        Err(e) => Err(PromptError::Io(format!("cannot read {}/{name}.md: {e}", library.dir_name()))),
    }
}

/// Writes the prompt atomically (a temp file renamed over it), private to the user.
pub(crate) fn save(config_dir: &Path, library: Library, name: &str, content: &str) -> Result<u64, PromptError> {
    let path = file(config_dir, library, name)?;
    if content.trim().is_empty() {
        return Err(PromptError::Empty);
    }
    if content.len() > PROMPT_MAX_BYTES {
        return Err(PromptError::TooLarge(content.len()));
    }
    if !path.exists() && list(config_dir, library)?.len() >= PROMPT_LIBRARY_MAX {
        return Err(PromptError::Full(library.dir_name()));
    }
    let dir = library.dir(config_dir);
    let io = |e: std::io::Error| PromptError::Io(format!("cannot write {}/{name}.md: {e}", library.dir_name()));
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(io)?;
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut out = OpenOptions::new().create(true).truncate(true).write(true).mode(0o600).open(&tmp)?;
        out.write_all(content.as_bytes())?;
        out.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(io)?;
    Ok(content.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_the_library_are_refused() {
        for bad in ["", "../x", "a/b", "..", ".hidden", "a\0b", "a\\b", "x..y", "/etc/passwd", &"a".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["review", "commit-msg", "v1.2_draft", &"a".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good:?} refused");
        }
    }

    #[test]
    fn a_saved_prompt_lists_and_loads_and_bad_input_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(list(dir.path(), Library::Prompts).unwrap(), []);
        assert_eq!(save(dir.path(), Library::Prompts, "fix", "Fix the bug.").unwrap(), 12);
        assert_eq!(load(dir.path(), Library::Prompts, "fix").unwrap(), "Fix the bug.");
        assert_eq!(list(dir.path(), Library::Prompts).unwrap(), [PromptInfo { name: "fix".into(), bytes: 12 }]);
        assert_eq!(list(dir.path(), Library::AiPrompts).unwrap(), [], "the libraries are apart");
        let big = "x".repeat(PROMPT_MAX_BYTES + 1);
        assert_eq!(save(dir.path(), Library::Prompts, "fix", &big), Err(PromptError::TooLarge(big.len())));
        assert_eq!(save(dir.path(), Library::Prompts, "fix", " \n"), Err(PromptError::Empty));
        assert_eq!(load(dir.path(), Library::Prompts, "fix").unwrap(), "Fix the bug.");
        assert!(matches!(load(dir.path(), Library::Prompts, "nope"), Err(PromptError::NotFound(..))));
    }
}
