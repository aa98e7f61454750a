//! The screen model's fast path for plain lines.
//!
//! vt100 spends ~60 ns per byte of full lines (much of it capturing each scrolled row for the
//! log), so a flood of plain text costs the screen model far more than it costs anyone else. Most
//! of that work is for rows that only pass through the screen on their way to the log. When the output is a long run
//! of plain lines (printable ASCII ending in CR LF) and the terminal is in the plain state (main
//! screen, full-screen scroll region, cursor at the start of a blank bottom row), the outcome is
//! known without the terminal: each line becomes `ceil(len / cols)` rows (at least one), and every
//! row but the last few scrolls into the log as it is. So the model:
//!
//! 1. scrolls the rows above the cursor into the log through vt100 (its own capture, so they read
//!    exactly as they would have), which leaves a blank screen with the cursor where it was;
//! 2. appends the run's rows to the log directly, except its last lines (`tail`), and
//! 3. feeds `tail`, which fills at least a whole screen, to vt100 with the log told to drop the
//!    first `rows - 1` rows it scrolls out: the blank rows of step 1, which stand for the run's
//!    last rows, already logged in step 2.
//!
//! The screen, cursor and log end exactly as if vt100 had parsed every byte (a differential test
//! in `screen.rs` checks this against plain vt100 on random mixed output). Whether vt100's parser
//! would have read the run as text is not assumed: a second `vte` parser of the same version sees
//! every byte the model is given and must report the run as prints of printable ASCII and CR/LF
//! only (inside an OSC string or a CSI sequence it would not be). The same parser tracks what
//! vt100 keeps private but the fast path depends on: whether the main screen has a scroll region.

use crate::limits::PLAIN_RUN_MIN_ROWS;

/// A run of plain lines in a chunk: `[start, split)` (the head, `head_lines` lines) is appended
/// to the log directly and `[split, end)` (at least a screen of rows) goes through vt100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PlainRun {
    pub start: usize,
    pub split: usize,
    pub end: usize,
    pub head_lines: usize,
}

/// A `vte` parser in step with vt100's, reporting what the fast path needs to know.
pub(super) struct Shadow {
    parser: vte::Parser,
    state: ShadowState,
}

struct ShadowState {
    rows: u16,
    alternate: bool,
    /// Whether the main screen scrolls as a whole (no DECSTBM region).
    main_region_full: bool,
    /// Set while verifying a run: cleared by anything but plain text and CR/LF.
    plain: bool,
    prints: usize,
    controls: usize,
}

impl Shadow {
    pub(super) fn new(rows: u16) -> Self {
        let state =
            ShadowState { rows, alternate: false, main_region_full: true, plain: false, prints: 0, controls: 0 };
        Self { parser: vte::Parser::new(), state }
    }

    /// Every byte vt100 parses must come through here too, in order (the fast path's skipped runs
    /// come through [`Shadow::verify_plain`]).
    pub(super) fn advance(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.state, bytes);
    }

    /// vt100 resets the scroll regions when the size changes.
    pub(super) fn resized(&mut self, rows: u16, changed: bool) {
        self.state.rows = rows;
        if changed {
            self.state.main_region_full = true;
        }
    }

    pub(super) fn main_region_full(&self) -> bool {
        self.state.main_region_full
    }

    /// Parses `run` (complete plain lines, as [`next_run`] found them) and says whether the parser
    /// read all of it as text and line ends, i.e. it was in its ground state when the run began.
    pub(super) fn verify_plain(&mut self, run: &[u8], lines: usize) -> bool {
        let state = &mut self.state;
        (state.plain, state.prints, state.controls) = (true, 0, 0);
        self.parser.advance(state, run);
        let verified = state.plain && state.controls == 2 * lines && state.prints == run.len() - 2 * lines;
        state.plain = false;
        verified
    }
}

impl vte::Perform for ShadowState {
    fn print(&mut self, c: char) {
        self.prints += 1;
        if !matches!(c, ' '..='~') {
            self.plain = false;
        }
    }

    fn execute(&mut self, byte: u8) {
        self.controls += 1;
        if !matches!(byte, b'\r' | b'\n') {
            self.plain = false;
        }
    }

    fn hook(&mut self, _: &vte::Params, _: &[u8], _: bool, _: char) {
        self.plain = false;
    }

    fn put(&mut self, _: u8) {
        self.plain = false;
    }

    fn unhook(&mut self) {
        self.plain = false;
    }

    fn osc_dispatch(&mut self, _: &[&[u8]], _: bool) {
        self.plain = false;
    }

    // Mirrors vt100's `csi_dispatch` for the three things that move the fast path's ground:
    // DECSTBM (on whichever screen is active) and entering or leaving the alternate screen.
    fn csi_dispatch(&mut self, params: &vte::Params, intermediates: &[u8], _: bool, action: char) {
        self.plain = false;
        match (intermediates.first(), action) {
            (None, 'r') if !self.alternate => self.main_region_full = region_is_full(params, self.rows),
            (Some(b'?'), 'h' | 'l') => {
                for param in params {
                    if param == [47] || param == [1049] {
                        self.alternate = action == 'h';
                    }
                }
            }
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _: bool, byte: u8) {
        self.plain = false;
        // RIS: a new screen.
        if intermediates.is_empty() && byte == b'c' {
            (self.alternate, self.main_region_full) = (false, true);
        }
    }
}

/// Whether vt100's DECSTBM with `params` leaves the whole screen as the scroll region (its
/// `canonicalize_params_decstbm` and `set_scroll_region`, where an empty region means the whole
/// screen).
fn region_is_full(params: &vte::Params, rows: u16) -> bool {
    let mut values = params.iter().map(|p| p.first().copied().unwrap_or(0));
    let top = values.next().unwrap_or(0).max(1);
    let bottom = match values.next().unwrap_or(0) {
        0 => rows,
        b => b,
    };
    let (top, bottom) = (top - 1, (bottom - 1).min(rows.saturating_sub(1)));
    top >= bottom || (top == 0 && bottom == rows.saturating_sub(1))
}

/// Screen rows a plain line of `len` bytes fills on a screen `cols` wide.
pub(super) fn rows_of(len: usize, cols: usize) -> usize {
    len.div_ceil(cols).max(1)
}

/// The first run of plain lines in `bytes[from..]` worth the fast path on a `rows` x `cols`
/// screen: it starts at a line start (`from` counts as one when `line_start`), holds at least
/// [`PLAIN_RUN_MIN_ROWS`] (and two screens) of rows before its last screen of rows, and ends with
/// the last plain line of its stretch.
pub(super) fn next_run(bytes: &[u8], from: usize, line_start: bool, rows: u16, cols: u16) -> Option<PlainRun> {
    let (rows, cols) = (usize::from(rows), usize::from(cols));
    let min_head = PLAIN_RUN_MIN_ROWS.max(2 * rows);
    let mut at = from;
    let mut starts_line = line_start;
    while at < bytes.len() {
        let newline = at + bytes[at..].iter().position(|&b| b == b'\n')?;
        if !starts_line || !is_plain_line(&bytes[at..=newline]) {
            (at, starts_line) = (newline + 1, true);
            continue;
        }
        // A stretch of plain lines from `at`: note each line's end and rows.
        let start = at;
        let mut lines: Vec<(usize, usize)> = Vec::new();
        let mut end = at;
        while let Some(newline) = bytes[end..].iter().position(|&b| b == b'\n').map(|i| end + i) {
            if !is_plain_line(&bytes[end..=newline]) {
                break;
            }
            lines.push((newline + 1, rows_of(newline - 1 - end, cols)));
            end = newline + 1;
        }
        // The tail: the fewest last lines that fill at least a screen.
        let mut tail_rows = 0;
        let mut split_line = lines.len();
        while split_line > 0 && tail_rows < rows {
            split_line -= 1;
            tail_rows += lines[split_line].1;
        }
        let head_rows: usize = lines[..split_line].iter().map(|&(_, r)| r).sum();
        if tail_rows >= rows && head_rows >= min_head {
            let split = lines[split_line - 1].0;
            return Some(PlainRun { start, split, end, head_lines: split_line });
        }
        // Too short: look on from the line that ended the stretch (not plain, so passed over).
        (at, starts_line) = (end, true);
    }
    None
}

/// Printable ASCII followed by CR LF.
fn is_plain_line(line: &[u8]) -> bool {
    line.len() >= 2 && line.ends_with(b"\r\n") && line[..line.len() - 2].iter().all(|b| matches!(b, b' '..=b'~'))
}

/// The log rows of the plain lines in `run`, in order, trailing spaces dropped, on a screen
/// `cols` wide; only the last `keep` are built (the ones a log of that capacity retains). Returns
/// how many rows there were in all.
pub(super) fn log_rows(run: &[u8], cols: usize, keep: usize, mut push: impl FnMut(&str)) -> u64 {
    let lines = || run.split_inclusive(|&b| b == b'\n').map(|line| &line[..line.len() - 2]);
    let total: usize = lines().map(|line| rows_of(line.len(), cols)).sum();
    let mut skip = total.saturating_sub(keep);
    for line in lines() {
        let count = rows_of(line.len(), cols);
        if skip >= count {
            skip -= count;
            continue;
        }
        for row in skip..count {
            let segment = &line[row * cols..((row + 1) * cols).min(line.len())];
            // Printable ASCII: always UTF-8.
            push(std::str::from_utf8(segment).unwrap_or_default().trim_end());
        }
        skip = 0;
    }
    total as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize, len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..n {
            out.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, len));
            out.extend_from_slice(b"\r\n");
        }
        out
    }

    #[test]
    fn a_run_starts_at_a_line_start_and_keeps_a_screen_for_vt100() {
        let mut bytes = b"partial line\r\n".to_vec();
        bytes.extend(lines(200, 10));
        bytes.extend_from_slice(b"\x1b[31mred\r\n");
        // Not at a line start: the first line is not part of the run.
        let run = next_run(&bytes, 0, false, 5, 20).unwrap();
        assert_eq!(run.start, 14);
        assert_eq!(run.end, 14 + 200 * 12);
        // The tail is the last 5 lines (one row each on a 20-column screen).
        assert_eq!(run.split, run.end - 5 * 12);
        assert_eq!(run.head_lines, 195);
        // From a line start, the partial line is plain too.
        assert_eq!(next_run(&bytes, 0, true, 5, 20).unwrap().start, 0);
    }

    #[test]
    fn short_runs_and_unplain_lines_are_left_to_vt100() {
        assert_eq!(next_run(&lines(20, 10), 0, true, 5, 20), None);
        let mut bytes = lines(100, 10);
        bytes.extend_from_slice(b"tab\there\r\n");
        bytes.extend(lines(100, 10));
        let run = next_run(&bytes, 0, true, 5, 20).unwrap();
        assert_eq!((run.start, run.end), (0, 100 * 12));
        let run = next_run(&bytes, run.end, true, 5, 20).unwrap();
        assert_eq!(run.start, 100 * 12 + 10);
        // A lone LF or a bare CR is not a plain line end.
        assert!(!is_plain_line(b"abc\n") && !is_plain_line(b"ab\rc\r\n") && is_plain_line(b"\r\n"));
    }

    #[test]
    fn long_lines_wrap_into_rows_and_only_the_kept_rows_are_built() {
        let run = b"0123456789abcdefghij12\r\n\r\nxy  \r\n";
        let mut rows = Vec::new();
        assert_eq!(log_rows(run, 10, 100, |r| rows.push(r.to_owned())), 5);
        assert_eq!(rows, ["0123456789", "abcdefghij", "12", "", "xy"]);
        rows.clear();
        assert_eq!(log_rows(run, 10, 3, |r| rows.push(r.to_owned())), 5);
        assert_eq!(rows, ["12", "", "xy"]);
    }

    #[test]
    fn decstbm_is_full_as_vt100_canonicalizes_it() {
        let mut shadow = Shadow::new(24);
        for (seq, full) in [
            (&b"\x1b[2;10r"[..], false),
            (b"\x1b[r", true),
            (b"\x1b[1;20r", false),
            (b"\x1b[0;24r", true),
            (b"\x1b[1;99r", true),
            (b"\x1b[5;5r", true),
            (b"\x1b[3r", false),
            (b"\x1bc", true),
        ] {
            shadow.advance(seq);
            assert_eq!(shadow.main_region_full(), full, "{}", String::from_utf8_lossy(seq));
        }
        // A region set on the alternate screen is not the main screen's.
        shadow.advance(b"\x1b[?1049h\x1b[2;10r\x1b[?1049l");
        assert!(shadow.main_region_full());
        shadow.advance(b"\x1b[2;10r");
        shadow.resized(24, false);
        assert!(!shadow.main_region_full());
        shadow.resized(30, true);
        assert!(shadow.main_region_full());
    }

    #[test]
    fn a_run_is_plain_only_when_the_parser_starts_it_in_ground() {
        let run = lines(3, 4);
        let mut shadow = Shadow::new(24);
        assert!(shadow.verify_plain(&run, 3));
        // Inside an OSC string the lines are the string's bytes.
        shadow.advance(b"\x1b]0;title");
        assert!(!shadow.verify_plain(&run, 3));
        shadow.advance(b"\x07");
        // Inside a CSI sequence a line end is executed and the next letter ends the sequence.
        shadow.advance(b"\x1b[1");
        assert!(!shadow.verify_plain(&run, 3));
        // A pending partial UTF-8 character.
        shadow.advance(&"é".as_bytes()[..1]);
        assert!(!shadow.verify_plain(&run, 3));
        assert!(shadow.verify_plain(&run, 3));
    }
}
