//! `list_files` and `search_files`: walk the session's repository with ripgrep's walker (`ignore`),
//! honouring .gitignore, .ignore and git's exclude files, never entering `.git` nor following a
//! symlink (so a walk cannot leave the repository). Hidden files are included: `.env` and
//! `.github/` are what an agent often needs, and every read is redacted.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::target;
use super::sandbox::Sandbox;
use crate::limits::{
    AI_TERMINAL_CONTEXT_LINES_MAX, AI_TERMINAL_FILE_MAX_BYTES, AI_TERMINAL_LIST_MAX, AI_TERMINAL_REGEX_SIZE,
    AI_TERMINAL_SEARCH_BUDGET, AI_TERMINAL_SEARCH_LINE_MAX, AI_TERMINAL_SEARCH_MAX_MATCHES,
};
use crate::mcp::tools::{CallContext, ToolError, run_blocking};
use crate::safety::redact::redact;

/// The walker every file tool uses over `dir`.
fn walker(dir: &Path) -> WalkBuilder {
    let mut walk = WalkBuilder::new(dir);
    walk.hidden(false)
        .follow_links(false)
        // The session's repository may be a plain directory; its .gitignore still says what to skip.
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git");
    walk
}

fn glob(field: &str, source: &str) -> Result<GlobMatcher, ToolError> {
    if source.trim().is_empty() {
        return Err(ToolError::new(format!("{field}: must not be empty")));
    }
    GlobBuilder::new(source)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ToolError::new(format!("{field}: not a valid glob: {e}")))
}

/// The directory (or file) `path` names, default the session's cwd.
fn start(sandbox: &Sandbox, path: Option<&str>) -> Result<PathBuf, ToolError> {
    match path {
        Some(raw) => sandbox.existing("path", raw),
        None => Ok(sandbox.cwd().to_path_buf()),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListFiles {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
    /// A glob over paths relative to path: *.rs (this directory), **/*.rs (any depth), src/**.
    pattern: String,
    /// A directory in the repository (default the session's cwd).
    path: Option<String>,
}

#[derive(Debug, Serialize)]
pub(super) struct Listed {
    /// The directory listed; files are relative to it.
    dir: String,
    files: Vec<String>,
    truncated: bool,
}

pub(super) async fn list_files(ctx: &CallContext, p: ListFiles) -> Result<Listed, ToolError> {
    let matcher = glob("pattern", &p.pattern)?;
    let sandbox = Sandbox::of(&*target(ctx, &p.session_id)?)?;
    run_blocking("ai_terminal_list_files", move || {
        let dir = start(&sandbox, p.path.as_deref())?;
        if !dir.is_dir() {
            return Err(ToolError::new(format!("path: {} is not a directory", sandbox.show(&dir))));
        }
        let mut files = Vec::new();
        let mut truncated = false;
        for entry in walker(&dir).sort_by_file_name(|a, b| a.cmp(b)).build().flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            // A name is redacted like text (a token can be a file name), and the glob sees only
            // the redacted name, so it cannot test a secret in a name one character at a time.
            let relative = entry.path().strip_prefix(&dir).unwrap_or(entry.path()).to_string_lossy();
            let shown = redact(&relative);
            if !matcher.is_match(Path::new(shown.as_ref())) {
                continue;
            }
            if files.len() == AI_TERMINAL_LIST_MAX {
                truncated = true;
                break;
            }
            files.push(shown.into_owned());
        }
        Ok(Listed { dir: redact(&dir.display().to_string()).into_owned(), files, truncated })
    })
    .await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchFiles {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
    /// A regex, matched line by line.
    pattern: String,
    /// A directory or file in the repository (default the session's cwd).
    path: Option<String>,
    /// Only files matching this glob (*.rs matches names; one with / matches the relative path).
    glob: Option<String>,
    /// Lines before and after each match (default 0, at most 10).
    context_lines: Option<usize>,
}

#[derive(Debug, Serialize)]
pub(super) struct Found {
    matches: Vec<Match>,
    /// Whether the walk stopped early: at the match limit, or at the time budget.
    truncated: bool,
    files_searched: usize,
}

#[derive(Debug, Serialize)]
struct Match {
    /// Relative to the repository root.
    file: String,
    /// 1-based, counting the redacted text.
    line: usize,
    text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    before: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    after: Vec<String>,
}

pub(super) async fn search_files(ctx: &CallContext, p: SearchFiles) -> Result<Found, ToolError> {
    if p.pattern.is_empty() {
        return Err(ToolError::new("pattern: must not be empty"));
    }
    // Multi-line so a file-wide test finds what a line-by-line one does (`^`, `$` at each line).
    let regex = RegexBuilder::new(&p.pattern)
        .multi_line(true)
        .crlf(true)
        .size_limit(AI_TERMINAL_REGEX_SIZE)
        .build()
        .map_err(|e| ToolError::new(format!("pattern: not a valid regular expression: {e}")))?;
    let filter = p.glob.as_deref().map(|g| glob("glob", g)).transpose()?;
    let name_only = p.glob.as_deref().is_some_and(|g| !g.contains('/'));
    let context = p.context_lines.unwrap_or(0);
    if context > AI_TERMINAL_CONTEXT_LINES_MAX {
        return Err(ToolError::new(format!(
            "context_lines: {context} is over the maximum of {AI_TERMINAL_CONTEXT_LINES_MAX}"
        )));
    }
    let sandbox = Sandbox::of(&*target(ctx, &p.session_id)?)?;
    run_blocking("ai_terminal_search_files", move || {
        let from = start(&sandbox, p.path.as_deref())?;
        let search = Search {
            regex,
            context,
            root: sandbox.root.clone(),
            matches: Mutex::default(),
            files: AtomicUsize::default(),
            stop: AtomicBool::default(),
        };
        let deadline = Instant::now() + AI_TERMINAL_SEARCH_BUDGET;
        walker(&from).build_parallel().run(|| {
            Box::new(|entry| {
                if search.stop.load(Ordering::Relaxed) || Instant::now() > deadline {
                    search.stop.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else { return WalkState::Continue };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                if let Some(filter) = &filter {
                    // Matched against the redacted name, as list_files does.
                    let relative = entry.path().strip_prefix(&from).unwrap_or(entry.path());
                    let subject = if name_only { Path::new(entry.file_name()) } else { relative };
                    if !filter.is_match(Path::new(redact(&subject.to_string_lossy()).as_ref())) {
                        return WalkState::Continue;
                    }
                }
                search.file(entry.path());
                WalkState::Continue
            })
        });
        let mut matches = search.matches.into_inner().unwrap_or_else(|e| e.into_inner());
        matches.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        let truncated = search.stop.load(Ordering::Relaxed) || matches.len() > AI_TERMINAL_SEARCH_MAX_MATCHES;
        matches.truncate(AI_TERMINAL_SEARCH_MAX_MATCHES);
        Ok(Found { matches, truncated, files_searched: search.files.load(Ordering::Relaxed) })
    })
    .await
}

struct Search {
    regex: Regex,
    context: usize,
    root: PathBuf,
    matches: Mutex<Vec<Match>>,
    files: AtomicUsize,
    stop: AtomicBool,
}

impl Search {
    fn file(&self, path: &Path) {
        let regex = &self.regex;
        let Ok(meta) = std::fs::metadata(path) else { return };
        if meta.len() > AI_TERMINAL_FILE_MAX_BYTES {
            return;
        }
        let Ok(bytes) = std::fs::read(path) else { return };
        self.files.fetch_add(1, Ordering::Relaxed);
        // Binary files are skipped, as ripgrep does by default.
        if bytes.contains(&0) {
            return;
        }
        let Ok(text) = std::str::from_utf8(&bytes) else { return };
        // Redacted whole before anything is matched, and only the redacted text is: whether a
        // file matches, how often, and where depend on nothing a redaction hid, so a pattern
        // cannot test a secret one character at a time (`DB_PASSWORD=(h|\[REDACTED)`). A context
        // line never shows part of a secret either.
        let text = redact(text);
        if !regex.is_match(&text) {
            return;
        }
        let lines: Vec<&str> = text.lines().collect();
        let file = redact(&path.strip_prefix(&self.root).unwrap_or(path).to_string_lossy()).into_owned();
        let mut found = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if !regex.is_match(line) {
                continue;
            }
            let cut = |l: &&str| cut(l);
            found.push(Match {
                file: file.clone(),
                line: i + 1,
                text: cut(line),
                before: lines[i.saturating_sub(self.context)..i].iter().map(cut).collect(),
                after: lines[i + 1..(i + 1 + self.context).min(lines.len())].iter().map(cut).collect(),
            });
            if found.len() > AI_TERMINAL_SEARCH_MAX_MATCHES {
                break;
            }
        }
        let mut all = self.matches.lock().unwrap_or_else(|e| e.into_inner());
        all.extend(found);
        if all.len() > AI_TERMINAL_SEARCH_MAX_MATCHES {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// A line as a match shows it: at most [`AI_TERMINAL_SEARCH_LINE_MAX`] bytes.
fn cut(line: &str) -> String {
    if line.len() <= AI_TERMINAL_SEARCH_LINE_MAX {
        return line.to_owned();
    }
    let mut end = AI_TERMINAL_SEARCH_LINE_MAX;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}
