//! The three-way save of `mcp-upstreams.json` (pure): the caller's `base` → `desired` delta,
//! indexed by stable `id`, applied to the latest file on disk, so a stale snapshot never
//! overwrites what another save wrote meanwhile.
//!
//! A server's top-level fields (`name`, `transport`, `enabled`, `timeout_secs`, `tool_filter`,
//! `auth`) are the units of change: a field the caller left as it was in `base` is not part of
//! the delta and keeps its latest value; one absent from `desired` but present in `base` clears.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use super::redact::{self, MissingSecret};
use crate::proxy::config::{UpstreamServer, UpstreamsFile};

/// Why a delta cannot be applied to the file as it is now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MergeError {
    #[error("upstream id {id:?} was added by another save meanwhile, with different content; reload and retry")]
    AddedConcurrently { id: String },
    #[error("upstream id {id:?} was removed by another save meanwhile; reload and retry")]
    RemovedConcurrently { id: String },
    #[error("base: two upstreams have the id {id:?}")]
    DuplicateBaseId { id: String },
    #[error(transparent)]
    MissingSecret(#[from] MissingSecret),
    #[error("upstream id {id:?}: the merged entry is not valid: {message}")]
    Unmergeable { id: String, message: String },
}

/// What one save changes, relative to the snapshot the caller loaded.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Delta {
    /// Servers whose id is new, in the caller's order.
    pub added: Vec<UpstreamServer>,
    pub removed: Vec<String>,
    /// Per changed server id: each changed field and its new value (`None` clears it).
    pub changed: BTreeMap<String, BTreeMap<String, Option<Value>>>,
}

impl Delta {
    /// Derives the semantic delta from `base` to `desired`.
    pub(crate) fn between(base: &UpstreamsFile, desired: &UpstreamsFile) -> Result<Self, MergeError> {
        let mut base_ids = HashSet::new();
        for server in &base.servers {
            if !base_ids.insert(server.id.as_str()) {
                return Err(MergeError::DuplicateBaseId { id: server.id.clone() });
            }
        }
        let mut delta = Delta::default();
        for wanted in &desired.servers {
            let Some(before) = base.by_id(&wanted.id) else {
                delta.added.push(wanted.clone());
                continue;
            };
            let (before, after) = (fields(before), fields(wanted));
            let keys: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
            let changes: BTreeMap<String, Option<Value>> = keys
                .into_iter()
                .filter(|key| before.get(*key) != after.get(*key))
                .map(|key| (key.clone(), after.get(key).cloned()))
                .collect();
            if !changes.is_empty() {
                delta.changed.insert(wanted.id.clone(), changes);
            }
        }
        delta.removed = base.servers.iter().filter(|s| desired.by_id(&s.id).is_none()).map(|s| s.id.clone()).collect();
        Ok(delta)
    }

    /// Applies the delta to `latest`, the file as it is on disk now. Servers keep their order;
    /// added ones go last. A redaction marker in a changed secret stands for the stored value.
    pub(crate) fn apply(&self, latest: &UpstreamsFile) -> Result<UpstreamsFile, MergeError> {
        for id in self.changed.keys() {
            if latest.by_id(id).is_none() {
                return Err(MergeError::RemovedConcurrently { id: id.clone() });
            }
        }
        let mut servers = Vec::with_capacity(latest.servers.len() + self.added.len());
        for stored in &latest.servers {
            if self.removed.contains(&stored.id) {
                continue;
            }
            match self.changed.get(&stored.id) {
                Some(changes) => servers.push(change(stored, changes)?),
                None => servers.push(stored.clone()),
            }
        }
        for added in &self.added {
            match latest.by_id(&added.id) {
                // The same entry added twice (a retried save) is one entry, not a conflict.
                Some(stored) => {
                    let mut same = added.clone();
                    if redact::restore(&mut same, Some(stored)).is_err() || same != *stored {
                        return Err(MergeError::AddedConcurrently { id: added.id.clone() });
                    }
                }
                None => {
                    let mut fresh = added.clone();
                    redact::restore(&mut fresh, None)?;
                    servers.push(fresh);
                }
            }
        }
        Ok(UpstreamsFile { servers })
    }
}

/// The three-way merge: `base` → `desired` applied to `latest`.
#[cfg(test)]
pub(crate) fn merge(
    base: &UpstreamsFile,
    desired: &UpstreamsFile,
    latest: &UpstreamsFile,
) -> Result<UpstreamsFile, MergeError> {
    Delta::between(base, desired)?.apply(latest)
}

fn fields(server: &UpstreamServer) -> Map<String, Value> {
    match serde_json::to_value(server) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

fn change(stored: &UpstreamServer, changes: &BTreeMap<String, Option<Value>>) -> Result<UpstreamServer, MergeError> {
    let mut map = fields(stored);
    for (key, value) in changes {
        match value {
            Some(value) => map.insert(key.clone(), value.clone()),
            None => map.remove(key),
        };
    }
    let mut next: UpstreamServer = serde_json::from_value(Value::Object(map))
        .map_err(|e| MergeError::Unmergeable { id: stored.id.clone(), message: e.to_string() })?;
    redact::restore(&mut next, Some(stored))?;
    Ok(next)
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
