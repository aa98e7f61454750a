//! Task handles for spawned agents (seed: "task tool"). A task is created `working` once the PTY is
//! live; the session's exit drives it to `completed` (exit 0, `result {session_id, exit_code}`) or
//! `failed` (`error_detail`), whether or not anyone listens. `cancelled`, `completed` and `failed`
//! are terminal and immutable: whichever of cancel and exit lands first wins, the other changes
//! nothing. `input_required` is read live from the agent while the task is open.
//!
//! Bounded: [`TASK_MAX`] handles, each kept [`TASK_TTL`] after creation, oldest dropped first.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{Value, json};

use crate::limits::{TASK_MAX, TASK_POLL_INTERVAL_MS, TASK_TTL};
use crate::lock::Recover;

/// The MCP Tasks vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TaskStatus {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub(crate) fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub task_id: String,
    pub session_id: String,
    /// The caller identity that spawned it (tuic_session, else its MCP session: a pending id that
    /// becomes the identity the session binds later, see [`TaskStore::owner_moved`]); `None`:
    /// anonymous.
    pub owner: Option<String>,
    pub status: TaskStatus,
    pub result: Option<Value>,
    pub error_detail: Option<String>,
    created: Instant,
    created_ms: u64,
    updated_ms: u64,
}

impl Task {
    /// The `task action=get` answer; `live` is the status read from the agent for an open task.
    pub(crate) fn to_json(&self, live: Option<TaskStatus>) -> Value {
        let status = if self.status.is_terminal() { self.status } else { live.unwrap_or(self.status) };
        let mut value = json!({
            "task_id": self.task_id,
            "status": status,
            "poll_interval_ms": TASK_POLL_INTERVAL_MS,
            "session_id": self.session_id,
            "created_at_ms": self.created_ms,
            "last_updated_at_ms": self.updated_ms,
            "ttl_ms": TASK_TTL.as_millis() as u64,
        });
        if let Some(result) = &self.result {
            value["result"] = result.clone();
        }
        if let Some(detail) = &self.error_detail {
            value["error_detail"] = json!(detail);
        }
        value
    }
}

/// Why a task lookup failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TaskError {
    Unknown(String),
    NotOwner(String),
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskError::Unknown(id) => write!(f, "unknown or expired task_id '{id}'"),
            TaskError::NotOwner(id) => write!(f, "task_id '{id}' is not owned by the calling identity"),
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct TaskStore {
    tasks: Mutex<VecDeque<Task>>,
    /// Woken whenever a task ends (exit or cancel), for `tasks/result` waiters.
    ended: tokio::sync::Notify,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl TaskStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Task>> {
        let mut tasks = self.tasks.locked();
        while tasks.front().is_some_and(|t| t.created.elapsed() >= TASK_TTL) {
            tasks.pop_front();
        }
        tasks
    }

    /// A new `working` task for a live session.
    pub(crate) fn create(&self, session_id: &str, owner: Option<String>) -> Task {
        let now = now_ms();
        let task = Task {
            task_id: uuid::Uuid::new_v4().to_string(),
            session_id: session_id.to_owned(),
            owner,
            status: TaskStatus::Working,
            result: None,
            error_detail: None,
            created: Instant::now(),
            created_ms: now,
            updated_ms: now,
        };
        let mut tasks = self.lock();
        if tasks.len() >= TASK_MAX {
            tasks.pop_front();
        }
        tasks.push_back(task.clone());
        task
    }

    /// The task, if `owner` may see it (ownership is checked before anything is returned).
    pub(crate) fn get(&self, task_id: &str, owner: Option<&str>) -> Result<Task, TaskError> {
        let tasks = self.lock();
        let task = tasks.iter().find(|t| t.task_id == task_id).ok_or_else(|| TaskError::Unknown(task_id.into()))?;
        if task.owner.as_deref() != owner {
            return Err(TaskError::NotOwner(task_id.into()));
        }
        Ok(task.clone())
    }

    /// The caller known as `from` is now known as `to`: its protocol session bound an identity
    /// (`from` is the protocol session a task spawned before that was stamped with), or `to`
    /// superseded the identity `from` (repair, `replaces`). Its tasks follow it, so the spawner
    /// still reaches every handle it created.
    pub(crate) fn owner_moved(&self, from: &str, to: &str) {
        for task in self.lock().iter_mut().filter(|t| t.owner.as_deref() == Some(from)) {
            task.owner = Some(to.to_owned());
        }
    }

    /// Every task `owner` may see, newest first.
    pub(crate) fn list(&self, owner: Option<&str>) -> Vec<Task> {
        self.lock().iter().rev().filter(|t| t.owner.as_deref() == owner).cloned().collect()
    }

    /// Cancels an open task; `Ok(false)` when it had already ended (it keeps its terminal state).
    pub(crate) fn cancel(&self, task_id: &str, owner: Option<&str>) -> Result<(bool, Task), TaskError> {
        let mut tasks = self.lock();
        let task = tasks.iter_mut().find(|t| t.task_id == task_id).ok_or_else(|| TaskError::Unknown(task_id.into()))?;
        if task.owner.as_deref() != owner {
            return Err(TaskError::NotOwner(task_id.into()));
        }
        if task.status.is_terminal() {
            return Ok((false, task.clone()));
        }
        task.status = TaskStatus::Cancelled;
        task.updated_ms = now_ms();
        self.ended.notify_waiters();
        Ok((true, task.clone()))
    }

    /// The session of every open task for `session_id` exited: completed or failed, unless a
    /// cancel got there first.
    pub(crate) fn session_exited(&self, session_id: &str, exit_code: Option<i32>) {
        let mut tasks = self.lock();
        for task in tasks.iter_mut().filter(|t| t.session_id == session_id && !t.status.is_terminal()) {
            task.updated_ms = now_ms();
            if exit_code == Some(0) {
                task.status = TaskStatus::Completed;
                task.result = Some(json!({"session_id": session_id, "exit_code": 0}));
            } else {
                task.status = TaskStatus::Failed;
                task.error_detail = Some(match exit_code {
                    Some(code) => format!("agent session exited with code {code}"),
                    None => "agent session exited without a readable exit status".to_owned(),
                });
                task.result = Some(json!({"session_id": session_id, "exit_code": exit_code}));
            }
        }
        self.ended.notify_waiters();
    }

    /// Resolves at the next end of any task. Enable it (or poll it once) before reading the task,
    /// so an end between the read and the wait still wakes the waiter.
    pub(crate) fn ended(&self) -> tokio::sync::futures::Notified<'_> {
        self.ended.notified()
    }
}

impl Task {
    pub(crate) fn created_ms(&self) -> u64 {
        self.created_ms
    }

    pub(crate) fn updated_ms(&self) -> u64 {
        self.updated_ms
    }
}

/// A Unix time in milliseconds as an ISO 8601 UTC timestamp (`2026-12-01T15:20:38.123Z`), the form
/// MCP Tasks use for `createdAt` and `lastUpdatedAt`.
pub(crate) fn iso8601_utc(unix_ms: u64) -> String {
    let days = (unix_ms / 86_400_000) as i64;
    let ms_of_day = unix_ms % 86_400_000;
    // Days to a civil date (H. Hinnant's algorithm, proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, sec, ms) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60, ms_of_day / 1000 % 60, ms_of_day % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{sec:02}.{ms:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_states_are_immutable_and_cancel_racing_exit_is_never_overwritten() {
        let store = TaskStore::default();
        let a = store.create("s1", Some("me".into()));
        assert!(store.cancel(&a.task_id, Some("me")).unwrap().0);
        store.session_exited("s1", Some(0));
        assert_eq!(store.get(&a.task_id, Some("me")).unwrap().status, TaskStatus::Cancelled);
        let b = store.create("s2", Some("me".into()));
        store.session_exited("s2", Some(2));
        let (cancelled, task) = store.cancel(&b.task_id, Some("me")).unwrap();
        assert!(!cancelled);
        assert_eq!(task.status, TaskStatus::Failed);
        assert_eq!(task.error_detail.as_deref(), Some("agent session exited with code 2"));
        store.session_exited("s2", Some(0));
        assert_eq!(store.get(&b.task_id, Some("me")).unwrap().status, TaskStatus::Failed);
    }

    #[test]
    fn ownership_is_checked_and_unknown_ids_say_so() {
        let store = TaskStore::default();
        let a = store.create("s1", Some("me".into()));
        assert_eq!(store.get(&a.task_id, Some("other")).unwrap_err(), TaskError::NotOwner(a.task_id.clone()));
        assert_eq!(store.get(&a.task_id, None).unwrap_err(), TaskError::NotOwner(a.task_id.clone()));
        assert!(store.cancel(&a.task_id, Some("other")).is_err());
        assert_eq!(store.get(&a.task_id, Some("me")).unwrap().status, TaskStatus::Working);
        assert!(store.get("nope", Some("me")).unwrap_err().to_string().contains("unknown or expired"));
        assert_eq!(store.list(Some("me")).len(), 1);
        assert!(store.list(Some("other")).is_empty());
    }

    #[test]
    fn tasks_follow_their_owner_to_a_new_identity() {
        let store = TaskStore::default();
        let pending = store.create("s1", Some("mcp-session".into()));
        let other = store.create("s2", Some("someone-else".into()));
        store.owner_moved("mcp-session", "identity-a");
        assert!(store.get(&pending.task_id, Some("identity-a")).is_ok());
        assert!(store.get(&pending.task_id, Some("mcp-session")).is_err());
        store.owner_moved("identity-a", "identity-b");
        assert!(store.cancel(&pending.task_id, Some("identity-b")).unwrap().0);
        assert!(store.get(&other.task_id, Some("someone-else")).is_ok(), "other owners' tasks stay put");
    }

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601_utc(1_796_138_438_123), "2026-12-01T15:20:38.123Z");
    }

    #[test]
    fn the_store_is_bounded() {
        let store = TaskStore::default();
        let first = store.create("s", None);
        for _ in 0..TASK_MAX {
            store.create("s", None);
        }
        assert!(store.get(&first.task_id, None).is_err());
        assert_eq!(store.list(None).len(), TASK_MAX);
    }
}
