//! Handing the live sessions to the daemon's next process image (upgrade in place) and taking
//! them over there. Per session: its identity and size, the ring
//! (so every cursor a client holds stays valid), the PTY master and the child's pidfd. The screen
//! model is rebuilt from the ring; what the agent engine knew is re-learnt from the output.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proto::session::WindowSize;
use serde::{Deserialize, Serialize};

use super::child::ChildProcess;
use super::owner::{Identity, Parts, Session};
use super::{SessionError, SessionRegistry};
use crate::lock::Recover;

/// What the next process needs to know about a session, besides its ring bytes and descriptors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HandedSession {
    pub id: String,
    pub tuic_session: String,
    pub alias: String,
    pub display_name: Option<String>,
    pub agent_type: Option<String>,
    pub cwd: PathBuf,
    pub shell: String,
    pub created_unix_ms: u64,
    pub rows: u16,
    pub cols: u16,
    pub window_size: Option<WindowSize>,
    pub pid: u32,
    /// The cursor of the ring's first byte.
    pub ring_oldest: u64,
}

/// One session as handed over.
#[derive(Debug)]
pub(crate) struct Handed {
    pub meta: HandedSession,
    pub ring: Vec<u8>,
    pub master: OwnedFd,
    pub pidfd: OwnedFd,
}

impl Session {
    /// The session as handed over, its ring included.
    fn hand(&self) -> std::io::Result<Handed> {
        let read = {
            let out = self.lock();
            out.ring.read_from(out.ring.oldest(), usize::MAX)
        };
        let mut handed = self.hand_identity()?;
        handed.meta.ring_oldest = read.start;
        handed.ring = read.data;
        Ok(handed)
    }

    /// The session as handed over, without its ring.
    fn hand_identity(&self) -> std::io::Result<Handed> {
        let (rows, cols) = self.term().screen.size();
        let meta = HandedSession {
            id: self.id.clone(),
            tuic_session: self.tuic_session.clone(),
            alias: self.alias.clone(),
            display_name: self.display_name.clone(),
            agent_type: self.agent_type.clone(),
            cwd: self.cwd.clone(),
            shell: self.shell.clone(),
            created_unix_ms: self.created.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
            rows,
            cols,
            window_size: self.sizes.locked().own_rule(),
            pid: self.child.pid(),
            ring_oldest: 0,
        };
        Ok(Handed {
            meta,
            ring: Vec::new(),
            master: self.master_dup()?,
            pidfd: self.child.pidfd().try_clone_to_owned()?,
        })
    }
}

/// The names a session's descriptors are held under (see [`crate::keep`]).
fn held_names(id: &str) -> [String; 2] {
    [format!("m.{id}"), format!("p.{id}")]
}

impl SessionRegistry {
    /// Gives the session's PTY master and pidfd to the holder, with its identity.
    pub(super) fn keep(&self, session: &Session) {
        let Some(keep) = self.keeper() else { return };
        let Ok(handed) = session.hand_identity() else { return };
        let record = serde_json::to_vec(&handed.meta).unwrap_or_default();
        let [master, pidfd] = held_names(&session.id);
        keep.hold(&session.id, &record, &[(&master, handed.master.as_fd()), (&pidfd, handed.pidfd.as_fd())]);
    }

    /// The session has finished: the holder lets its descriptors go (so the terminal hangs up).
    pub(super) fn unkeep(&self, session: &Session) {
        if let Some(keep) = self.keeper() {
            let [master, pidfd] = held_names(&session.id);
            keep.release(Some(&session.id), &[&master, &pidfd]);
        }
    }

    /// After a crash: takes back every session a previous daemon recorded whose descriptors the
    /// holder still has (`left`) and whose program still runs; forgets the others. Each one's
    /// cursors start again at 0 (its ring died with that daemon). Sessions already live (handed
    /// over by an upgrade in place) are left as they are. Returns how many were taken back.
    pub(crate) fn recover(&self, mut left: std::collections::BTreeMap<String, OwnedFd>) -> usize {
        let Some(keep) = self.keeper().cloned() else { return 0 };
        let live: std::collections::HashSet<String> = self.list().iter().map(|s| s.id.clone()).collect();
        let mut recovered = 0;
        for (id, record) in keep.records() {
            let [master_name, pidfd_name] = held_names(&id);
            let (master, pidfd) = (left.remove(&master_name), left.remove(&pidfd_name));
            if live.contains(&id) {
                continue;
            }
            let meta = serde_json::from_slice::<HandedSession>(&record).ok().filter(|m| m.id == id);
            if let (Some(mut meta), Some(master), Some(pidfd)) = (meta, master, pidfd)
                && super::child::running(pidfd.as_fd())
            {
                meta.ring_oldest = 0;
                match self.adopt(Handed { meta, ring: Vec::new(), master, pidfd }) {
                    Ok(session) => {
                        recovered += 1;
                        self.announce_created(&session, true);
                        continue;
                    }
                    Err(e) => tracing::warn!(session = %id, error = %e, "a kept session could not be taken back"),
                }
            }
            keep.release(Some(&id), &[&master_name, &pidfd_name]);
        }
        let strays: Vec<&str> = left.keys().map(String::as_str).collect();
        keep.release(None, &strays);
        recovered
    }

    /// The live sessions as they are now, without stopping anything: the trial the next binary
    /// reads before anything is handed over.
    pub(crate) fn hand_trial(&self) -> Vec<Handed> {
        self.list().iter().filter_map(|s| s.hand().ok()).collect()
    }

    /// Freezes every live session for the hand-over and hands each over: no session is created
    /// from now on; each reader thread stops (output waits in the kernel for the next process)
    /// and the input queued before is written (each writer lock is taken and kept, so nothing
    /// more is written). Irreversible: the process execs next. Waits at most `deadline` in all.
    pub(crate) async fn freeze(&self, deadline: Duration) -> Vec<Handed> {
        self.set_handing_over();
        let sessions = self.list();
        let until = tokio::time::Instant::now() + deadline;
        for session in &sessions {
            session.reader.stop();
        }
        let mut handed = Vec::with_capacity(sessions.len());
        for session in &sessions {
            let mut ended = session.reader.ended.subscribe();
            if tokio::time::timeout_at(until, ended.wait_for(|e| *e)).await.is_err() {
                tracing::warn!(session = %session.id, "the reader did not stop in time; its last chunk may be read twice");
            }
            match tokio::time::timeout_at(until, session.writer()).await {
                Ok(guard) => {
                    // The writer lock is kept until the exec: no write starts after the snapshot.
                    std::mem::forget(guard);
                    while !session.input_drained() && tokio::time::Instant::now() < until {
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                }
                Err(_) => tracing::warn!(session = %session.id, "a write was still running at the hand-over"),
            }
            match session.hand() {
                Ok(h) => handed.push(h),
                Err(e) => tracing::warn!(session = %session.id, error = %e, "session not handed over"),
            }
        }
        handed
    }

    /// Takes over a session handed over by the previous process: registered under its own id,
    /// identity and alias, its ring continuing, its child watched through the pidfd.
    pub(crate) fn adopt(&self, handed: Handed) -> Result<Arc<Session>, SessionError> {
        let Handed { meta, ring, master, pidfd } = handed;
        let alias = self.reserve_alias(&meta.cwd, &meta.alias);
        let identity = Identity {
            id: meta.id.clone(),
            tuic_session: meta.tuic_session,
            alias,
            display_name: meta.display_name,
            agent_type: meta.agent_type,
            attach: self.attach_factory(),
        };
        let answered_until = meta.ring_oldest + ring.len() as u64;
        let parts = Parts {
            master,
            child: ChildProcess::adopted(meta.pid, pidfd),
            rows: meta.rows,
            cols: meta.cols,
            window_size: meta.window_size,
            cwd: meta.cwd,
            shell: meta.shell,
            created: SystemTime::UNIX_EPOCH + Duration::from_millis(meta.created_unix_ms),
            history: (meta.ring_oldest, ring),
            answered_until,
        };
        let registry = self.clone();
        let session = Session::adopt(parts, identity, self.shared_counters(), Box::new(move |s| registry.retire(s)))?;
        self.insert_adopted(&session);
        Ok(session)
    }
}
