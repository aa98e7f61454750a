//! Output watchers (`POST /api/plugins/output-watchers`): each frontend (`client_id`) owns one set
//! of regex patterns for all its plugins; every session's output is matched against every set,
//! line by line, and each match goes out on `/events` as `plugin-output-match`.
//!
//! The matching runs on each session's screen follower task (the `on_output` hook of its
//! attachment), never on the PTY reader thread; with no set registered it costs one atomic load
//! per batch. Bounded: [`WATCHER_FRONTENDS_MAX`] sets, [`WATCHER_PATTERNS_MAX`] patterns per set,
//! [`WATCHER_PATTERN_MAX_BYTES`] per pattern, [`WATCHER_REGEX_SIZE_LIMIT`] compiled, and
//! [`WATCHER_MATCHES_PER_BATCH`] events per output batch.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

use super::lines::LineBuffer;
use crate::events::EventBus;
use crate::limits::{
    WATCHER_FRONTENDS_MAX, WATCHER_MATCHES_PER_BATCH, WATCHER_PATTERN_MAX_BYTES, WATCHER_PATTERNS_MAX,
    WATCHER_REGEX_SIZE_LIMIT,
};
use crate::lock::{Recover, RecoverRw};

/// `/events` kind: `{client_id, id, session_id, line, groups}`, one per matching line and pattern.
pub(crate) const PLUGIN_OUTPUT_MATCH: &str = proto::events::PLUGIN_OUTPUT_MATCH;

/// Longest `client_id` and pattern `id`.
const NAME_MAX_BYTES: usize = 128;

/// `POST /api/plugins/output-watchers`: the frontend's whole set, replacing the one before.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WatcherSet {
    pub client_id: String,
    /// Numbers the frontend's sets: a set not newer than the one applied is stale.
    pub seq: u64,
    pub patterns: Vec<PatternSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PatternSpec {
    pub id: String,
    pub pattern: String,
}

/// The answer: which ids now match in the daemon, and which were refused and why (the frontend
/// keeps matching those itself).
#[derive(Debug, Serialize)]
pub(crate) struct Applied {
    pub applied: Vec<String>,
    pub rejected: Vec<Rejected>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Rejected {
    pub id: String,
    pub error: String,
}

/// Why a whole set was refused (nothing changed).
#[derive(Debug)]
pub(crate) enum SetError {
    Invalid(String),
    Stale(String),
}

#[derive(Clone)]
struct Watcher {
    id: String,
    regex: Regex,
}

#[derive(Clone)]
struct FrontendSet {
    client_id: String,
    seq: u64,
    watchers: Vec<Watcher>,
}

#[derive(Serialize)]
struct Match<'a> {
    client_id: &'a str,
    id: &'a str,
    session_id: &'a str,
    line: &'a str,
    groups: Vec<&'a str>,
}

/// Every frontend's set. Readers take a snapshot (`Arc`) under the read lock, held for the clone.
pub(crate) struct OutputWatchers {
    /// Whether any set holds a pattern: the one check the output path makes.
    active: AtomicBool,
    sets: RwLock<Arc<Vec<FrontendSet>>>,
    events: Arc<EventBus>,
}

impl std::fmt::Debug for OutputWatchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputWatchers").field("active", &self.active()).finish_non_exhaustive()
    }
}

impl OutputWatchers {
    pub(crate) fn new(events: Arc<EventBus>) -> Self {
        Self { active: AtomicBool::new(false), sets: RwLock::new(Arc::new(Vec::new())), events }
    }

    pub(crate) fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Replaces `set.client_id`'s set: checks the whole request first (a refusal changes nothing),
    /// compiles each pattern (a bad one is listed in `rejected` by its id), then swaps the set in.
    /// An empty `patterns` removes the frontend's set.
    pub(crate) fn replace(&self, set: WatcherSet) -> Result<Applied, SetError> {
        let invalid = |m: String| Err(SetError::Invalid(m));
        if set.client_id.trim().is_empty() || set.client_id.len() > NAME_MAX_BYTES {
            return invalid(format!("client_id: 1 to {NAME_MAX_BYTES} bytes, not blank"));
        }
        if set.patterns.len() > WATCHER_PATTERNS_MAX {
            return invalid(format!(
                "patterns: {} given, at most {WATCHER_PATTERNS_MAX} per frontend",
                set.patterns.len()
            ));
        }
        let mut ids = HashSet::new();
        for spec in &set.patterns {
            if spec.id.trim().is_empty() || spec.id.len() > NAME_MAX_BYTES {
                return invalid(format!("patterns: id '{}' must be 1 to {NAME_MAX_BYTES} bytes, not blank", spec.id));
            }
            if !ids.insert(spec.id.as_str()) {
                return invalid(format!("patterns: id '{}' is given twice", spec.id));
            }
        }
        let (mut watchers, mut applied, mut rejected) = (Vec::new(), Vec::new(), Vec::new());
        for spec in set.patterns {
            match compile(&spec.pattern) {
                Ok(regex) => {
                    applied.push(spec.id.clone());
                    watchers.push(Watcher { id: spec.id, regex });
                }
                Err(error) => rejected.push(Rejected { error: format!("pattern '{}': {error}", spec.id), id: spec.id }),
            }
        }
        let mut sets = self.sets.write_locked();
        let current = sets.iter().find(|s| s.client_id == set.client_id);
        if let Some(current) = current
            && set.seq <= current.seq
        {
            return Err(SetError::Stale(format!(
                "seq {} is not newer than the applied seq {} of client_id '{}'",
                set.seq, current.seq, set.client_id
            )));
        }
        if current.is_none() && !watchers.is_empty() && sets.len() >= WATCHER_FRONTENDS_MAX {
            return invalid(format!(
                "client_id '{}': {WATCHER_FRONTENDS_MAX} frontends already hold a set (an empty patterns list releases one)",
                set.client_id
            ));
        }
        // A compiled `Regex` clones cheaply (its program is shared).
        let mut next: Vec<FrontendSet> = sets.iter().filter(|s| s.client_id != set.client_id).cloned().collect();
        if !watchers.is_empty() {
            next.push(FrontendSet { client_id: set.client_id, seq: set.seq, watchers });
        }
        self.active.store(!next.is_empty(), Ordering::Relaxed);
        *sets = Arc::new(next);
        Ok(Applied { applied, rejected })
    }

    /// A session's tap on the watchers.
    pub(crate) fn tap(self: &Arc<Self>, session_id: &str) -> SessionTap {
        SessionTap {
            watchers: self.clone(),
            session_id: session_id.to_owned(),
            lines: Mutex::new(LineBuffer::default()),
        }
    }

    /// Matches `lines` of `session_id` against every set; publishes at most
    /// [`WATCHER_MATCHES_PER_BATCH`] matches.
    fn scan(&self, session_id: &str, lines: &[String]) {
        let sets = self.sets.read_locked().clone();
        let mut sent = 0;
        for line in lines {
            for set in sets.iter() {
                for watcher in &set.watchers {
                    let Some(captures) = watcher.regex.captures(line) else { continue };
                    if sent == WATCHER_MATCHES_PER_BATCH {
                        return;
                    }
                    sent += 1;
                    let groups = captures.iter().skip(1).map(|g| g.map_or("", |m| m.as_str())).collect();
                    let found =
                        Match { client_id: &set.client_id, id: &watcher.id, session_id, line: line.as_str(), groups };
                    self.events.publish(PLUGIN_OUTPUT_MATCH, &found);
                }
            }
        }
    }
}

/// A pattern within the bounds, compiled with its size limited.
fn compile(pattern: &str) -> Result<Regex, String> {
    if pattern.is_empty() {
        return Err("is empty".into());
    }
    if pattern.len() > WATCHER_PATTERN_MAX_BYTES {
        return Err(format!("is longer than {WATCHER_PATTERN_MAX_BYTES} bytes"));
    }
    RegexBuilder::new(pattern)
        .size_limit(WATCHER_REGEX_SIZE_LIMIT)
        .dfa_size_limit(WATCHER_REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => format!("compiles larger than the {limit} byte limit"),
            e => format!("is not a valid regex: {}", e.to_string().lines().last().unwrap_or_default().trim()),
        })
}

/// One session's view of the watchers: its unfinished line, matched once it ends.
pub(crate) struct SessionTap {
    watchers: Arc<OutputWatchers>,
    session_id: String,
    lines: Mutex<LineBuffer>,
}

impl SessionTap {
    /// One output batch (the session's own task calls this). Nothing but an atomic load while no
    /// frontend has a set.
    pub(crate) fn offer(&self, bytes: &[u8]) {
        if !self.watchers.active() {
            return;
        }
        let lines = self.lines.locked().feed(bytes);
        if !lines.is_empty() {
            self.watchers.scan(&self.session_id, &lines);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(client: &str, seq: u64, patterns: &[(&str, &str)]) -> WatcherSet {
        let patterns = patterns.iter().map(|(id, p)| PatternSpec { id: (*id).into(), pattern: (*p).into() });
        WatcherSet { client_id: client.into(), seq, patterns: patterns.collect() }
    }

    #[test]
    fn a_bad_pattern_is_rejected_by_id_and_the_rest_apply() {
        let watchers = OutputWatchers::new(Arc::new(EventBus::new()));
        assert!(!watchers.active());
        let answer = watchers.replace(set("gui", 1, &[("ok", r"error\[E\d+\]"), ("bad", "(unclosed")])).unwrap();
        assert_eq!(answer.applied, ["ok"]);
        assert_eq!(answer.rejected[0].id, "bad");
        assert!(answer.rejected[0].error.starts_with("pattern 'bad': is not a valid regex"), "{answer:?}");
        assert!(watchers.active());
        let huge = watchers.replace(set("gui", 2, &[("huge", r"\w{1000}\w{1000}")])).unwrap();
        assert_eq!(huge.rejected[0].id, "huge");
        assert!(huge.rejected[0].error.contains("compiles larger than"), "{huge:?}");
        assert!(!watchers.active(), "a set with nothing applied holds nothing");
    }

    #[test]
    fn a_stale_or_malformed_set_changes_nothing() {
        let watchers = OutputWatchers::new(Arc::new(EventBus::new()));
        watchers.replace(set("gui", 5, &[("a", "a")])).unwrap();
        assert!(matches!(watchers.replace(set("gui", 5, &[])), Err(SetError::Stale(_))));
        assert!(matches!(watchers.replace(set("gui", 6, &[("a", "x"), ("a", "y")])), Err(SetError::Invalid(_))));
        assert!(matches!(watchers.replace(set(" ", 1, &[])), Err(SetError::Invalid(_))));
        let many: Vec<(String, String)> = (0..=WATCHER_PATTERNS_MAX).map(|i| (i.to_string(), "x".into())).collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert!(matches!(watchers.replace(set("gui", 7, &many)), Err(SetError::Invalid(_))));
        assert!(watchers.active(), "the applied set is still there");
        watchers.replace(set("gui", 8, &[])).unwrap();
        assert!(!watchers.active(), "an empty set releases the frontend");
    }
}
