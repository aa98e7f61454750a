//! The repository context a headless task reads, gathered through git and `gh`: a pull request's
//! diff (`gh pr diff`), and a local summary for the improvements scan (the tracked files, the
//! recent commits, the README). Each piece is bounded to [`CONTEXT_MAX_BYTES`].

use std::path::Path;

use super::CONTEXT_MAX_BYTES;
use crate::child::{self, SpawnError, Spec};
use crate::github::{GH_ENV, GhError};
use crate::limits::{GH_CALL_TIMEOUT, GH_OUTPUT_MAX_BYTES};
use crate::repos::{RepoError, git};

/// Text cut to at most `max` bytes on a character boundary, and whether it was cut.
pub(crate) fn bounded(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_owned(), true)
}

/// A pull request's unified diff, as `gh pr diff N` prints it.
#[derive(Debug)]
pub(crate) struct PrDiff {
    pub text: String,
    /// The diff passed [`CONTEXT_MAX_BYTES`]: `text` is its head.
    pub truncated: bool,
    /// The files it changes (their new paths; the old one for a deletion).
    pub files: Vec<String>,
}

/// `gh pr diff <number> --color never` in `cwd`.
pub(crate) async fn pr_diff(cwd: &Path, number: u64) -> Result<PrDiff, GhError> {
    let number = number.to_string();
    let args = ["pr", "diff", number.as_str(), "--color", "never"];
    let failed = |message: String| GhError::Failed { command: "pr diff".into(), message };
    let spec = Spec {
        program: "gh",
        args: &args,
        cwd,
        env: GH_ENV,
        stdin: None,
        timeout: GH_CALL_TIMEOUT,
        keep: GH_OUTPUT_MAX_BYTES,
        merge_output: false,
        stop_at_cap: true,
    };
    let done = child::run(spec).await.map_err(|e| match e {
        SpawnError::NotFound { .. } => GhError::Missing,
        other => failed(other.to_string()),
    })?;
    if done.timed_out {
        return Err(failed(format!("did not finish within {} s and was stopped", GH_CALL_TIMEOUT.as_secs())));
    }
    let stderr = done.stderr.text();
    let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
    if done.code == Some(4) || stderr.contains("gh auth login") {
        return Err(GhError::NotLoggedIn(first));
    }
    // Past gh's own bound the pipe was closed: what was kept is the diff's head, which is all a
    // prompt takes anyway.
    if done.code != Some(0) && done.stdout.dropped == 0 {
        let message = if first.is_empty() { format!("exit code {:?}", done.code) } else { first };
        return Err(failed(message));
    }
    let whole = done.stdout.text();
    let files = changed_files(&whole);
    let (text, cut) = bounded(&whole, CONTEXT_MAX_BYTES);
    Ok(PrDiff { text, truncated: cut || done.stdout.dropped > 0, files })
}

/// The paths a unified diff changes, in order, each once.
pub(crate) fn changed_files(diff: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    let mut old = None;
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("--- a/") {
            old = Some(path.trim_end().to_owned());
        } else if let Some(path) = line.strip_prefix("+++ ") {
            let path = match path.trim_end() {
                "/dev/null" => old.take(),
                p => p.strip_prefix("b/").map(str::to_owned),
            };
            if let Some(path) = path.filter(|p| !files.contains(p)) {
                files.push(path);
            }
        } else if line.starts_with("diff --git ") {
            old = None;
        }
    }
    files
}

/// What the improvements scan reads of a repository.
#[derive(Debug)]
pub(crate) struct LocalContext {
    pub files: Vec<String>,
    pub files_truncated: bool,
    pub recent_commits: String,
    pub readme: Option<(String, String)>,
}

/// Most tracked paths listed to the scan.
const SCAN_FILES_MAX: usize = 2000;
/// Most bytes of the README shown to the scan.
const SCAN_README_MAX_BYTES: usize = 16 * 1024;

/// The tracked files, the last 20 commits and the README of the repository at `dir`.
pub(crate) async fn local(dir: &Path) -> Result<LocalContext, RepoError> {
    let listed = git::read(dir, &["ls-files", "-z"]).await?;
    let all: Vec<String> = listed
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let files_truncated = listed.truncated || all.len() > SCAN_FILES_MAX;
    let files: Vec<String> = all.into_iter().take(SCAN_FILES_MAX).collect();
    let log = git::probe(dir, &["log", "-20", "--format=%h %s", "--no-color"]).await?;
    // A repository without a commit has no log: not an error here.
    let recent_commits = if log.ok() { String::from_utf8_lossy(&log.stdout).into_owned() } else { String::new() };
    let readme_name = files.iter().find(|f| !f.contains('/') && f.to_ascii_lowercase().starts_with("readme")).cloned();
    let readme = readme_name.and_then(|name| {
        let bytes = read_head(&dir.join(&name), SCAN_README_MAX_BYTES)?;
        Some((name, String::from_utf8_lossy(&bytes).into_owned()))
    });
    Ok(LocalContext { files, files_truncated, recent_commits, readme })
}

/// The first `max` bytes of a regular file inside the work tree (a symlink is not followed).
fn read_head(path: &Path, max: usize) -> Option<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path).ok()?.take(max as u64).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_names_its_files_and_a_long_text_is_cut_on_a_character() {
        let diff = "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-a\n+b\n\
                    diff --git a/old.txt b/old.txt\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n\
                    diff --git a/new.rs b/new.rs\n--- /dev/null\n+++ b/new.rs\n@@ -0,0 +1 @@\n+y\n";
        assert_eq!(changed_files(diff), ["app.py", "old.txt", "new.rs"]);
        assert_eq!(bounded("héllo", 2), ("h".to_owned(), true));
        assert_eq!(bounded("abc", 3), ("abc".to_owned(), false));
    }
}
