//! When the ring's bytes were written: marks of (cursor after a chunk, time since the session
//! started), so a recording of what the ring holds (`GET /sessions/:id/recording.cast`) keeps
//! real timings. Chunks closer together than [`TIMELINE_RESOLUTION`] share one mark, and the
//! oldest marks go first once [`TIMELINE_MARKS`] are kept, so a trickle of echoes costs no more
//! than a flood.

use std::collections::VecDeque;
use std::time::Duration;

use crate::limits::{TIMELINE_MARKS, TIMELINE_RESOLUTION};

#[derive(Debug, Default)]
pub(crate) struct Timeline {
    /// (cursor after the chunk, time since the session started), both ascending.
    marks: VecDeque<(u64, Duration)>,
}

impl Timeline {
    /// Records that output up to cursor `end` was written at `at`.
    pub(crate) fn mark(&mut self, end: u64, at: Duration) {
        if let Some(last) = self.marks.back_mut()
            && at.saturating_sub(last.1) < TIMELINE_RESOLUTION
        {
            last.0 = end;
            return;
        }
        if self.marks.len() == TIMELINE_MARKS {
            self.marks.pop_front();
        }
        self.marks.push_back((end, at));
    }

    /// The output `[start, start + data.len())` cut where it was written, each piece with its time;
    /// bytes older than the oldest mark take its time.
    pub(crate) fn split<'a>(&self, start: u64, data: &'a [u8]) -> Vec<(Duration, &'a [u8])> {
        let mut pieces = Vec::new();
        let mut at = 0usize;
        let end = start + data.len() as u64;
        for &(mark, time) in &self.marks {
            if mark <= start + at as u64 {
                continue;
            }
            let upto = (mark.min(end) - start) as usize;
            pieces.push((time, &data[at..upto]));
            at = upto;
            if at == data.len() {
                break;
            }
        }
        if at < data.len() {
            let time = self.marks.back().map_or(Duration::ZERO, |m| m.1);
            pieces.push((time, &data[at..]));
        }
        pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn output_is_cut_where_it_was_written_and_close_chunks_share_a_mark() {
        let mut timeline = Timeline::default();
        timeline.mark(3, 100 * MS);
        timeline.mark(5, 100 * MS + TIMELINE_RESOLUTION / 2);
        timeline.mark(9, 900 * MS);
        let pieces = timeline.split(0, b"abcdefghi");
        assert_eq!(pieces, vec![(100 * MS, b"abcde".as_slice()), (900 * MS, b"fghi".as_slice())]);
        assert_eq!(timeline.split(4, b"efghi"), vec![(100 * MS, b"e".as_slice()), (900 * MS, b"fghi".as_slice())]);
        assert_eq!(timeline.split(9, b""), vec![]);
    }

    #[test]
    fn marks_are_bounded() {
        let mut timeline = Timeline::default();
        for i in 0..(TIMELINE_MARKS as u64 + 10) {
            timeline.mark(i + 1, Duration::from_secs(i));
        }
        assert_eq!(timeline.marks.len(), TIMELINE_MARKS);
        assert_eq!(timeline.split(0, b"x")[0].0, Duration::from_secs(10), "evicted bytes take the oldest mark's time");
    }
}
