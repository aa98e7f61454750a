//! Output as the lines a watcher pattern sees: raw PTY bytes split at `\n`, a line kept across
//! batches until its end arrives, escape sequences and control bytes removed, a carriage return
//! keeping only what was written after it (as the terminal shows it).

use crate::limits::WATCHER_LINE_MAX_BYTES;

/// The unfinished line of one session between batches; bounded by [`WATCHER_LINE_MAX_BYTES`].
#[derive(Debug, Default)]
pub(crate) struct LineBuffer {
    partial: Vec<u8>,
}

impl LineBuffer {
    /// The lines `bytes` completes, as text. A line longer than the bound keeps its first bytes.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            self.push(&rest[..end]);
            lines.push(clean(&std::mem::take(&mut self.partial)));
            rest = &rest[end + 1..];
        }
        self.push(rest);
        lines
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = WATCHER_LINE_MAX_BYTES.saturating_sub(self.partial.len());
        self.partial.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// One raw line as text: CSI, OSC and other escape sequences and control bytes removed; after a
/// carriage return only the text that followed it.
pub(crate) fn clean(raw: &[u8]) -> String {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let raw = match raw.iter().rposition(|&b| b == b'\r') {
        Some(cr) if cr + 1 < raw.len() => &raw[cr + 1..],
        _ => raw,
    };
    let mut text = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b != 0x1b {
            if (b >= 0x20 && b != 0x7f) || b == b'\t' {
                text.push(b);
            }
            i += 1;
            continue;
        }
        i += 1;
        match raw.get(i) {
            // CSI: parameters and intermediates, then one final byte in 0x40..=0x7e.
            Some(b'[') => {
                i += 1;
                while i < raw.len() && !(0x40..=0x7e).contains(&raw[i]) {
                    i += 1;
                }
                i += 1;
            }
            // OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \).
            Some(b']' | b'P' | b'X' | b'^' | b'_') => {
                i += 1;
                while i < raw.len() && raw[i] != 0x07 && !(raw[i] == 0x1b && raw.get(i + 1) == Some(&b'\\')) {
                    i += 1;
                }
                i += if raw.get(i) == Some(&0x1b) { 2 } else { 1 };
            }
            // Intermediates, then one final byte (charset selection, keypad modes, ...).
            Some(_) => {
                while i < raw.len() && (0x20..=0x2f).contains(&raw[i]) {
                    i += 1;
                }
                i += 1;
            }
            None => {}
        }
    }
    String::from_utf8_lossy(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_are_removed_and_a_carriage_return_keeps_what_followed() {
        assert_eq!(clean(b"\x1b[1;31merror\x1b[0m: E0425\r"), "error: E0425");
        assert_eq!(clean(b"\x1b]7770;state=busy\x07build \x1b]0;title\x1b\\ok"), "build ok");
        assert_eq!(clean(b"10%\r20%\r100% done"), "100% done");
        assert_eq!(clean(b"a\x08b\tc\x1b(Bd"), "ab\tcd");
        assert_eq!(clean("caf\u{e9} \u{2714}".as_bytes()), "caf\u{e9} \u{2714}");
    }

    #[test]
    fn a_line_split_across_batches_is_matched_whole_and_bounded() {
        let mut buffer = LineBuffer::default();
        assert!(buffer.feed(b"compiling ").is_empty());
        assert_eq!(buffer.feed(b"crate\r\nnext\npart"), ["compiling crate", "next"]);
        assert_eq!(buffer.feed(b"ial\n"), ["partial"]);
        let long = vec![b'x'; WATCHER_LINE_MAX_BYTES * 2];
        assert!(buffer.feed(&long).is_empty());
        assert_eq!(buffer.feed(b"tail\n")[0].len(), WATCHER_LINE_MAX_BYTES);
    }
}
