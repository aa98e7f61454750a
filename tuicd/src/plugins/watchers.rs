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

use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
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

/// Every frontend's set, and all their patterns in one `RegexSet`: a line is matched against all
/// of them in one pass, and only the patterns that match run again for their groups.
#[derive(Default)]
struct Compiled {
    sets: Vec<FrontendSet>,
    all: Option<RegexSet>,
    /// `all`'s pattern `i` is `sets[owner[i].0].watchers[owner[i].1]`.
    owner: Vec<(usize, usize)>,
}

impl Compiled {
    fn new(sets: Vec<FrontendSet>) -> Self {
        let owner: Vec<(usize, usize)> =
            sets.iter().enumerate().flat_map(|(s, set)| (0..set.watchers.len()).map(move |w| (s, w))).collect();
        let patterns = owner.iter().map(|&(s, w)| sets[s].watchers[w].regex.as_str());
        // Each pattern compiled alone within the limit; together they may take that much each.
        let limit = WATCHER_REGEX_SIZE_LIMIT.saturating_mul(owner.len().max(1));
        let all = RegexSetBuilder::new(patterns).size_limit(limit).dfa_size_limit(limit).build().ok();
        Self { sets, all, owner }
    }

    /// The (set, watcher) pairs whose pattern matches `line`, in set then watcher order.
    fn matching(&self, line: &str) -> Vec<(usize, usize)> {
        match &self.all {
            Some(all) => all.matches(line).into_iter().map(|i| self.owner[i]).collect(),
            // The combined set did not compile within its limit: each pattern on its own.
            None => {
                self.owner.iter().copied().filter(|&(s, w)| self.sets[s].watchers[w].regex.is_match(line)).collect()
            }
        }
    }
}

/// Readers take a snapshot (`Arc`) under the read lock, held for the clone.
pub(crate) struct OutputWatchers {
    /// Whether any set holds a pattern: the one check the output path makes.
    active: AtomicBool,
    sets: RwLock<Arc<Compiled>>,
    events: Arc<EventBus>,
}

impl std::fmt::Debug for OutputWatchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputWatchers").field("active", &self.active()).finish_non_exhaustive()
    }
}

impl OutputWatchers {
    pub(crate) fn new(events: Arc<EventBus>) -> Self {
        Self { active: AtomicBool::new(false), sets: RwLock::new(Arc::new(Compiled::default())), events }
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
        let current = sets.sets.iter().find(|s| s.client_id == set.client_id);
        if let Some(current) = current
            && set.seq <= current.seq
        {
            return Err(SetError::Stale(format!(
                "seq {} is not newer than the applied seq {} of client_id '{}'",
                set.seq, current.seq, set.client_id
            )));
        }
        if current.is_none() && !watchers.is_empty() && sets.sets.len() >= WATCHER_FRONTENDS_MAX {
            return invalid(format!(
                "client_id '{}': {WATCHER_FRONTENDS_MAX} frontends already hold a set (an empty patterns list releases one)",
                set.client_id
            ));
        }
        // A compiled `Regex` clones cheaply (its program is shared).
        let mut next: Vec<FrontendSet> = sets.sets.iter().filter(|s| s.client_id != set.client_id).cloned().collect();
        if !watchers.is_empty() {
            next.push(FrontendSet { client_id: set.client_id, seq: set.seq, watchers });
        }
        self.active.store(!next.is_empty(), Ordering::Relaxed);
        *sets = Arc::new(Compiled::new(next));
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
        let compiled = self.sets.read_locked().clone();
        let mut sent = 0;
        for line in lines {
            for (s, w) in compiled.matching(line) {
                let (set, watcher) = (&compiled.sets[s], &compiled.sets[s].watchers[w]);
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

    #[test]
    fn every_frontends_matching_patterns_fire_with_their_groups_and_the_rest_stay_quiet() {
        let events = Arc::new(EventBus::new());
        let watchers = Arc::new(OutputWatchers::new(events.clone()));
        // Many patterns, two frontends: the whole set is matched in one pass.
        let mut gui: Vec<(String, String)> =
            (0..WATCHER_PATTERNS_MAX - 1).map(|i| (format!("p{i}"), format!("never-{i}-here"))).collect();
        gui.push(("build".into(), r"error\[(E\d+)\]".into()));
        let gui: Vec<(&str, &str)> = gui.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        watchers.replace(set("gui", 1, &gui)).unwrap();
        watchers.replace(set("phone", 1, &[("any-error", "error"), ("done", r"^done (\d+)$")])).unwrap();
        let tap = watchers.tap("s1");
        tap.offer(b"compiling\nerror[E0308]: mismatched types\ndone 3\n");
        let (_, seen) = events.since(0);
        let seen: Vec<serde_json::Value> = seen.iter().map(|e| serde_json::from_str(&e.data).unwrap()).collect();
        let fired: Vec<(&str, &str, serde_json::Value)> = seen
            .iter()
            .map(|m| (m["client_id"].as_str().unwrap(), m["id"].as_str().unwrap(), m["groups"].clone()))
            .collect();
        assert_eq!(
            fired,
            [
                ("gui", "build", serde_json::json!(["E0308"])),
                ("phone", "any-error", serde_json::json!([])),
                ("phone", "done", serde_json::json!(["3"])),
            ]
        );
    }
}
