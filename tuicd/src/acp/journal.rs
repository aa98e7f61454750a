//! One connection's ordered frames: a bounded journal every stream reads from its own cursor.
//!
//! A frame gets the next sequence number as it is appended and is never changed. The journal keeps
//! the newest [`ACP_JOURNAL_FRAMES`] frames and at most [`ACP_JOURNAL_BYTES`] of them; a reader
//! whose cursor falls behind what is kept learns it (a gap), instead of skipping silently. Readers
//! wait on a `watch` of the newest sequence, so there is no second live channel to lag behind:
//! whatever a reader has not yet sent is in the journal or reported as a gap.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::watch;

use crate::limits::{ACP_JOURNAL_BYTES, ACP_JOURNAL_FRAMES};
use crate::lock::Recover;

/// One frame as the stream sends it: its JSON text, serialised once.
#[derive(Debug)]
pub(crate) struct Frame {
    pub seq: u64,
    pub text: Arc<str>,
}

#[derive(Debug)]
pub(crate) struct Journal {
    inner: Mutex<Inner>,
    newest: watch::Sender<u64>,
}

#[derive(Debug)]
struct Inner {
    frames: VecDeque<Arc<Frame>>,
    bytes: usize,
    next_seq: u64,
}

/// What a reader asking for the frames after a sequence gets.
#[derive(Debug, PartialEq)]
pub(crate) enum Since {
    Frames(Vec<Arc<Frame>>),
    /// The journal no longer has frame `after + 1`; it starts at `first`.
    Dropped {
        first: u64,
    },
    /// `after` is newer than the newest frame.
    Ahead {
        newest: u64,
    },
}

impl PartialEq for Frame {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}

impl Default for Journal {
    fn default() -> Self {
        Self::new()
    }
}

impl Journal {
    pub(crate) fn new() -> Self {
        let (newest, _) = watch::channel(0);
        Self { inner: Mutex::new(Inner { frames: VecDeque::new(), bytes: 0, next_seq: 1 }), newest }
    }

    /// Appends a frame of `kind` for `generation` with the fields of `body` (an object), and
    /// returns its sequence.
    pub(crate) fn append(&self, generation: u64, kind: &str, body: Value) -> u64 {
        let mut fields = match body {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                let mut map = Map::new();
                map.insert("value".into(), other);
                map
            }
        };
        let mut inner = self.inner.locked();
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let mut frame = Map::new();
        frame.insert("seq".into(), json!(seq));
        frame.insert("generation".into(), json!(generation));
        frame.insert("time_ms".into(), json!(now_ms()));
        frame.insert("kind".into(), json!(kind));
        frame.append(&mut fields);
        let text: Arc<str> = Value::Object(frame).to_string().into();
        inner.bytes += text.len();
        inner.frames.push_back(Arc::new(Frame { seq, text }));
        while inner.frames.len() > ACP_JOURNAL_FRAMES || (inner.bytes > ACP_JOURNAL_BYTES && inner.frames.len() > 1) {
            if let Some(old) = inner.frames.pop_front() {
                inner.bytes -= old.text.len();
            }
        }
        // Sent under the lock, so the watch never runs ahead of what the journal holds.
        self.newest.send_replace(seq);
        seq
    }

    /// The newest sequence (0 before the first frame) and the oldest kept (newest + 1 when empty).
    pub(crate) fn bounds(&self) -> (u64, u64) {
        let inner = self.inner.locked();
        let newest = inner.next_seq - 1;
        (newest, inner.frames.front().map_or(newest + 1, |f| f.seq))
    }

    /// The kept frames after `after`, at most `limit` of them.
    pub(crate) fn since(&self, after: u64, limit: usize) -> Since {
        let inner = self.inner.locked();
        let newest = inner.next_seq - 1;
        if after > newest {
            return Since::Ahead { newest };
        }
        let first = inner.frames.front().map_or(newest + 1, |f| f.seq);
        if after + 1 < first {
            return Since::Dropped { first };
        }
        let skip = (after + 1 - first) as usize;
        Since::Frames(inner.frames.iter().skip(skip).take(limit).cloned().collect())
    }

    /// Resolves once the newest sequence is past `after`.
    pub(crate) async fn wait_past(&self, after: u64) {
        let mut newest = self.newest.subscribe();
        let _ = newest.wait_for(|newest| *newest > after).await;
    }
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seqs(since: Since) -> Vec<u64> {
        match since {
            Since::Frames(frames) => frames.iter().map(|f| f.seq).collect(),
            other => panic!("expected frames, got {other:?}"),
        }
    }

    #[test]
    fn frames_come_back_in_order_from_any_cursor() {
        let journal = Journal::new();
        for i in 0..5 {
            journal.append(1, "agent", json!({"message": {"n": i}}));
        }
        assert_eq!(seqs(journal.since(0, 100)), vec![1, 2, 3, 4, 5]);
        assert_eq!(seqs(journal.since(3, 100)), vec![4, 5]);
        assert_eq!(seqs(journal.since(5, 100)), Vec::<u64>::new());
        assert_eq!(seqs(journal.since(1, 2)), vec![2, 3]);
        assert_eq!(journal.since(6, 100), Since::Ahead { newest: 5 });
        let frame: Value = match journal.since(0, 1) {
            Since::Frames(f) => serde_json::from_str(&f[0].text).unwrap(),
            _ => unreachable!(),
        };
        assert_eq!(frame["seq"], 1);
        assert_eq!(frame["generation"], 1);
        assert_eq!(frame["kind"], "agent");
        assert_eq!(frame["message"]["n"], 0);
    }

    #[test]
    fn a_cursor_behind_what_is_kept_is_told_where_the_journal_starts() {
        let journal = Journal::new();
        for _ in 0..(ACP_JOURNAL_FRAMES + 10) {
            journal.append(1, "agent", json!({}));
        }
        let (newest, first) = journal.bounds();
        assert_eq!(newest, ACP_JOURNAL_FRAMES as u64 + 10);
        assert_eq!(first, 11);
        assert_eq!(journal.since(9, 10), Since::Dropped { first: 11 });
        assert_eq!(seqs(journal.since(10, 1)), vec![11]);
    }

    #[test]
    fn the_byte_bound_drops_the_oldest_but_keeps_the_newest_frame() {
        let journal = Journal::new();
        let big = "x".repeat(ACP_JOURNAL_BYTES / 3);
        for _ in 0..4 {
            journal.append(1, "agent", json!({"message": big}));
        }
        let (newest, first) = journal.bounds();
        assert_eq!(newest, 4);
        assert_eq!(first, 3, "two frames of a third of the bound each fit, the third would not");
        let huge = "y".repeat(ACP_JOURNAL_BYTES + 1);
        journal.append(1, "agent", json!({"message": huge}));
        assert_eq!(journal.bounds(), (5, 5));
    }

    #[tokio::test]
    async fn a_waiting_reader_wakes_on_the_next_frame() {
        let journal = Arc::new(Journal::new());
        let waiter = tokio::spawn({
            let journal = journal.clone();
            async move { journal.wait_past(0).await }
        });
        journal.append(1, "state", json!({"state": "ready"}));
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter).await.unwrap().unwrap();
    }
}
