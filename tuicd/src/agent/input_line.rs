//! [`InputLineBuffer`]: what has been typed into the agent's composer, reconstructed from the
//! bytes every writer (REST, MCP, WebSocket, injection) sends to the PTY.
//!
//! It is the writers' view, not the application's: keys whose effect cannot be known from bytes
//! (arrows, history, Alt-keys, Escape on a non-empty line) make the state `Unknown` until a
//! Ctrl-U, Ctrl-C or Enter resets it. Submit requires `Empty`.

use super::event::ComposerState;
use crate::limits::INPUT_LINE_MAX_BYTES;

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

#[derive(Debug, Default)]
pub(crate) struct InputLineBuffer {
    text: String,
    unknown: bool,
    /// Inside a bracketed paste: newlines are text, not Enter.
    pasting: bool,
    /// The text outgrew [`INPUT_LINE_MAX_BYTES`]; it is known non-empty, the tail is lost.
    truncated: bool,
    /// Bytes of an escape sequence split across writes.
    pending: Vec<u8>,
}

/// A line the composer submitted with Enter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Submitted {
    pub content: String,
    /// The content may be incomplete or wrong (edited with unknown keys, or truncated).
    pub uncertain: bool,
}

impl InputLineBuffer {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn state(&self) -> ComposerState {
        if self.unknown {
            ComposerState::Unknown
        } else if self.text.is_empty() && !self.truncated {
            ComposerState::Empty
        } else {
            ComposerState::Partial
        }
    }

    /// The tracked text (possibly truncated).
    #[cfg(test)]
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Tracks one write; returns the lines it submitted, in order.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<Submitted> {
        let mut submitted = Vec::new();
        let joined;
        let bytes = if self.pending.is_empty() {
            bytes
        } else {
            joined = [std::mem::take(&mut self.pending).as_slice(), bytes].concat();
            &joined[..]
        };
        let mut i = 0;
        let mut plain = Vec::new();
        while i < bytes.len() {
            let byte = bytes[i];
            if byte == 0x1b {
                self.flush(&mut plain);
                match escape_len(&bytes[i..]) {
                    None => {
                        self.pending = bytes[i..].to_vec();
                        // A lone trailing ESC is the Escape key itself when the writer sent it alone.
                        if bytes.len() - i == 1 && i == 0 {
                            self.pending.clear();
                            self.opaque_key();
                        }
                        return submitted;
                    }
                    Some(len) => {
                        self.escape(&bytes[i..i + len]);
                        i += len;
                        continue;
                    }
                }
            }
            i += 1;
            if self.pasting {
                plain.push(byte);
                continue;
            }
            match byte {
                b'\r' | b'\n' => {
                    self.flush(&mut plain);
                    submitted.extend(self.submit());
                }
                0x7f | 0x08 => {
                    self.flush(&mut plain);
                    self.text.pop();
                }
                0x15 | 0x03 => {
                    self.flush(&mut plain);
                    self.clear();
                }
                0x17 => {
                    self.flush(&mut plain);
                    let trimmed = self.text.trim_end().len();
                    // Cut after the whole whitespace character: some (U+0085, U+3000) are
                    // several bytes long.
                    let cut = self.text[..trimmed]
                        .char_indices()
                        .rfind(|(_, c)| c.is_whitespace())
                        .map_or(0, |(at, c)| at + c.len_utf8());
                    self.text.truncate(cut);
                }
                0x00..=0x1f => {
                    // Other control keys (Tab completion, Ctrl-A, Ctrl-E, Ctrl-K, ...) move or
                    // edit unknowably.
                    self.flush(&mut plain);
                    self.opaque_key();
                }
                _ => plain.push(byte),
            }
        }
        self.flush(&mut plain);
        submitted
    }

    fn flush(&mut self, plain: &mut Vec<u8>) {
        if plain.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(plain);
        let room = INPUT_LINE_MAX_BYTES.saturating_sub(self.text.len());
        if text.len() <= room {
            self.text.push_str(&text);
        } else {
            let mut at = room;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            self.text.push_str(&text[..at]);
            self.truncated = true;
        }
        plain.clear();
    }

    fn escape(&mut self, sequence: &[u8]) {
        if sequence == PASTE_START {
            self.pasting = true;
        } else if sequence == PASTE_END {
            self.pasting = false;
        } else {
            self.opaque_key();
        }
    }

    /// A key with an effect bytes cannot tell. On an empty, certain composer most such keys
    /// (arrows, Escape) leave it empty; history recall (Up/Down, Ctrl-P/N) could fill it.
    fn opaque_key(&mut self) {
        if !self.text.is_empty() || self.truncated {
            self.unknown = true;
        }
    }

    fn submit(&mut self) -> Option<Submitted> {
        let uncertain = self.unknown || self.truncated;
        let content = std::mem::take(&mut self.text);
        self.clear();
        (!content.trim().is_empty() || uncertain).then_some(Submitted { content, uncertain })
    }

    fn clear(&mut self) {
        self.text.clear();
        self.unknown = false;
        self.truncated = false;
    }
}

/// Length of the escape sequence at the start of `bytes`, or `None` if it is cut off.
fn escape_len(bytes: &[u8]) -> Option<usize> {
    match bytes.get(1)? {
        b'[' | b'O' => {
            let end = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b))?;
            // SS3 is a single byte after `O`.
            Some(if bytes[1] == b'O' { 3 } else { end + 3 })
        }
        _ => Some(2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_backspace_and_enter_submit_the_edited_line() {
        let mut buffer = InputLineBuffer::new();
        assert!(buffer.feed(b"fix the tesz\x7ft").is_empty());
        assert_eq!(buffer.state(), ComposerState::Partial);
        let submitted = buffer.feed(b"s\r");
        assert_eq!(submitted, vec![Submitted { content: "fix the tests".into(), uncertain: false }]);
        assert_eq!(buffer.state(), ComposerState::Empty);
    }

    #[test]
    fn ctrl_u_and_ctrl_w_clear_what_they_would_clear() {
        let mut buffer = InputLineBuffer::new();
        buffer.feed(b"hello big world");
        buffer.feed(b"\x17");
        assert_eq!(buffer.text(), "hello big ");
        buffer.feed(b"\x15");
        assert_eq!(buffer.state(), ComposerState::Empty);
    }

    #[test]
    fn ctrl_w_after_a_multibyte_space_keeps_the_text_whole() {
        // Found by the input_line fuzz target: cutting one byte past a two-byte U+0085 panicked.
        let mut buffer = InputLineBuffer::new();
        buffer.feed("one\u{85}two\u{3000}three".as_bytes());
        buffer.feed(b"\x17");
        assert_eq!(buffer.text(), "one\u{85}two\u{3000}");
        buffer.feed(b"\x17");
        assert_eq!(buffer.text(), "one\u{85}");
        tuicd_fuzz_input(b"\x17\x17\xc2\x85\x00\x00\x00\x90\xa1\xc2\x90\x17h");
    }

    fn tuicd_fuzz_input(data: &[u8]) {
        crate::fuzzing::input_line(data);
    }

    #[test]
    fn a_bracketed_paste_keeps_its_newlines_until_enter() {
        let mut buffer = InputLineBuffer::new();
        assert!(buffer.feed(b"\x1b[200~line one\nline two\x1b[201~").is_empty());
        assert_eq!(buffer.text(), "line one\nline two");
        assert_eq!(buffer.feed(b"\r")[0].content, "line one\nline two");
    }

    #[test]
    fn a_paste_marker_split_across_writes_is_still_a_paste() {
        let mut buffer = InputLineBuffer::new();
        buffer.feed(b"\x1b[20");
        buffer.feed(b"0~a\nb\x1b[201~");
        assert_eq!(buffer.text(), "a\nb");
        assert_eq!(buffer.state(), ComposerState::Partial);
    }

    #[test]
    fn arrow_keys_on_a_partial_line_make_it_unknown_until_cleared() {
        let mut buffer = InputLineBuffer::new();
        buffer.feed(b"\x1b[A");
        assert_eq!(buffer.state(), ComposerState::Empty, "arrows on an empty composer change nothing we track");
        buffer.feed(b"abc\x1b[D");
        assert_eq!(buffer.state(), ComposerState::Unknown);
        buffer.feed(b"\x03");
        assert_eq!(buffer.state(), ComposerState::Empty);
        buffer.feed(b"abc");
        buffer.feed(b"\x1b");
        assert_eq!(buffer.state(), ComposerState::Unknown, "Escape alone on a partial line");
        buffer.feed(b"\x15src/ma\t");
        assert_eq!(buffer.state(), ComposerState::Unknown, "Tab completion");
    }

    #[test]
    fn an_empty_enter_submits_nothing_and_oversized_input_stays_non_empty() {
        let mut buffer = InputLineBuffer::new();
        assert!(buffer.feed(b"\r").is_empty());
        buffer.feed(&vec![b'x'; INPUT_LINE_MAX_BYTES + 10]);
        assert_eq!(buffer.text().len(), INPUT_LINE_MAX_BYTES);
        assert_eq!(buffer.state(), ComposerState::Partial);
        assert!(buffer.feed(b"\r")[0].uncertain);
    }
}
