//! Unit tests of the session core with real `/bin/sh` children on real PTYs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use proto::session::{CreateSessionRequest, OutputFormat};

use super::*;
use crate::events::EventBus;

const DEADLINE: Duration = Duration::from_secs(20);

fn registry() -> (SessionRegistry, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (SessionRegistry::new(Arc::new(EventBus::new()), dir.path()), dir)
}

fn sh() -> CreateSessionRequest {
    CreateSessionRequest { shell: Some("/bin/sh".into()), cwd: Some("/".into()), ..Default::default() }
}

async fn wait_for_text(session: &Session, needle: &str) -> String {
    let start = Instant::now();
    loop {
        let text = session.output(OutputQuery { format: OutputFormat::Text, ..Default::default() }).data;
        if text.contains(needle) {
            return text;
        }
        assert!(start.elapsed() < DEADLINE, "no '{needle}' in: {text}");
        // Woken by the next output chunk, not by a timer.
        let mut rx = session.subscribe();
        let _ = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await;
    }
}

#[tokio::test]
async fn a_session_runs_echoes_exits_and_stays_readable() {
    let (registry, _dir) = registry();
    let session = registry.create(&sh(), 10).unwrap();
    assert_eq!(session.alias, "sh-1");
    session.write(&b"echo hel''lo; exit 3\n"[..]).await.unwrap();
    assert_eq!(session.wait(WaitFor::Exited, DEADLINE).await, WaitOutcome::Reached);
    let exit = session.exit_info().unwrap();
    assert_eq!(exit.exit_code, Some(3));
    assert!(wait_for_text(&session, "hello").await.contains("hello"));
    // Resolvable as a tombstone by all three names; input is refused.
    for reference in [&session.id, &session.tuic_session, &session.alias] {
        assert!(registry.resolve(reference).unwrap().exit_info().is_some());
    }
    let err = session.write(&b"x"[..]).await.unwrap_err().to_string();
    assert!(err.contains("has exited with code 3"), "{err}");
    assert_eq!(registry.active_count(), 0);
    assert_eq!(registry.tombstones().len(), 1);
}

#[tokio::test]
async fn the_limit_refuses_without_spawning() {
    let (registry, _dir) = registry();
    let first = registry.create(&sh(), 1).unwrap();
    let err = registry.create(&sh(), 1).unwrap_err();
    assert!(matches!(err, SessionError::Limit { max: 1 }));
    assert_eq!(registry.metrics().failed_spawns, 1);
    first.close("explicit_close");
    first.finished().await;
    assert_eq!(first.exit_info().unwrap().reason, "explicit_close");
}

#[tokio::test]
async fn raw_deltas_never_repeat_or_skip() {
    let (registry, _dir) = registry();
    let session = registry.create(&sh(), 10).unwrap();
    session.write(&b"i=0; while [ $i -lt 300 ]; do echo line-$i-\xc3\xa9; i=$((i+1)); done; exit\n"[..]).await.unwrap();
    session.wait(WaitFor::Exited, DEADLINE).await;
    let total = session.info().total_written;
    let mut cursor = 0;
    let mut collected = Vec::new();
    while cursor < total {
        let read =
            session.output(OutputQuery { format: OutputFormat::Raw, since_cursor: Some(cursor), limit: Some(777) });
        assert!(read.cursor > cursor, "cursor moved forward");
        collected.extend_from_slice(read.data.as_bytes());
        cursor = read.cursor;
    }
    let all = session.output(OutputQuery { format: OutputFormat::Raw, since_cursor: Some(0), limit: Some(1 << 20) });
    assert_eq!(collected, all.data.as_bytes());
    assert!(!all.data.contains('\u{FFFD}'));
    assert!(all.data.contains("line-299-é"));
}

#[tokio::test]
async fn idle_is_reached_after_output_stops() {
    let (registry, _dir) = registry();
    let session = registry.create(&sh(), 10).unwrap();
    assert_eq!(session.wait(WaitFor::Idle, DEADLINE).await, WaitOutcome::Reached);
    assert_eq!(session.shell_state(), Some(proto::session::ShellState::Idle));
    session.close("explicit_close");
}

/// Under load the screen follower (and with it an attached engine) lags the raw output. A wait
/// for idle must not answer `met` on raw silence while the follower has not read the output yet,
/// or `shell_state` read right after it disagrees (busy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_waits_for_the_screen_follower_to_read_the_output() {
    let (registry, _dir) = registry();
    let session = registry.create(&sh(), 10).unwrap();
    assert_eq!(session.wait(WaitFor::Idle, DEADLINE).await, WaitOutcome::Reached);
    // A stalled screen follower, as on a loaded machine: it cannot apply output while the
    // screen lock is held.
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let stalled = {
        let session = session.clone();
        std::thread::spawn(move || {
            let _term = session.term();
            locked_tx.send(()).unwrap();
            let _ = release_rx.recv();
        })
    };
    locked_rx.recv().unwrap();
    session.write(&b"echo stalled-$((6*7))\n"[..]).await.unwrap();
    let start = Instant::now();
    while !session
        .output(OutputQuery { format: OutputFormat::Raw, limit: Some(1 << 16), ..Default::default() })
        .data
        .contains("stalled-42")
    {
        assert!(start.elapsed() < DEADLINE, "the command never answered");
        let mut rx = session.subscribe();
        let _ = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await;
    }
    // Raw output has been silent for well over the idle threshold by the end of this wait.
    let outcome = session.wait(WaitFor::Idle, Duration::from_millis(1500)).await;
    assert_eq!(outcome, WaitOutcome::TimedOut, "output the screen follower has not read is not idle");
    assert_eq!(session.shell_state(), Some(proto::session::ShellState::Busy));
    release_tx.send(()).unwrap();
    stalled.join().unwrap();
    // The follower's parse budget counted the stall as parse time and would now rest for 50 times
    // as long; let it catch up at once, as it does before an exit.
    session.screen_hurry.notify_one();
    let outcome = session.wait(WaitFor::Idle, DEADLINE).await;
    let (fed, total) = (*session.screen_cursor.borrow(), session.total_written());
    assert_eq!(outcome, WaitOutcome::Reached, "the follower read {fed} of {total} bytes");
    assert!(*session.screen_cursor.borrow() >= session.total_written(), "idle only once everything was read");
    assert_eq!(session.shell_state(), Some(proto::session::ShellState::Idle));
    session.close("explicit_close");
}

/// Records what the session core tells its attachment, in order.
#[derive(Default)]
struct Recorder {
    calls: std::sync::Mutex<Vec<String>>,
    input: std::sync::Mutex<Vec<u8>>,
    retired: tokio::sync::Notify,
}

impl Attachment for Recorder {
    fn on_output(&self, _: &[u8], cursor: u64, _: &crate::agent::Screen<'_>) {
        self.calls.lock().unwrap().push(format!("output {cursor}"));
    }
    fn on_input(&self, bytes: &[u8]) {
        self.input.lock().unwrap().extend_from_slice(bytes);
    }
    fn on_end(&self) {
        self.calls.lock().unwrap().push("end".into());
    }
    fn on_retired(&self, exit_code: Option<i32>) {
        self.calls.lock().unwrap().push(format!("retired {exit_code:?}"));
        self.retired.notify_one();
    }
    fn status(&self) -> crate::agent::AgentStatus {
        crate::agent::AgentTracker::new(None).snapshot()
    }
}

#[tokio::test]
async fn an_attachment_sees_every_write_every_batch_then_the_end_then_the_retirement() {
    let (registry, _dir) = registry();
    let recorder = Arc::new(Recorder::default());
    let attached = recorder.clone();
    registry.set_attach_factory(Arc::new(move |_| attached.clone() as Arc<dyn Attachment>));
    let session = registry.create(&sh(), 10).unwrap();
    assert!(session.attachment::<Recorder>().is_some_and(|r| std::ptr::eq(r, recorder.as_ref())));
    assert!(session.info().state.is_some(), "the attachment's status is the session's state");
    session.write(&b"echo one\n"[..]).await.unwrap();
    session.write(&b"exit 4\n"[..]).await.unwrap();
    tokio::time::timeout(DEADLINE, recorder.retired.notified()).await.expect("retired within the deadline");
    assert_eq!(*recorder.input.lock().unwrap(), b"echo one\nexit 4\n");
    let calls = recorder.calls.lock().unwrap().clone();
    let total = session.total_written();
    let tail: Vec<&str> = calls.iter().rev().take(3).rev().map(String::as_str).collect();
    assert_eq!(tail, [format!("output {total}").as_str(), "end", "retired Some(4)"], "{calls:?}");
}
