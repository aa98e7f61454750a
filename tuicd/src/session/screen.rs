//! The terminal model of one session: a vt100 screen (rows, cursor, alternate screen) plus the log,
//! the rows that scrolled off the main screen as ANSI-stripped text lines with a monotonic line
//! cursor. Alternate-screen rows (full-screen programs) never enter the log.

use std::collections::VecDeque;
use std::num::NonZeroU16;

use proto::session::ParsedEvent;
use vt100::capture::{BasicFormattedCaptureState, RowContents, basic_formatted_to_plain};

pub struct ScreenModel {
    parser: vt100::Parser<LogSink>,
}

impl std::fmt::Debug for ScreenModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScreenModel").field("size", &self.size()).finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct LogSink {
    lines: VecDeque<Box<str>>,
    capacity: usize,
    total: u64,
    scratch: String,
    events: Vec<ParsedEvent>,
}

impl vt100::Callbacks for LogSink {
    fn on_scroll(&mut self, contents: RowContents<'_>, alternate_screen: bool) {
        if alternate_screen {
            return;
        }
        self.scratch.clear();
        let _ = contents.write_formatted_basic(&mut self.scratch, &mut BasicFormattedCaptureState::new());
        let plain: String = basic_formatted_to_plain(&self.scratch).collect();
        if self.lines.len() == self.capacity {
            self.lines.pop_front();
        }
        self.lines.push_back(plain.trim_end().into());
        self.total += 1;
    }

    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.events.push(ParsedEvent::Title { title: String::from_utf8_lossy(title).into_owned() });
    }

    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.events.push(ParsedEvent::Bell);
    }
}

/// Log lines from a line cursor: `lines` covers `[start, start + lines.len())`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRead {
    pub start: u64,
    pub lines: Vec<String>,
}

impl ScreenModel {
    pub fn new(rows: u16, cols: u16, log_capacity: usize) -> Self {
        let sink = LogSink {
            lines: VecDeque::new(),
            capacity: log_capacity,
            total: 0,
            scratch: String::new(),
            events: Vec::new(),
        };
        // Scrollback 0: rows leave the screen straight into the log through `on_scroll`.
        Self { parser: vt100::Parser::new_with_callbacks(nz(rows), nz(cols), 0, sink) }
    }

    /// Feeds output; returns the terminal events it contained. Split UTF-8 and escape sequences
    /// are carried over to the next call by the parser.
    pub fn process(&mut self, bytes: &[u8]) -> Vec<ParsedEvent> {
        let was_alternate = self.parser.screen().alternate_screen();
        self.parser.process(bytes);
        let mut events = std::mem::take(&mut self.parser.callbacks_mut().events);
        let alternate = self.parser.screen().alternate_screen();
        if alternate != was_alternate {
            events.push(ParsedEvent::AlternateScreen { active: alternate });
        }
        events
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.set_size(nz(rows), nz(cols));
    }

    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (rows.get(), cols.get())
    }

    pub fn alternate_screen(&self) -> bool {
        self.parser.screen().alternate_screen()
    }

    /// (row, col) of the cursor.
    pub fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    /// Visible rows as plain text, trailing spaces and trailing blank rows dropped.
    pub fn screen_rows(&self) -> Vec<String> {
        let (_, cols) = self.size();
        let mut rows: Vec<String> = self.parser.screen().rows(0, cols).map(|r| r.trim_end().to_owned()).collect();
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        rows
    }

    /// Lines ever pushed to the log (the next line cursor).
    pub fn total_lines(&self) -> u64 {
        self.parser.callbacks().total
    }

    pub fn oldest_line(&self) -> u64 {
        let sink = self.parser.callbacks();
        sink.total - sink.lines.len() as u64
    }

    /// Up to `limit` log lines from `from` (clamped to the oldest retained line).
    pub fn log_from(&self, from: u64, limit: usize) -> LogRead {
        let sink = self.parser.callbacks();
        let oldest = self.oldest_line();
        let start = from.clamp(oldest, sink.total);
        let lines = sink.lines.iter().skip((start - oldest) as usize).take(limit).map(|l| l.to_string()).collect();
        LogRead { start, lines }
    }

    /// The last `limit` log lines.
    pub fn log_tail(&self, limit: usize) -> LogRead {
        self.log_from(self.total_lines().saturating_sub(limit as u64), limit)
    }
}

fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrolled_rows_become_plain_log_lines() {
        let mut screen = ScreenModel::new(3, 20, 100);
        screen.process(b"\x1b[31mone\x1b[0m\r\ntwo\r\nthree\r\nfour");
        assert_eq!(screen.total_lines(), 1);
        assert_eq!(screen.log_from(0, 10).lines, vec!["one"]);
        assert_eq!(screen.screen_rows(), vec!["two", "three", "four"]);
    }

    #[test]
    fn split_utf8_is_reassembled() {
        let mut screen = ScreenModel::new(3, 20, 100);
        let bytes = "h€llo".as_bytes();
        screen.process(&bytes[..2]);
        screen.process(&bytes[2..]);
        assert_eq!(screen.screen_rows(), vec!["h€llo"]);
    }

    #[test]
    fn alternate_screen_stays_out_of_the_log() {
        let mut screen = ScreenModel::new(2, 20, 100);
        let events = screen.process(b"\x1b[?1049hA\r\nB\r\nC\r\nD");
        assert!(events.contains(&ParsedEvent::AlternateScreen { active: true }));
        assert_eq!(screen.total_lines(), 0);
        let events = screen.process(b"\x1b[?1049lback");
        assert!(events.contains(&ParsedEvent::AlternateScreen { active: false }));
        assert_eq!(screen.screen_rows(), vec!["back"]);
    }

    #[test]
    fn the_log_is_bounded_but_the_cursor_keeps_counting() {
        let mut screen = ScreenModel::new(1, 10, 3);
        for i in 0..10 {
            screen.process(format!("{i}\r\n").as_bytes());
        }
        assert_eq!(screen.total_lines(), 10);
        let read = screen.log_from(0, 100);
        assert_eq!((read.start, read.lines), (7, vec!["7".to_owned(), "8".into(), "9".into()]));
    }
}
