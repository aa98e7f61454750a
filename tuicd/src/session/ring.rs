//! The raw output ring: the last [`SESSION_RING_BYTES`] bytes a child wrote, addressed by a
//! monotonic byte cursor (`total_written` counts every byte ever written, evicted or not).

use std::collections::VecDeque;

#[derive(Debug)]
pub struct RawRing {
    bytes: VecDeque<u8>,
    capacity: usize,
    total: u64,
}

/// A read from the ring: `data` covers cursors `[start, start + data.len())`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingRead {
    pub start: u64,
    pub data: Vec<u8>,
    /// Bytes between the requested cursor and `start` that were already evicted.
    pub missed: u64,
}

impl RawRing {
    pub fn new(capacity: usize) -> Self {
        Self { bytes: VecDeque::new(), capacity, total: 0 }
    }

    /// The cursor after the newest byte.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The cursor of the oldest retained byte.
    pub fn oldest(&self) -> u64 {
        self.total - self.bytes.len() as u64
    }

    pub fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        let data = if data.len() > self.capacity { &data[data.len() - self.capacity..] } else { data };
        let overflow = (self.bytes.len() + data.len()).saturating_sub(self.capacity);
        self.bytes.drain(..overflow);
        self.bytes.extend(data);
    }

    /// Up to `limit` bytes from `from` (clamped to the oldest retained byte).
    pub fn read_from(&self, from: u64, limit: usize) -> RingRead {
        let oldest = self.oldest();
        let start = from.clamp(oldest, self.total);
        let offset = (start - oldest) as usize;
        let end = (offset + limit).min(self.bytes.len());
        // Two memcpys (the ring's two halves), not a byte-by-byte iterator: a flood reads it a lot.
        let (front, back) = self.bytes.as_slices();
        let mut data = Vec::with_capacity(end - offset);
        let split = front.len();
        data.extend_from_slice(&front[offset.min(split)..end.min(split)]);
        data.extend_from_slice(&back[offset.saturating_sub(split)..end.saturating_sub(split)]);
        RingRead { start, data, missed: start - from.min(start) }
    }

    /// The last `limit` bytes.
    pub fn tail(&self, limit: usize) -> RingRead {
        let from = self.total.saturating_sub(limit as u64);
        self.read_from(from, limit)
    }
}

/// How many bytes at the end of `data` form an incomplete (but so far valid) UTF-8 sequence, so a
/// reader can stop before them and never split a character across two reads.
pub fn incomplete_utf8_tail(data: &[u8]) -> usize {
    // Only the last three bytes can start an incomplete character: the first of them that begins a
    // valid but unfinished sequence is the tail (whatever comes before is not looked at).
    let from = data.len().saturating_sub(3);
    (from..data.len())
        .find(|&i| std::str::from_utf8(&data[i..]).is_err_and(|e| e.valid_up_to() == 0 && e.error_len().is_none()))
        .map_or(0, |i| data.len() - i)
}

/// How many leading bytes are UTF-8 continuation bytes (a read that starts mid-character skips them).
pub fn continuation_head(data: &[u8]) -> usize {
    data.iter().take(3).take_while(|b| (**b & 0xC0) == 0x80).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_survive_eviction() {
        let mut ring = RawRing::new(8);
        ring.push(b"0123456789");
        assert_eq!((ring.oldest(), ring.total()), (2, 10));
        let read = ring.read_from(0, 100);
        assert_eq!((read.start, read.missed, read.data.as_slice()), (2, 2, &b"23456789"[..]));
        ring.push(b"ab");
        // Wrapped storage: reads spanning both halves of the deque.
        for from in 4..12 {
            let want: Vec<u8> = b"0123456789ab"[from as usize..].iter().copied().take(3).collect();
            assert_eq!(ring.read_from(from, 3).data, want, "from {from}");
        }
        assert_eq!(ring.read_from(9, 2).data, b"9a");
        assert_eq!(ring.tail(3).data, b"9ab");
        assert_eq!(ring.read_from(12, 5).data, b"");
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
