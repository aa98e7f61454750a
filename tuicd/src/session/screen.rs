//! The terminal model of one session: a vt100 screen (rows, cursor, alternate screen) plus the log,
//! the rows that scrolled off the main screen as ANSI-stripped text lines with a monotonic line
//! cursor. Alternate-screen rows (full-screen programs) never enter the log. Long runs of plain
//! lines reach the log without vt100 (`plain_lines.rs`), with the same outcome.

use std::collections::VecDeque;
use std::num::NonZeroU16;

use proto::session::ParsedEvent;
use vt100::capture::{BasicFormattedCaptureState, RowContents, basic_formatted_to_plain};

use super::plain_lines::{self, Shadow};

pub(super) struct ScreenModel {
    parser: vt100::Parser<LogSink>,
    /// Sees every byte vt100 does, for the plain-lines fast path.
    shadow: Shadow,
    /// Whether the last byte given was a line feed.
    line_start: bool,
    /// Off only for the differential tests' reference model.
    fast_path: bool,
    /// Runs logged by the fast path (the tests check it was taken).
    #[cfg_attr(not(test), allow(dead_code))]
    plain_runs: u64,
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
    /// Rows still to drop as they scroll out: stand-ins for rows the fast path logged itself.
    suppress: usize,
    /// Replies to the terminal queries in the output (`queries.rs`), to be written to the PTY.
    replies: Vec<u8>,
}

impl LogSink {
    /// Appends a line without counting it.
    fn keep(&mut self, line: &str) {
        if self.lines.len() == self.capacity {
            self.lines.pop_front();
        }
        self.lines.push_back(line.into());
    }
}

impl vt100::Callbacks for LogSink {
    fn on_scroll(&mut self, contents: RowContents<'_>, alternate_screen: bool) {
        if alternate_screen {
            return;
        }
        if self.suppress > 0 {
            self.suppress -= 1;
            return;
        }
        self.scratch.clear();
        let _ = contents.write_formatted_basic(&mut self.scratch, &mut BasicFormattedCaptureState::new());
        let plain: String = basic_formatted_to_plain(&self.scratch).collect();
        self.keep(plain.trim_end());
        self.total += 1;
    }

    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.events.push(ParsedEvent::Title { title: String::from_utf8_lossy(title).into_owned() });
    }

    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.events.push(ParsedEvent::Bell);
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        if let Some(reply) = super::queries::answer_csi(screen, i1, i2, params, c) {
            self.replies.extend(reply);
        }
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        if let Some(reply) = super::queries::answer_osc(params) {
            self.replies.extend(reply);
        }
    }
}

/// Log lines from a line cursor: `lines` covers `[start, start + lines.len())`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LogRead {
    pub start: u64,
    pub lines: Vec<String>,
}

impl ScreenModel {
    pub(super) fn new(rows: u16, cols: u16, log_capacity: usize) -> Self {
        let sink = LogSink {
            lines: VecDeque::new(),
            capacity: log_capacity,
            total: 0,
            scratch: String::new(),
            events: Vec::new(),
            suppress: 0,
            replies: Vec::new(),
        };
        // Scrollback 0: rows leave the screen straight into the log through `on_scroll`.
        let parser = vt100::Parser::new_with_callbacks(nz(rows), nz(cols), 0, sink);
        Self { parser, shadow: Shadow::new(nz(rows).get()), line_start: true, fast_path: true, plain_runs: 0 }
    }

    /// Feeds output; returns the terminal events it contained. Split UTF-8 and escape sequences
    /// are carried over to the next call by the parser.
    pub(super) fn process(&mut self, bytes: &[u8]) -> Vec<ParsedEvent> {
        let was_alternate = self.parser.screen().alternate_screen();
        let mut at = 0;
        let mut settled = false;
        while self.fast_path {
            let (rows, cols) = self.size();
            // A run ends at a line end, so `at` is a line start after the first one.
            let Some(run) = plain_lines::next_run(bytes, at, at > 0 || self.line_start, rows, cols) else {
                break;
            };
            self.feed(&bytes[at..run.start]);
            let head = &bytes[run.start..run.split];
            let ground = self.at_plain_ground();
            if !ground && !settled && self.can_settle() {
                // On the main screen with no scroll region, a screen of plain lines and one more
                // leave the cursor at the start of a fresh blank bottom row: look again there.
                let mut line_ends = head.iter().enumerate().filter(|&(_, &b)| b == b'\n').map(|(i, _)| i + 1);
                let past = line_ends.nth(usize::from(rows)).unwrap_or(head.len());
                self.feed(&head[..past]);
                (at, settled) = (run.start + past, true);
                continue;
            }
            if !ground {
                self.feed(head);
            } else if self.shadow.verify_plain(head, run.head_lines) {
                self.fast_forward(head);
            } else {
                // The shadow parser has read it already.
                self.parser.process(head);
            }
            settled = false;
            // At least a screen of rows: consumes every stand-in row `fast_forward` left.
            self.feed(&bytes[run.split..run.end]);
            debug_assert_eq!(self.parser.callbacks().suppress, 0);
            self.parser.callbacks_mut().suppress = 0;
            at = run.end;
        }
        self.feed(&bytes[at..]);
        if let Some(&last) = bytes.last() {
            self.line_start = last == b'\n';
        }
        let mut events = std::mem::take(&mut self.parser.callbacks_mut().events);
        let alternate = self.parser.screen().alternate_screen();
        if alternate != was_alternate {
            events.push(ParsedEvent::AlternateScreen { active: alternate });
        }
        events
    }

    /// The replies to the terminal queries processed since the last call, in order.
    pub(super) fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().replies)
    }

    pub(super) fn resize(&mut self, rows: u16, cols: u16) {
        let changed = self.size() != (nz(rows).get(), nz(cols).get());
        self.parser.set_size(nz(rows), nz(cols));
        self.shadow.resized(nz(rows).get(), changed);
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.shadow.advance(bytes);
        self.parser.process(bytes);
    }

    /// Main screen scrolling as a whole: plain lines bring the cursor to the plain ground.
    fn can_settle(&self) -> bool {
        !self.parser.screen().alternate_screen() && self.shadow.main_region_full()
    }

    /// Main screen scrolling as a whole, cursor at the start of a blank bottom row: where a plain
    /// line's rows are known without the terminal (see `plain_lines.rs`).
    fn at_plain_ground(&self) -> bool {
        let screen = self.parser.screen();
        let (rows, cols) = self.size();
        cols >= 2
            && self.can_settle()
            && screen.cursor_position() == (rows - 1, 0)
            && (0..cols).all(|col| screen.cell(rows - 1, col).is_none_or(|cell| !cell.has_contents()))
    }

    /// Logs the verified plain lines `head` as vt100 would have, without parsing them.
    fn fast_forward(&mut self, head: &[u8]) {
        let (rows, cols) = self.size();
        let above = usize::from(rows) - 1;
        // The rows above the cursor scroll into the log through vt100's own capture, leaving a
        // blank screen with the cursor where it was.
        self.scroll_up(above);
        let sink = self.parser.callbacks_mut();
        let keep = sink.capacity;
        let logged = plain_lines::log_rows(head, usize::from(cols), keep, |row| sink.keep(row));
        sink.total += logged;
        // vt100 counts the rows that ever scrolled off (a taller screen pulls that many back as
        // blank rows), so the blank screen scrolls on for the run's other rows, which are not
        // logged again; the tail's first `above` rows scrolled out are the blank rows standing
        // for the run's last ones. `next_run` keeps `logged` above two screens of rows.
        sink.suppress = logged as usize;
        self.scroll_up(logged as usize - above);
        self.plain_runs += 1;
    }

    /// Scrolls the screen up `count` rows (SU, at most a screen per sequence).
    fn scroll_up(&mut self, mut count: usize) {
        let screen = usize::from(self.size().0);
        while count > 0 {
            let step = count.min(screen);
            self.parser.process(format!("\x1b[{step}S").as_bytes());
            count -= step;
        }
    }

    pub(super) fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (rows.get(), cols.get())
    }

    pub(super) fn alternate_screen(&self) -> bool {
        self.parser.screen().alternate_screen()
    }

    /// (row, col) of the cursor.
    pub(super) fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    /// Visible rows as plain text, trailing spaces and trailing blank rows dropped.
    pub(super) fn screen_rows(&self) -> Vec<String> {
        let (_, cols) = self.size();
        let mut rows: Vec<String> = self.parser.screen().rows(0, cols).map(|r| r.trim_end().to_owned()).collect();
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        rows
    }

    /// Lines ever pushed to the log (the next line cursor).
    pub(super) fn total_lines(&self) -> u64 {
        self.parser.callbacks().total
    }

    pub(super) fn oldest_line(&self) -> u64 {
        let sink = self.parser.callbacks();
        sink.total - sink.lines.len() as u64
    }

    /// Up to `limit` log lines from `from` (clamped to the oldest retained line).
    pub(super) fn log_from(&self, from: u64, limit: usize) -> LogRead {
        let sink = self.parser.callbacks();
        let oldest = self.oldest_line();
        let start = from.clamp(oldest, sink.total);
        let lines = sink.lines.iter().skip((start - oldest) as usize).take(limit).map(|l| l.to_string()).collect();
        LogRead { start, lines }
    }

    /// The last `limit` log lines.
    pub(super) fn log_tail(&self, limit: usize) -> LogRead {
        self.log_from(self.total_lines().saturating_sub(limit as u64), limit)
    }

    /// The newest log lines, at most `max_lines`, while their lengths plus one byte each (the
    /// newline joining them) fit in `budget`. Only the kept lines are copied.
    pub(super) fn log_tail_within(&self, budget: usize, max_lines: usize) -> LogRead {
        let sink = self.parser.callbacks();
        let mut used = 0;
        let kept = sink
            .lines
            .iter()
            .rev()
            .take(max_lines)
            .take_while(|line| {
                used += line.len() + 1;
                used <= budget
            })
            .count();
        let lines = sink.lines.iter().skip(sink.lines.len() - kept).map(|l| l.to_string()).collect();
        LogRead { start: sink.total - kept as u64, lines }
    }

    /// Log lines from `from` (clamped to the oldest retained line), at most `max_lines`, while
    /// their lengths plus one byte each fit in `budget`; always the first one, so a delta read
    /// makes progress whatever its budget.
    pub(super) fn log_from_within(&self, from: u64, budget: usize, max_lines: usize) -> LogRead {
        let sink = self.parser.callbacks();
        let oldest = self.oldest_line();
        let start = from.clamp(oldest, sink.total);
        let mut used = 0;
        let mut lines = Vec::new();
        for line in sink.lines.iter().skip((start - oldest) as usize).take(max_lines) {
            used += line.len() + 1;
            if used > budget && !lines.is_empty() {
                break;
            }
            lines.push(line.to_string());
        }
        LogRead { start, lines }
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

    /// A xorshift generator: the same streams on every run.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, bound: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % bound as u64) as usize
        }
    }

    /// Output mixing long runs of plain lines with what must break or bar the fast path: escape
    /// sequences (some spanning line ends, some left open), scroll regions, the alternate screen,
    /// resets, split UTF-8, bare CR and LF, tabs.
    fn mixed_output(rng: &mut Rng, cols: usize) -> Vec<u8> {
        const OTHERS: [&[u8]; 24] = [
            b"\x1b[31m",
            b"\x1b[0m",
            b"\x1b[1;44m",
            b"\x1b[2J",
            b"\x1b[K",
            b"\x1b[r",
            b"\x1b[2;3r",
            b"\x1b[1;2r",
            b"\x1b[?1049h",
            b"\x1b[?1049l",
            b"\x1b[?47h",
            b"\x1b[?47l",
            // A region set or cleared on the alternate screen is not the main screen's.
            b"\x1b[?1049h\x1b[r\x1b[?1049l",
            b"\x1b[?47h\x1b[1;2r\x1b[?47l",
            b"\x1bc",
            b"\x1b]0;title\x07",
            b"\x1b]0;open ",
            b"\x1b\\",
            b"\x1b[1\r\n2m",
            b"\x1bP1$q\x1b\\",
            "é€".as_bytes(),
            b"\xe2",
            b"\n",
            b"\r\t\x08",
        ];
        let mut out = Vec::new();
        for _ in 0..40 {
            if rng.below(3) == 0 {
                out.extend_from_slice(OTHERS[rng.below(OTHERS.len())]);
                if rng.below(2) == 0 {
                    out.extend_from_slice(format!("\x1b[{};{}H", rng.below(9), rng.below(cols + 2)).as_bytes());
                }
            } else {
                // Some blocks are blank lines: they leave the cursor's row blank even where a
                // scroll region keeps the rows from scrolling.
                let widest = if rng.below(4) == 0 { 0 } else { 3 * cols };
                for _ in 0..rng.below(300) {
                    for _ in 0..rng.below(widest + 1) {
                        out.push(b" abcxyz0189~"[rng.below(12)]);
                    }
                    out.extend_from_slice(b"\r\n");
                }
            }
        }
        out
    }

    #[test]
    fn the_plain_lines_fast_path_ends_exactly_where_vt100_does() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut fast_runs = 0;
        for case in 0..120 {
            let (rows, cols) = (1 + rng.below(8) as u16, 1 + rng.below(20) as u16);
            let capacity = [7, 50, 10_000][rng.below(3)];
            let mut fast = ScreenModel::new(rows, cols, capacity);
            let mut reference = ScreenModel::new(rows, cols, capacity);
            reference.fast_path = false;
            let output = mixed_output(&mut rng, usize::from(cols));
            let mut at = 0;
            while at < output.len() {
                let end = (at + 1 + rng.below(6000)).min(output.len());
                assert_eq!(fast.process(&output[at..end]), reference.process(&output[at..end]), "case {case}");
                at = end;
                if rng.below(8) == 0 {
                    let (rows, cols) = if rng.below(2) == 0 {
                        fast.size()
                    } else {
                        (1 + rng.below(8) as u16, 2 + rng.below(20) as u16)
                    };
                    fast.resize(rows, cols);
                    reference.resize(rows, cols);
                }
                let context = format!("case {case} at byte {at}");
                assert_eq!(fast.total_lines(), reference.total_lines(), "{context}");
                assert_eq!(fast.log_from(0, capacity), reference.log_from(0, capacity), "{context}");
                assert_eq!(fast.screen_rows(), reference.screen_rows(), "{context}");
                assert_eq!(fast.cursor(), reference.cursor(), "{context}");
                assert_eq!(fast.alternate_screen(), reference.alternate_screen(), "{context}");
            }
            fast_runs += fast.plain_runs;
        }
        assert!(fast_runs > 100, "the fast path was taken {fast_runs} times");
    }

    #[test]
    fn a_run_over_a_written_bottom_row_is_left_to_vt100() {
        // The cursor reaches the bottom row by a line feed, not a scroll: the row keeps its text
        // and the first line only overwrites the start of it.
        let mut output = b"\x1b[4;1Hlongtextxx\x1b[3;1Hx\r\n".to_vec();
        for _ in 0..200 {
            output.extend_from_slice(b"ab\r\n");
        }
        let mut fast = ScreenModel::new(4, 10, 1000);
        let mut reference = ScreenModel::new(4, 10, 1000);
        reference.fast_path = false;
        fast.process(&output);
        reference.process(&output);
        assert_eq!(reference.log_from(0, 5).lines, ["", "", "x", "abngtextxx", "ab"]);
        assert_eq!(fast.log_from(0, 1000), reference.log_from(0, 1000));
        assert_eq!(fast.screen_rows(), reference.screen_rows());
        assert_eq!(fast.plain_runs, 1, "the fast path takes over once a line has scrolled");
    }

    #[test]
    fn a_flood_of_plain_lines_takes_the_fast_path() {
        let mut screen = ScreenModel::new(24, 80, 100);
        let mut flood = Vec::new();
        for i in 0..5000 {
            flood.extend_from_slice(format!("line {i:05} {}\r\n", "x".repeat(60)).as_bytes());
        }
        screen.process(&flood);
        assert_eq!(screen.plain_runs, 1);
        assert_eq!(screen.total_lines(), 5000 - 23);
        assert_eq!(screen.log_tail(1).lines, [format!("line 04976 {}", "x".repeat(60))]);
        assert_eq!(screen.screen_rows().last().unwrap(), &format!("line 04999 {}", "x".repeat(60)));
        assert_eq!(screen.cursor(), (23, 0));
    }

    #[test]
    fn byte_budgeted_log_reads_keep_whole_lines_and_a_delta_always_progresses() {
        let mut screen = ScreenModel::new(1, 10, 100);
        screen.process(b"aaaa\r\nbb\r\ncccccc\r\n");
        let lines = |read: LogRead| (read.start, read.lines);
        assert_eq!(lines(screen.log_tail_within(10, 100)), (1, vec!["bb".to_owned(), "cccccc".into()]));
        assert_eq!(lines(screen.log_tail_within(100, 2)), (1, vec!["bb".to_owned(), "cccccc".into()]));
        assert_eq!(lines(screen.log_tail_within(6, 100)), (3, vec![]));
        assert_eq!(lines(screen.log_from_within(0, 8, 100)), (0, vec!["aaaa".to_owned(), "bb".into()]));
        assert_eq!(lines(screen.log_from_within(0, 2, 100)), (0, vec!["aaaa".to_owned()]));
        assert_eq!(lines(screen.log_from_within(2, 100, 100)), (2, vec!["cccccc".to_owned()]));
        assert_eq!(lines(screen.log_from_within(3, 100, 100)), (3, vec![]));
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
