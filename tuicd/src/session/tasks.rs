//! The tasks of a session: the reader thread's `ingest` (PTY -> ring, broadcast, capture; see
//! `reader.rs`), the screen follower (ring -> vt100 model), the writer (input queue -> PTY, so a
//! child that stops reading never blocks anyone else) and the supervisor (child exit or close
//! request -> drain -> the one teardown).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use super::budget::ParseBudget;
use super::capture::Direction;
use super::owner::{OnClose, Session, SessionEvent};
use crate::limits::{PTY_DRAIN_AFTER_EXIT, SCREEN_BATCH, SCREEN_MAX_BACKLOG};

/// One chunk the reader thread read: to the ring, the broadcast and the attached sinks under one
/// lock (so live order equals cursor order for every subscriber), then to the screen task and the
/// capture file.
pub(super) fn ingest(session: &Session, data: Bytes) {
    let bytes = data.clone();
    {
        let mut out = session.lock();
        let start = out.ring.total();
        out.ring.push(&bytes);
        let now = Instant::now();
        let (end, at) = (out.ring.total(), now - out.started);
        out.timeline.mark(end, at);
        out.last_output = Some(now);
        // No subscribers is fine: the ring has it.
        let _ = session.live.send(Arc::new(SessionEvent::Output { start, data }));
        for sink in &out.sinks {
            sink.offer(start, &bytes);
        }
    }
    session.screen_wake.notify_one();
    session.counters.bytes_emitted.fetch_add(bytes.len() as u64, Ordering::Relaxed);
    session.record(Direction::Output, &bytes);
}

/// Feeds the screen model from the ring, in batches, behind the reader: parsing a flood costs the
/// reader nothing. Parks (no timer) until the reader wakes it; ends once the session is finished.
/// While output keeps coming it holds to its parse budget (`budget.rs`), resting between batches
/// and skipping ahead when far behind, until the supervisor asks it to catch up for the exit.
pub(super) async fn follow_screen(session: Arc<Session>) {
    let mut cursor = *session.screen_cursor.borrow();
    let mut budget = ParseBudget::new(Instant::now());
    let mut hurry = false;
    loop {
        session.screen_wake.notified().await;
        loop {
            let read = {
                let out = session.lock();
                // Under a flood faster than the parser, skip to the recent past instead of falling
                // ever further behind: the skipped rows would mostly have left the bounded log anyway.
                if out.ring.total() - cursor.max(out.ring.oldest()) > SCREEN_MAX_BACKLOG as u64 {
                    let from = out.ring.total() - SCREEN_BATCH as u64;
                    let mut read = out.ring.read_from(from, SCREEN_BATCH);
                    read.missed = from - cursor;
                    read
                } else {
                    out.ring.read_from(cursor, SCREEN_BATCH)
                }
            };
            if read.data.is_empty() {
                break;
            }
            cursor = read.start + read.data.len() as u64;
            let parsing = Instant::now();
            let (events, replies) = {
                let mut term = session.term();
                term.skipped += read.missed;
                let events = term.screen.process(&read.data);
                feed_agent(session.as_ref(), &term.screen, &read.data, cursor);
                (events, term.screen.take_replies())
            };
            // A previous daemon answered the queries in handed-over output.
            if !replies.is_empty() && cursor > session.answered_until {
                session.answer_queries(Bytes::from(replies)).await;
            }
            let parsed = Instant::now();
            session.screen_cursor.send_replace(cursor);
            for event in events {
                session.announcer.announce(SessionEvent::Parsed(event));
            }
            let rest = budget.spend(parsed - parsing, parsed);
            if rest.is_zero() || hurry {
                tokio::task::yield_now().await;
            } else {
                tokio::select! {
                    () = tokio::time::sleep(rest) => {}
                    () = session.screen_hurry.notified() => hurry = true,
                }
            }
        }
        if *session.done.borrow() {
            return;
        }
    }
}

/// The attachment sees every batch and the screen after it (see [`super::hooks`]).
fn feed_agent(session: &Session, screen: &super::screen::ScreenModel, bytes: &[u8], cursor: u64) {
    let Some(hooks) = session.hooks() else { return };
    let (rows, _) = screen.size();
    let mut visible = screen.screen_rows();
    visible.resize(usize::from(rows).max(visible.len()), String::new());
    let view = crate::agent::Screen { rows: &visible, cursor: screen.cursor(), alternate: screen.alternate_screen() };
    hooks.on_output(bytes, cursor, &view);
}

/// Writes queued input in order, keeping each write's boundaries for the capture. Ends when the
/// session is asked to close or finishes (dropping what is still queued: its child is going), or
/// when the PTY refuses writes.
pub(super) async fn write_input(
    session: Arc<Session>,
    writer: super::writer::PtyWriter,
    mut input: mpsc::Receiver<Bytes>,
) {
    let mut closing = session.closing.subscribe();
    loop {
        let data = tokio::select! {
            _ = closing.wait_for(|c| *c) => return,
            data = input.recv() => match data { Some(d) => d, None => return },
        };
        session.record(Direction::Input, &data);
        let written = tokio::select! {
            _ = closing.wait_for(|c| *c) => return,
            r = writer.write_all(&data) => r,
        };
        if let Err(e) = written {
            tracing::debug!(session = %session.id, error = %e, "PTY write failed; the writer stops");
            return;
        }
    }
}

/// Waits for the child to exit (or for a close request, which ends it), lets the reader drain what
/// the child wrote, then runs the one teardown and `on_close`.
pub(super) async fn supervise(
    session: Arc<Session>,
    mut reading: oneshot::Receiver<()>,
    kill: oneshot::Receiver<&'static str>,
    on_close: OnClose,
) {
    let child = &session.child;
    let (exit_code, reason) = tokio::select! {
        code = child.wait() => (code, proto::session::close_reason::PROCESS_EXIT),
        Ok(reason) = kill => {
            if let Some(pid) = rustix::process::Pid::from_raw(child.pid() as i32)
                && child.is_running()
            {
                // The child leads its own process group (setsid); hang the whole job up, as a closed
                // terminal would.
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::HUP);
            }
            child.signal(rustix::process::Signal::KILL);
            (child.wait().await, reason)
        }
    };
    // Output still in the kernel buffer reaches every reader before `Exit`. A grandchild that keeps
    // the PTY open is given a bounded grace, then cut off.
    if tokio::time::timeout(PTY_DRAIN_AFTER_EXIT, &mut reading).await.is_err() {
        tracing::debug!(session = %session.id, "output still open after the child exited; closing anyway");
        session.reader.stop();
        // The thread ends after the chunk it may be ingesting, so nothing follows `Exit`.
        let _ = reading.await;
    }
    // ...and the screen model, before the exit is recorded.
    let total = session.lock().ring.total();
    session.screen_hurry.notify_one();
    session.screen_wake.notify_one();
    let _ = session.screen_cursor.subscribe().wait_for(|c| *c >= total).await;
    session.finish(exit_code, reason);
    on_close(&session);
}
