//! The raw output ring: the last [`SESSION_RING_BYTES`] bytes a child wrote, addressed by a
//! monotonic byte cursor (`total_written` counts every byte ever written, evicted or not).

use std::collections::VecDeque;

use bytes::{Buf, Bytes};

/// Retained output, oldest first: large chunks kept as the reader made them (shared with the
/// broadcast, so a flood is not copied again into the ring), then small writes gathered into one
/// buffer, so a trickle of one-byte echoes does not become one allocation per byte.
#[derive(Debug)]
pub(crate) struct RawRing {
    chunks: VecDeque<Bytes>,
    /// Small writes after the last chunk, sealed into a chunk once `share_from` long.
    gathered: Vec<u8>,
    /// Bytes retained: the chunks' and the gathered ones; at most `capacity`.
    len: usize,
    capacity: usize,
    /// A write at least this long is kept as it is; a shorter one is copied into `gathered` (a
    /// trickle of short chunks would otherwise be one allocation, and one deque slot, each).
    share_from: usize,
    total: u64,
}

/// A read from the ring: `data` covers cursors `[start, start + data.len())`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RingRead {
    pub start: u64,
    pub data: Vec<u8>,
    /// Bytes between the requested cursor and `start` that were already evicted.
    pub missed: u64,
}

impl RawRing {
    pub(crate) fn new(capacity: usize, share_from: usize) -> Self {
        Self { chunks: VecDeque::new(), gathered: Vec::new(), len: 0, capacity, share_from, total: 0 }
    }

    /// Makes an empty ring continue a previous one: `data` is what it held, from cursor `oldest`
    /// on, so the cursors of the bytes that follow are unchanged.
    pub(crate) fn resume(&mut self, oldest: u64, data: &[u8]) {
        debug_assert_eq!(self.total, 0, "only a new ring resumes");
        self.total = oldest;
        if !data.is_empty() {
            self.push(&Bytes::copy_from_slice(data));
        }
    }

    /// The cursor after the newest byte.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The cursor of the oldest retained byte.
    pub(crate) fn oldest(&self) -> u64 {
        self.total - self.len as u64
    }

    pub(crate) fn push(&mut self, data: &Bytes) {
        self.total += data.len() as u64;
        let data = data.slice(data.len().saturating_sub(self.capacity)..);
        if data.len() >= self.share_from {
            self.seal_gathered();
            self.len += data.len();
            self.chunks.push_back(data);
        } else {
            self.len += data.len();
            self.gathered.extend_from_slice(&data);
            if self.gathered.len() >= self.share_from {
                self.seal_gathered();
            }
        }
        self.evict(self.len.saturating_sub(self.capacity));
    }

    fn seal_gathered(&mut self) {
        if !self.gathered.is_empty() {
            self.chunks.push_back(Bytes::from(std::mem::take(&mut self.gathered)));
        }
    }

    /// Drops the `count` oldest bytes.
    fn evict(&mut self, mut count: usize) {
        self.len -= count;
        while count > 0 {
            let Some(front) = self.chunks.front_mut() else {
                self.gathered.drain(..count);
                return;
            };
            if front.len() > count {
                front.advance(count);
                return;
            }
            count -= front.len();
            self.chunks.pop_front();
        }
    }

    /// Up to `limit` bytes from `from` (clamped to the oldest retained byte).
    pub(crate) fn read_from(&self, from: u64, limit: usize) -> RingRead {
        let oldest = self.oldest();
        let start = from.clamp(oldest, self.total);
        let mut skip = (start - oldest) as usize;
        let mut want = limit.min(self.len - skip);
        let mut data = Vec::with_capacity(want);
        for part in self.chunks.iter().map(|c| c.as_ref()).chain([self.gathered.as_slice()]) {
            if want == 0 {
                break;
            }
            if skip >= part.len() {
                skip -= part.len();
                continue;
            }
            let take = want.min(part.len() - skip);
            data.extend_from_slice(&part[skip..skip + take]);
            (skip, want) = (0, want - take);
        }
        RingRead { start, data, missed: start - from.min(start) }
    }

    /// The last `limit` bytes.
    pub(crate) fn tail(&self, limit: usize) -> RingRead {
        let from = self.total.saturating_sub(limit as u64);
        self.read_from(from, limit)
    }
}

/// How many bytes at the end of `data` form an incomplete (but so far valid) UTF-8 sequence, so a
/// reader can stop before them and never split a character across two reads.
pub(crate) fn incomplete_utf8_tail(data: &[u8]) -> usize {
    // Only the last three bytes can start an incomplete character: the first of them that begins a
    // valid but unfinished sequence is the tail (whatever comes before is not looked at).
    let from = data.len().saturating_sub(3);
    (from..data.len())
        .find(|&i| std::str::from_utf8(&data[i..]).is_err_and(|e| e.valid_up_to() == 0 && e.error_len().is_none()))
        .map_or(0, |i| data.len() - i)
}

/// How many leading bytes are UTF-8 continuation bytes (a read that starts mid-character skips them).
pub(crate) fn continuation_head(data: &[u8]) -> usize {
    data.iter().take(3).take_while(|b| (**b & 0xC0) == 0x80).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_survive_eviction() {
        let mut ring = RawRing::new(8, 4);
        ring.push(&Bytes::from_static(b"0123456789"));
        assert_eq!((ring.oldest(), ring.total()), (2, 10));
        let read = ring.read_from(0, 100);
        assert_eq!((read.start, read.missed, read.data.as_slice()), (2, 2, &b"23456789"[..]));
        ring.push(&Bytes::from_static(b"ab"));
        // Wrapped storage: reads spanning both halves of the deque.
        for from in 4..12 {
            let want: Vec<u8> = b"0123456789ab"[from as usize..].iter().copied().take(3).collect();
            assert_eq!(ring.read_from(from, 3).data, want, "from {from}");
        }
        assert_eq!(ring.read_from(9, 2).data, b"9a");
        assert_eq!(ring.tail(3).data, b"9ab");
        assert_eq!(ring.read_from(12, 5).data, b"");
    }

    /// Any mix of write sizes (tiny, around the share threshold, beyond the capacity) reads back
    /// exactly as a plain byte ring of the same capacity would.
    #[test]
    fn chunks_and_gathered_writes_read_as_a_plain_byte_ring() {
        // Mostly chunks; and a ring so small that everything lives (and is evicted) in `gathered`.
        for (capacity, share_from) in [(100usize, 10usize), (8, 100)] {
            model_check(capacity, share_from);
        }
    }

    fn model_check(capacity: usize, share_from: usize) {
        let mut ring = RawRing::new(capacity, share_from);
        let mut model: VecDeque<u8> = VecDeque::new();
        let mut total = 0u64;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |bound: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % bound
        };
        for step in 0..2000u64 {
            let len = match next(4) {
                0 => next(3),
                1 => next(12) + 5,
                2 => next(40),
                _ => next(250),
            } as usize;
            let bytes: Vec<u8> = (0..len).map(|i| (total as usize + i) as u8).collect();
            ring.push(&Bytes::from(bytes.clone()));
            total += len as u64;
            model.extend(&bytes);
            while model.len() > capacity {
                model.pop_front();
            }
            assert_eq!((ring.total(), ring.oldest()), (total, total - model.len() as u64), "step {step}");
            let from = total.saturating_sub(next(130));
            let limit = next(120) as usize;
            let skip = from.saturating_sub(total - model.len() as u64) as usize;
            let want: Vec<u8> = model.iter().skip(skip).take(limit).copied().collect();
            let read = ring.read_from(from, limit);
            assert_eq!(read.data, want, "step {step}: from {from}, limit {limit}");
            let oldest = total - model.len() as u64;
            assert_eq!((read.start, read.missed), (from.max(oldest), oldest.saturating_sub(from)), "step {step}");
        }
    }

    #[test]
    fn incomplete_characters_are_held_back() {
        let euro = "€".as_bytes();
        assert_eq!(incomplete_utf8_tail(&euro[..2]), 2);
        assert_eq!(incomplete_utf8_tail(b"ab"), 0);
        assert_eq!(incomplete_utf8_tail(&[b'a', 0xFF, b'b', euro[0]]), 1);
        let smile = "😀".as_bytes();
        assert_eq!(incomplete_utf8_tail(&[b"ab".as_slice(), &smile[..3]].concat()), 3);
        assert_eq!(incomplete_utf8_tail(&[b"ab".as_slice(), smile].concat()), 0);
        assert_eq!(incomplete_utf8_tail(&[euro, euro].concat()), 0);
        // A stray continuation byte or a lead byte followed by ASCII is not held: it is invalid.
        assert_eq!(incomplete_utf8_tail(&[b'a', 0x80]), 0);
        assert_eq!(incomplete_utf8_tail(&[euro[0], b'a']), 0);
        assert_eq!(incomplete_utf8_tail(b""), 0);
        assert_eq!(continuation_head(&euro[1..]), 2);
    }
}
