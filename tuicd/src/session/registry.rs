//! [`SessionRegistry`]: every live session and every tombstone, the one resolver, creation under
//! the session limit, the lifecycle events and the capture switch.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use proto::events::{SESSION_CLOSED, SESSION_CREATED, TERM_ALIAS_ASSIGNED};
use proto::session::{CaptureStatus, CreateSessionRequest, Metrics, Stats};
use serde_json::json;

use super::alias::AliasBook;
use super::capture::CaptureFile;
use super::hooks::AttachFactory;
use super::owner::{Identity, Session};
use super::process::ProcessSampler;
use super::{Counters, SessionError, spawn};
use crate::events::EventBus;
use crate::limits::{SESSION_ID_MAX_LEN, SESSION_TOMBSTONE_MAX, SESSION_TOMBSTONE_TTL};
use crate::lock::Recover;

/// A cheap handle (one `Arc`).
#[derive(Clone)]
pub(crate) struct SessionRegistry {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SessionRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionRegistry").finish_non_exhaustive()
    }
}

struct Shared {
    /// A std mutex, held for map operations only: never across `.await` or a spawn.
    state: Mutex<State>,
    events: Arc<EventBus>,
    counters: Arc<Counters>,
    captures_dir: PathBuf,
    pub(super) sampler: Mutex<ProcessSampler>,
    /// Builds what attaches to each new session, installed once by the composition root (see
    /// [`super::hooks`]).
    attach: std::sync::OnceLock<AttachFactory>,
    /// Holds each session's descriptors outside the daemon (see [`crate::keep`]), once installed.
    keep: std::sync::OnceLock<Arc<crate::keep::Keep>>,
}

#[derive(Default)]
struct State {
    live: HashMap<String, Arc<Session>>,
    /// Exited sessions, oldest first, with the time they closed.
    tombstones: VecDeque<(Instant, Arc<Session>)>,
    /// Names handed out to creations still spawning.
    pending: Vec<Pending>,
    aliases: AliasBook,
    /// `Some(filter)` while capture is on; `filter` is one session id or all sessions.
    capture: Option<Option<String>>,
    /// Set once the sessions are being handed to the next process: no creation from then on.
    handing_over: bool,
}

/// The names a creation still spawning holds, so that no other creation takes them meanwhile.
struct Pending {
    id: String,
    alias: String,
    tuic_session: String,
}

impl State {
    fn sweep(&mut self) {
        while self.tombstones.front().is_some_and(|(at, _)| at.elapsed() >= SESSION_TOMBSTONE_TTL) {
            self.tombstones.pop_front();
        }
    }

    fn find(&self, reference: &str) -> Option<Arc<Session>> {
        let matches = |s: &Session| s.id == reference || s.tuic_session == reference || s.alias == reference;
        if let Some(s) = self.live.get(reference) {
            return Some(s.clone());
        }
        self.live
            .values()
            .find(|s| matches(s))
            .cloned()
            .or_else(|| self.tombstones.iter().rev().map(|(_, s)| s).find(|s| matches(s)).cloned())
    }

    fn id_in_use(&self, id: &str) -> bool {
        self.live.contains_key(id) || self.pending.iter().any(|p| p.id == id)
    }

    /// The live session (or the id of the creation still spawning) holding `tuic_session`.
    fn identity_holder(&self, tuic_session: &str) -> Option<String> {
        let live = self.live.values().find(|s| s.tuic_session == tuic_session).map(|s| s.id.clone());
        live.or_else(|| self.pending.iter().find(|p| p.tuic_session == tuic_session).map(|p| p.id.clone()))
    }
}

impl SessionRegistry {
    pub(crate) fn new(events: Arc<EventBus>, config_dir: &std::path::Path) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                events,
                counters: Arc::default(),
                captures_dir: config_dir.join("captures"),
                sampler: Mutex::new(ProcessSampler::default()),
                attach: std::sync::OnceLock::new(),
                keep: std::sync::OnceLock::new(),
            }),
        }
    }

    /// Installs what attaches to every session created from now on (once).
    pub(crate) fn set_attach_factory(&self, attach: AttachFactory) {
        let _ = self.shared.attach.set(attach);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        let mut state = self.shared.state.locked();
        state.sweep();
        state
    }

    /// Creates a session: checks the request, the limit and the ids, spawns the child, registers it
    /// and publishes `session-created` and `term-alias-assigned`. A refused request changes nothing.
    pub(crate) fn create(&self, req: &CreateSessionRequest, max_sessions: usize) -> Result<Arc<Session>, SessionError> {
        let plan = spawn::plan(req).inspect_err(|_| self.count_failure())?;
        let tuic_session = match &req.tuic_session {
            Some(t) => uuid::Uuid::parse_str(t)
                .map_err(|_| SessionError::InvalidField(format!("tuic_session: '{t}' is not a UUID")))?
                .to_string(),
            None => uuid::Uuid::new_v4().to_string(),
        };
        if let Some(id) = &req.session_id {
            check_id(id)?;
        }
        let (id, alias) = {
            let mut state = self.lock();
            if state.handing_over {
                return Err(SessionError::HandingOver);
            }
            if state.live.len() + state.pending.len() >= max_sessions {
                self.count_failure();
                return Err(SessionError::Limit { max: max_sessions });
            }
            // Checked and reserved under the same lock: of two racing creations one wins.
            if let Some(holder) = state.identity_holder(&tuic_session) {
                return Err(SessionError::IdentityInUse(tuic_session, holder));
            }
            // A client-chosen id already in use (a duplicated browser tab) gets a fresh one.
            let id = match &req.session_id {
                Some(id) if !state.id_in_use(id) => id.clone(),
                _ => uuid::Uuid::new_v4().to_string(),
            };
            let State { aliases, live, pending, .. } = &mut *state;
            let alias = aliases.assign(&plan.cwd, req.alias.as_deref(), |a| {
                live.values().any(|s| s.alias == a) || pending.iter().any(|p| p.alias == a)
            });
            state.pending.push(Pending { id: id.clone(), alias: alias.clone(), tuic_session: tuic_session.clone() });
            (id, alias)
        };
        let capture = self.capture_for(&id);
        let identity = Identity {
            id: id.clone(),
            tuic_session,
            alias,
            // Shown to other clients: one line, whatever the caller sent.
            display_name: req.display_name.as_deref().map(crate::agent::launch::one_line),
            agent_type: req.agent_type.clone(),
            attach: self.shared.attach.get().cloned(),
        };
        let registry = self.clone();
        let started = Session::start(
            &plan,
            identity,
            capture,
            self.shared.counters.clone(),
            Box::new(move |session| registry.retire(session)),
        );
        let mut state = self.lock();
        state.pending.retain(|p| p.id != id);
        let session = match started {
            Ok(session) => session,
            Err(e) => {
                drop(state);
                self.count_failure();
                return Err(e);
            }
        };
        // A child that exited at once has already retired itself; it stays a tombstone.
        if session.exit_info().is_none() {
            state.live.insert(id.clone(), session.clone());
        }
        drop(state);
        self.keep(&session);
        self.shared.counters.total_spawned.fetch_add(1, Ordering::Relaxed);
        self.announce_created(&session, false);
        Ok(session)
    }

    /// `session-created` and `term-alias-assigned`; `recovered` marks a session taken back after
    /// a crash (see [`super::handover`]).
    pub(super) fn announce_created(&self, session: &Session, recovered: bool) {
        let mut created = json!({"session_id": session.id, "cwd": session.cwd.display().to_string(),
                                 "agent_type": session.agent_type, "display_name": session.display_name});
        if recovered {
            created["recovered"] = json!(true);
        }
        self.shared.events.publish(SESSION_CREATED, &created);
        self.shared.events.publish(TERM_ALIAS_ASSIGNED, &json!({"session_id": session.id, "alias": session.alias}));
    }

    /// The one resolver: PTY id, `tuic_session` or alias; live sessions first, then tombstones.
    pub(crate) fn resolve(&self, reference: &str) -> Result<Arc<Session>, SessionError> {
        self.lock().find(reference).ok_or_else(|| SessionError::NotFound(reference.to_owned()))
    }

    /// The PTY id `reference` names, or `reference` itself when it names no session: what a
    /// token's per-session rights are checked against.
    pub(crate) fn canonical_id(&self, reference: &str) -> String {
        self.resolve(reference).map_or_else(|_| reference.to_owned(), |s| s.id.clone())
    }

    /// Resolves to a live session only (for actions that need a running child).
    pub(crate) fn resolve_live(&self, reference: &str) -> Result<Arc<Session>, SessionError> {
        let session = self.resolve(reference)?;
        match session.exit_info() {
            None => Ok(session),
            Some(exit) => Err(SessionError::Exited {
                session_id: session.id.clone(),
                exit_code: exit.exit_code,
                action: "this action",
            }),
        }
    }

    /// Live sessions, oldest first.
    pub(crate) fn list(&self) -> Vec<Arc<Session>> {
        let mut sessions: Vec<_> = self.lock().live.values().cloned().collect();
        sessions.sort_by_key(|s| s.created);
        sessions
    }

    /// Exited sessions still readable, oldest first.
    #[cfg(test)]
    pub(crate) fn tombstones(&self) -> Vec<Arc<Session>> {
        self.lock().tombstones.iter().map(|(_, s)| s.clone()).collect()
    }

    pub(crate) fn active_count(&self) -> usize {
        self.lock().live.len()
    }

    /// Closes every live session (daemon shutdown) and waits until each has finished, for at most
    /// `deadline`. The process group of each session still open then gets SIGKILL, and the log
    /// says how many; shutdown does not wait for them any longer.
    pub(crate) async fn close_all(&self, reason: &'static str, deadline: std::time::Duration) {
        let sessions = self.list();
        for session in &sessions {
            session.close(reason);
        }
        let all_finished = async {
            for session in &sessions {
                session.finished().await;
            }
        };
        if tokio::time::timeout(deadline, all_finished).await.is_ok() {
            return;
        }
        let stuck: Vec<_> = sessions.iter().filter(|s| s.exit_info().is_none()).collect();
        tracing::warn!(
            sessions = stuck.len(), deadline = ?deadline,
            "sessions still open after the shutdown deadline; killing their process groups"
        );
        for session in stuck {
            session.kill_group();
        }
    }

    /// Installs the holder that keeps every session created from now on (once).
    pub(crate) fn set_keep(&self, keep: Arc<crate::keep::Keep>) {
        let _ = self.shared.keep.set(keep);
    }

    /// Which holder keeps the sessions' descriptors: `systemd`, `keeper` or `off`.
    pub(crate) fn kept_by(&self) -> &'static str {
        self.keeper().map_or("off", |k| k.holder())
    }

    pub(super) fn keeper(&self) -> Option<&Arc<crate::keep::Keep>> {
        self.shared.keep.get()
    }

    /// No session is created from now on (see [`super::handover`]).
    pub(super) fn set_handing_over(&self) {
        self.lock().handing_over = true;
    }

    /// The alias a handed-over session had, recorded so new ones do not take it again.
    pub(super) fn reserve_alias(&self, cwd: &std::path::Path, alias: &str) -> String {
        let mut state = self.lock();
        let State { aliases, live, .. } = &mut *state;
        aliases.assign(cwd, Some(alias), |a| live.values().any(|s| s.alias == a))
    }

    pub(super) fn attach_factory(&self) -> Option<AttachFactory> {
        self.shared.attach.get().cloned()
    }

    pub(super) fn shared_counters(&self) -> Arc<super::Counters> {
        self.shared.counters.clone()
    }

    /// Registers a handed-over session as live (unless it has already ended).
    pub(super) fn insert_adopted(&self, session: &Arc<Session>) {
        let mut state = self.lock();
        if session.exit_info().is_none() {
            state.live.insert(session.id.clone(), session.clone());
        }
    }

    /// The supervisor's `on_close`: live -> tombstone, then `session-closed`.
    pub(super) fn retire(&self, session: &Arc<Session>) {
        let reason = session.exit_info().map_or("closed", |e| e.reason);
        {
            let mut state = self.lock();
            state.live.remove(&session.id);
            if state.tombstones.len() == SESSION_TOMBSTONE_MAX {
                state.tombstones.pop_front();
            }
            state.tombstones.push_back((Instant::now(), session.clone()));
        }
        session.set_capture(None);
        self.unkeep(session);
        if let Some(hooks) = session.hooks() {
            hooks.on_retired(session.exit_info().and_then(|e| e.exit_code));
        }
        self.shared.events.publish(SESSION_CLOSED, &json!({"session_id": session.id, "reason": reason}));
    }

    fn count_failure(&self) {
        self.shared.counters.failed_spawns.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn stats(&self, max_sessions: usize) -> Stats {
        let active = self.active_count();
        Stats { active_sessions: active, max_sessions, available_slots: max_sessions.saturating_sub(active) }
    }

    pub(crate) fn metrics(&self) -> Metrics {
        let c = &self.shared.counters;
        Metrics {
            total_spawned: c.total_spawned.load(Ordering::Relaxed),
            failed_spawns: c.failed_spawns.load(Ordering::Relaxed),
            active_sessions: self.active_count(),
            bytes_emitted: c.bytes_emitted.load(Ordering::Relaxed),
            bytes_written: c.bytes_written.load(Ordering::Relaxed),
            pauses_triggered: c.pauses_triggered.load(Ordering::Relaxed),
            ws_lag_resyncs: c.ws_lag_resyncs.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn counters(&self) -> &Counters {
        &self.shared.counters
    }

    /// Turns raw capture on (for one session, or all) or off. Enabling starts fresh files.
    pub(crate) fn set_capture(&self, enabled: bool, session: Option<&str>) -> Result<CaptureStatus, SessionError> {
        let filter = match (enabled, session) {
            (true, Some(reference)) => Some(Some(self.resolve_live(reference)?.id.clone())),
            (true, None) => Some(None),
            (false, _) => None,
        };
        let sessions = {
            let mut state = self.lock();
            state.capture = filter.clone();
            state.live.values().cloned().collect::<Vec<_>>()
        };
        for session in sessions {
            let wanted = filter.as_ref().is_some_and(|f| f.as_ref().is_none_or(|id| *id == session.id));
            session.set_capture(if wanted { self.open_capture(&session.id) } else { None });
        }
        Ok(self.capture_status())
    }

    pub(crate) fn capture_status(&self) -> CaptureStatus {
        let (filter, sessions) = {
            let state = self.lock();
            (state.capture.clone(), state.live.values().cloned().collect::<Vec<_>>())
        };
        let files: BTreeMap<String, u64> =
            sessions.iter().filter_map(|s| Some((s.id.clone(), s.capture_written()?))).collect();
        CaptureStatus {
            enabled: filter.is_some(),
            session_id: filter.flatten(),
            directory: self.shared.captures_dir.display().to_string(),
            files,
        }
    }

    fn capture_for(&self, id: &str) -> Option<CaptureFile> {
        let filter = self.lock().capture.clone()?;
        if filter.is_some_and(|f| f != id) {
            return None;
        }
        self.open_capture(id)
    }

    fn open_capture(&self, id: &str) -> Option<CaptureFile> {
        CaptureFile::create(&self.shared.captures_dir, id)
            .inspect_err(|e| tracing::warn!(session = id, error = %e, "cannot open the capture file"))
            .ok()
    }

    pub(super) fn sampler(&self) -> MutexGuard<'_, ProcessSampler> {
        self.shared.sampler.locked()
    }
}

/// A client-chosen id appears in URLs and file names: letters, digits, `-` and `_` only.
fn check_id(id: &str) -> Result<(), SessionError> {
    let ok = !id.is_empty()
        && id.len() <= SESSION_ID_MAX_LEN
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(SessionError::InvalidField(format!(
            "session_id: '{id}' must be 1..={SESSION_ID_MAX_LEN} letters, digits, '-' or '_'"
        )))
    }
}
