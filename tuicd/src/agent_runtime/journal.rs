//! The progress journal: one append-only JSON-lines file, `<config dir>/progress.jsonl`, shared by
//! every agent and surviving restarts. Each line is one [`Entry`]. Reading skips (with a warning)
//! lines that do not parse or exceed [`PROGRESS_LINE_MAX_BYTES`], so one torn write cannot hide
//! the rest. Writes are one `write` of one whole line, under the state's mutex.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::limits::{PROGRESS_LINE_MAX_BYTES, PROGRESS_LIST_MAX};

pub(crate) const FILE_NAME: &str = "progress.jsonl";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub ts: u64,
    /// The repository root (or working directory) of the reporting session.
    pub project: String,
    /// The reporting agent's name.
    pub agent: String,
    /// `done`, `blocked`, or `intent` (written only by tuicd from an observed marker).
    #[serde(rename = "type")]
    pub kind: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// What `progress_list` keeps.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    pub project: Option<String>,
    pub agent: Option<String>,
    /// Entries at or after this many ms since the epoch.
    pub since: Option<u64>,
}

#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl Journal {
    pub(crate) fn new(config_dir: &Path) -> Self {
        Self { path: config_dir.join(FILE_NAME) }
    }

    /// Appends one entry as one line.
    pub(crate) fn append(&self, entry: &Entry) -> std::io::Result<()> {
        let mut line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
        line.push('\n');
        if line.len() > PROGRESS_LINE_MAX_BYTES {
            return Err(std::io::Error::other(format!("entry over {PROGRESS_LINE_MAX_BYTES} bytes")));
        }
        // Private like every file in the config dir: agents' notes can name what they work on.
        let mut file = OpenOptions::new().create(true).append(true).mode(0o600).open(&self.path)?;
        file.write_all(line.as_bytes())?;
        // Progress is rare and meant to outlive crashes: on disk before the call answers.
        file.sync_data()
    }

    /// Matching entries, oldest first, at most [`PROGRESS_LIST_MAX`] (the newest ones).
    pub(crate) fn list(&self, filter: &Filter) -> Vec<Entry> {
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot read the progress journal");
                return Vec::new();
            }
        };
        let mut entries = std::collections::VecDeque::new();
        for (number, line) in BufReader::new(file).split(b'\n').enumerate() {
            let Ok(line) = line else { break };
            if line.is_empty() {
                continue;
            }
            let parsed = (line.len() <= PROGRESS_LINE_MAX_BYTES).then(|| serde_json::from_slice::<Entry>(&line).ok());
            let Some(Some(entry)) = parsed else {
                tracing::warn!(path = %self.path.display(), line = number + 1, "skipping a corrupt progress journal line");
                continue;
            };
            let keep = filter.project.as_ref().is_none_or(|p| *p == entry.project)
                && filter.agent.as_ref().is_none_or(|a| *a == entry.agent)
                && filter.since.is_none_or(|s| entry.ts >= s);
            if keep {
                if entries.len() == PROGRESS_LIST_MAX {
                    entries.pop_front();
                }
                entries.push_back(entry);
            }
        }
        entries.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(agent: &str, kind: &str, ts: u64) -> Entry {
        Entry {
            id: format!("{agent}-{ts}"),
            ts,
            project: "/repo".into(),
            agent: agent.into(),
            kind: kind.into(),
            text: "t".into(),
            step: None,
            session_id: None,
        }
    }

    #[test]
    fn entries_survive_reopening_and_corrupt_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path());
        journal.append(&entry("a", "done", 10)).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(FILE_NAME))
            .unwrap()
            .write_all(b"{not json\n")
            .unwrap();
        let huge = format!("{}\n", "x".repeat(PROGRESS_LINE_MAX_BYTES + 1));
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(FILE_NAME))
            .unwrap()
            .write_all(huge.as_bytes())
            .unwrap();
        journal.append(&entry("b", "blocked", 20)).unwrap();
        let reopened = Journal::new(dir.path());
        let all = reopened.list(&Filter::default());
        assert_eq!(all.iter().map(|e| e.agent.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        let b = reopened.list(&Filter { agent: Some("b".into()), ..Filter::default() });
        assert_eq!(b.len(), 1);
        assert_eq!(reopened.list(&Filter { since: Some(15), ..Filter::default() }).len(), 1);
        assert!(reopened.list(&Filter { project: Some("/other".into()), ..Filter::default() }).is_empty());
    }
}
