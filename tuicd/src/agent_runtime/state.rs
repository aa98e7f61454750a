//! [`AgentsState`]: the daemon-wide agent state, one field of [`crate::state::Shared`]: task
//! handles, what each spawn asked for, the progress journal and the counters behind
//! `agent action=metrics`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use serde::Serialize;

use super::journal::Journal;
use super::tasks::TaskStore;
use crate::lock::Recover;

#[derive(Debug, Default)]
pub(crate) struct AgentsState {
    pub tasks: TaskStore,
    /// Spawned sessions by PTY id. Bounded by the spawns still live or tombstoned: an entry goes
    /// when its session is no longer resolvable (swept on every spawn).
    spawns: Mutex<HashMap<String, SpawnInfo>>,
    /// Opened on first use under the config dir.
    journal: Mutex<Option<Journal>>,
    pub counters: AgentCounters,
    /// The sessions an `ai_terminal_drive_agent` loop is driving now.
    pub loops: std::sync::Arc<super::loops::DriveLoops>,
    /// Where the sessions' lifecycle edges go, installed once by the layer that consumes them.
    pub edges: std::sync::Arc<std::sync::OnceLock<super::EdgeSink>>,
}

/// What one `agent action=spawn` set up.
#[derive(Debug, Clone)]
pub(crate) struct SpawnInfo {
    pub name: String,
    /// `false` answers `progress_tracking_disabled` to this agent's progress calls.
    pub progress_tracking: bool,
    /// `argv`, `deferred`, `delivered` (a deferred prompt went in) or `undelivered` (the watchdog fired).
    pub prompt_delivery: &'static str,
    /// Launched with Claude Code's channels flag naming tuicd's server: its MCP client takes
    /// `notifications/claude/channel` pushes although it never declares so at initialize.
    pub channels: bool,
}

#[derive(Debug, Default)]
pub(crate) struct AgentCounters {
    pub spawned: AtomicU64,
    pub spawn_failures: AtomicU64,
    pub submits: AtomicU64,
    pub submits_refused: AtomicU64,
    pub submits_acknowledged: AtomicU64,
    pub deferred_delivered: AtomicU64,
    pub deferred_undelivered: AtomicU64,
    pub progress_recorded: AtomicU64,
}

/// `agent action=metrics`.
#[derive(Debug, Serialize)]
pub(crate) struct AgentMetrics {
    pub spawned: u64,
    pub spawn_failures: u64,
    pub submits: u64,
    pub submits_refused: u64,
    pub submits_acknowledged: u64,
    pub deferred_prompts_delivered: u64,
    pub deferred_prompts_undelivered: u64,
    pub progress_recorded: u64,
}

impl AgentCounters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> AgentMetrics {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        AgentMetrics {
            spawned: get(&self.spawned),
            spawn_failures: get(&self.spawn_failures),
            submits: get(&self.submits),
            submits_refused: get(&self.submits_refused),
            submits_acknowledged: get(&self.submits_acknowledged),
            deferred_prompts_delivered: get(&self.deferred_delivered),
            deferred_prompts_undelivered: get(&self.deferred_undelivered),
            progress_recorded: get(&self.progress_recorded),
        }
    }
}

impl AgentsState {
    fn spawns(&self) -> MutexGuard<'_, HashMap<String, SpawnInfo>> {
        self.spawns.locked()
    }

    /// Records a spawn; drops entries whose sessions `keep` no longer knows.
    pub(crate) fn record_spawn(&self, session_id: &str, info: SpawnInfo, keep: impl Fn(&str) -> bool) {
        let mut spawns = self.spawns();
        spawns.retain(|id, _| keep(id));
        spawns.insert(session_id.to_owned(), info);
    }

    pub(crate) fn spawn_info(&self, session_id: &str) -> Option<SpawnInfo> {
        self.spawns().get(session_id).cloned()
    }

    pub(crate) fn set_prompt_delivery(&self, session_id: &str, delivery: &'static str) {
        if let Some(info) = self.spawns().get_mut(session_id) {
            info.prompt_delivery = delivery;
        }
    }

    /// The journal under `config_dir`, opened on first use.
    pub(crate) fn journal(&self, config_dir: &std::path::Path) -> MutexGuard<'_, Option<Journal>> {
        let mut journal = self.journal.locked();
        if journal.is_none() {
            *journal = Some(Journal::new(config_dir));
        }
        journal
    }
}
