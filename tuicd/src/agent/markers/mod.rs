//! Explicit markers in the raw PTY byte stream, found however the stream is split across reads.
//!
//! [`MarkerParser::feed`] runs a small VT state machine over each chunk: OSC strings are collected
//! and dispatched (`osc.rs`), other escape sequences are skipped, and printable text is assembled
//! into lines that are checked for the plain-text markers ([`text`]). Cursor-positioning
//! sequences end a line as a newline would, because full-screen agents draw rows with them.
//! All buffers are bounded ([`MARKER_LINE_MAX_BYTES`], [`MARKER_OSC_MAX_BYTES`]): an over-long
//! line or OSC is dropped up to its end, never grown.

mod osc;
pub(crate) mod text;

pub(crate) use osc::{Announced, HookState, Marker};
use text::{SuggestParse, parse_intent, parse_suggest};

use crate::limits::{MARKER_LINE_MAX_BYTES, MARKER_OSC_MAX_BYTES, SUGGEST_WRAP_MAX_BYTES, SUGGEST_WRAP_MAX_LINES};

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Ground,
    Escape,
    Csi,
    Osc,
    OscEscape,
    /// DCS, SOS, PM, APC: strings nobody here needs, skipped to their terminator.
    Ignored,
    IgnoredEscape,
    /// The one byte after `ESC (` and friends (charset designation).
    Designate,
}

/// Streaming marker finder; one per session.
#[derive(Debug)]
pub(crate) struct MarkerParser {
    mode: Mode,
    line: Vec<u8>,
    line_overflow: bool,
    after_cr: bool,
    osc: Vec<u8>,
    osc_overflow: bool,
    /// A `suggest: [` line still waiting for its `]`: the joined text and the lines it spans.
    wrap: Option<(String, usize)>,
}

/// What one chunk held besides its markers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FeedStats {
    /// Printable bytes (text the user would see), excluding escape sequences and controls.
    pub printable: usize,
}

impl Default for MarkerParser {
    fn default() -> Self {
        Self::new()
    }
}

impl MarkerParser {
    pub(crate) fn new() -> Self {
        Self {
            mode: Mode::Ground,
            line: Vec::with_capacity(256),
            line_overflow: false,
            after_cr: false,
            osc: Vec::new(),
            osc_overflow: false,
            wrap: None,
        }
    }

    /// Scans one chunk, appending the markers it completes to `out` in stream order.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<Marker>) -> FeedStats {
        let mut stats = FeedStats::default();
        let mut i = 0;
        while i < bytes.len() {
            if self.mode == Mode::Ground {
                // Fast path: a run of printable text goes into the line in one copy.
                let run = bytes[i..].iter().position(|&b| b < 0x20 || b == 0x7f).unwrap_or(bytes.len() - i);
                if run > 0 {
                    self.after_cr = false;
                    stats.printable += run;
                    let room = MARKER_LINE_MAX_BYTES - self.line.len();
                    self.line.extend_from_slice(&bytes[i..i + run.min(room)]);
                    self.line_overflow |= run > room;
                    i += run;
                    continue;
                }
            }
            self.step(bytes[i], out, &mut stats);
            i += 1;
        }
        stats
    }

    fn step(&mut self, byte: u8, out: &mut Vec<Marker>, stats: &mut FeedStats) {
        match self.mode {
            Mode::Ground => self.ground(byte, out, stats),
            Mode::Escape => self.escape(byte, out),
            Mode::Csi => {
                if (0x40..=0x7e).contains(&byte) {
                    self.mode = Mode::Ground;
                    match byte {
                        // Cursor moves to another row or column 1: what follows is not this line's continuation.
                        b'A' | b'B' | b'E' | b'F' | b'G' | b'H' | b'f' | b'd' | b'J' => self.end_line(out),
                        b'C' => self.push_text(b' '),
                        _ => {}
                    }
                } else if byte == ESC {
                    self.mode = Mode::Escape;
                } else if byte == 0x18 || byte == 0x1a {
                    self.mode = Mode::Ground;
                }
            }
            Mode::Osc => match byte {
                BEL => self.finish_osc(out),
                ESC => self.mode = Mode::OscEscape,
                0x18 | 0x1a => self.mode = Mode::Ground,
                _ if self.osc.len() < MARKER_OSC_MAX_BYTES => self.osc.push(byte),
                _ => self.osc_overflow = true,
            },
            Mode::OscEscape => {
                // ST is `ESC \`; any other byte after ESC also ends the string and starts a new
                // sequence, as terminals do.
                self.finish_osc(out);
                if byte != b'\\' {
                    self.escape(byte, out);
                }
            }
            Mode::Ignored => match byte {
                BEL | 0x18 | 0x1a => self.mode = Mode::Ground,
                ESC => self.mode = Mode::IgnoredEscape,
                _ => {}
            },
            Mode::IgnoredEscape => self.mode = if byte == b'\\' { Mode::Ground } else { Mode::Ignored },
            Mode::Designate => self.mode = Mode::Ground,
        }
    }

    fn ground(&mut self, byte: u8, out: &mut Vec<Marker>, stats: &mut FeedStats) {
        let after_cr = std::mem::take(&mut self.after_cr);
        match byte {
            ESC => self.mode = Mode::Escape,
            b'\n' if after_cr => {}
            b'\n' => self.end_line(out),
            b'\r' => {
                self.end_line(out);
                self.after_cr = true;
            }
            0x08 => {
                // Backspace: drop the last character, continuation bytes included.
                while let Some(last) = self.line.pop() {
                    if last & 0xc0 != 0x80 {
                        break;
                    }
                }
            }
            b'\t' => self.push_text(b' '),
            0x00..=0x1f | 0x7f => {}
            _ => {
                stats.printable += 1;
                self.push_text(byte);
            }
        }
    }

    fn escape(&mut self, byte: u8, out: &mut Vec<Marker>) {
        self.mode = match byte {
            b']' => {
                self.osc.clear();
                self.osc_overflow = false;
                Mode::Osc
            }
            b'[' => Mode::Csi,
            b'P' | b'X' | b'^' | b'_' => Mode::Ignored,
            b'(' | b')' | b'*' | b'+' | b'-' | b'.' | b'/' | b'#' | b'%' | b' ' => Mode::Designate,
            ESC => Mode::Escape,
            b'D' | b'E' | b'M' => {
                self.end_line(out);
                Mode::Ground
            }
            _ => Mode::Ground,
        };
    }

    fn push_text(&mut self, byte: u8) {
        if self.line.len() < MARKER_LINE_MAX_BYTES {
            self.line.push(byte);
        } else {
            self.line_overflow = true;
        }
    }

    fn finish_osc(&mut self, out: &mut Vec<Marker>) {
        self.mode = Mode::Ground;
        if !self.osc_overflow {
            osc::dispatch(&self.osc, out);
        }
        self.osc.clear();
        self.osc_overflow = false;
    }

    fn end_line(&mut self, out: &mut Vec<Marker>) {
        if self.line.is_empty() && !self.line_overflow {
            return;
        }
        if !std::mem::take(&mut self.line_overflow) {
            if self.wrap.is_some() || may_hold_marker(&self.line) {
                let line = String::from_utf8_lossy(&self.line).into_owned();
                self.check_line(&line, out);
            }
        } else {
            self.wrap = None;
        }
        self.line.clear();
    }

    fn check_line(&mut self, line: &str, out: &mut Vec<Marker>) {
        if let Some((joined, lines)) = self.wrap.take() {
            let joined = format!("{joined} {}", line.trim());
            match parse_suggest(&joined) {
                SuggestParse::Complete(items) => return out.push(Marker::TextSuggest(items)),
                SuggestParse::Open if lines < SUGGEST_WRAP_MAX_LINES && joined.len() <= SUGGEST_WRAP_MAX_BYTES => {
                    self.wrap = Some((joined, lines + 1));
                    return;
                }
                // Not a continuation after all: the line stands on its own.
                _ => {}
            }
        }
        match parse_suggest(line) {
            SuggestParse::Complete(items) => out.push(Marker::TextSuggest(items)),
            SuggestParse::Open => self.wrap = Some((line.trim_end().to_owned(), 0)),
            SuggestParse::No => {
                if let Some(intent) = parse_intent(line) {
                    out.push(Marker::TextIntent(intent));
                }
            }
        }
    }
}

/// A cheap test that spares most lines the UTF-8 conversion: a marker keyword starts within the
/// first bytes after leading spaces (only a border and one bullet may precede it).
fn may_hold_marker(line: &[u8]) -> bool {
    const WINDOW: usize = 32;
    let start = line.iter().position(|b| *b != b' ').unwrap_or(line.len());
    let head = &line[start..line.len().min(start + WINDOW)];
    head.windows(7).any(|w| w == b"intent:" || w == b"suggest")
}

#[cfg(test)]
mod tests;
