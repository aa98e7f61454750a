//! A terminal screen as the UI paints it: a plain grid of cells with resolved colours, copied out
//! of the vt100 parser on the network thread so the UI never touches the parser.

use eframe::egui::Color32;

use crate::charset::STRIKE_MARK;

pub(crate) const DEFAULT_FG: Color32 = Color32::from_rgb(0xd0, 0xd0, 0xd0);
pub(crate) const DEFAULT_BG: Color32 = Color32::from_rgb(0x14, 0x14, 0x18);

/// xterm's 16 standard colours, the palette the pixel tests check against.
pub(crate) const ANSI: [Color32; 16] = [
    Color32::from_rgb(0, 0, 0),
    Color32::from_rgb(205, 0, 0),
    Color32::from_rgb(0, 205, 0),
    Color32::from_rgb(205, 205, 0),
    Color32::from_rgb(0, 0, 238),
    Color32::from_rgb(205, 0, 205),
    Color32::from_rgb(0, 205, 205),
    Color32::from_rgb(229, 229, 229),
    Color32::from_rgb(127, 127, 127),
    Color32::from_rgb(255, 0, 0),
    Color32::from_rgb(0, 255, 0),
    Color32::from_rgb(255, 255, 0),
    Color32::from_rgb(92, 92, 255),
    Color32::from_rgb(255, 0, 255),
    Color32::from_rgb(0, 255, 255),
    Color32::from_rgb(255, 255, 255),
];

pub(crate) const BOLD: u8 = 1;
pub(crate) const UNDERLINE: u8 = 2;
pub(crate) const ITALIC: u8 = 4;
/// The right half of a double-width character: painted by its left half.
pub(crate) const WIDE_CONTINUATION: u8 = 8;
/// Faint (SGR 2): the colour is already dimmed; the flag keeps runs apart.
pub(crate) const DIM: u8 = 16;
/// Struck through (SGR 9), carried by [`crate::charset::STRIKE_MARK`].
pub(crate) const STRIKE: u8 = 32;
/// The left half of a double-width character.
pub(crate) const WIDE: u8 = 64;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Cell {
    pub ch: char,
    pub fg: Color32,
    pub bg: Color32,
    pub flags: u8,
}

impl Default for Cell {
    fn default() -> Self {
        Self { ch: ' ', fg: DEFAULT_FG, bg: DEFAULT_BG, flags: 0 }
    }
}

/// One published screen. Cheap to share (`Arc`), never mutated after it is built.
#[derive(Debug, Clone, Default)]
pub(crate) struct Grid {
    pub rows: u16,
    pub cols: u16,
    pub cells: Vec<Cell>,
    /// Row and column of the cursor when it is shown and the view is not scrolled back.
    pub cursor: Option<(u16, u16)>,
    pub alternate_screen: bool,
    pub bracketed_paste: bool,
    pub application_cursor: bool,
    /// Rows scrolled back from the live screen (0 = live).
    pub scrollback: usize,
    /// The byte cursor just past the last byte this grid shows.
    pub cursor_bytes: u64,
    /// Cells whose text is more than one char (a base and combining marks), by cell index,
    /// sorted: the cell's `ch` is the base.
    pub clusters: Vec<(u32, String)>,
    /// What the program asked of the mouse (X10, normal, button or any-event tracking).
    pub mouse_mode: vt100::MouseProtocolMode,
    pub mouse_encoding: vt100::MouseProtocolEncoding,
    /// Rows of scrollback the parser holds (how far Shift+PgUp can go).
    pub scrollback_len: usize,
    /// Bells rung so far on this terminal (a change rings the visual bell).
    pub bells: u64,
}

impl Grid {
    pub(crate) fn from_screen(screen: &vt100::Screen, cursor_bytes: u64) -> Self {
        let (rows, cols) = screen.size();
        let (rows, cols) = (rows.get(), cols.get());
        let mut cells = Vec::with_capacity(usize::from(rows) * usize::from(cols));
        let mut clusters = Vec::new();
        for row in 0..rows {
            for col in 0..cols {
                let index = cells.len() as u32;
                cells.push(screen.cell(row, col).map(|c| cell_of(c, index, &mut clusters)).unwrap_or_default());
            }
        }
        let scrollback = screen.scrollback();
        let cursor = (!screen.hide_cursor() && scrollback == 0).then(|| screen.cursor_position());
        Self {
            rows,
            cols,
            cells,
            cursor,
            alternate_screen: screen.alternate_screen(),
            bracketed_paste: screen.bracketed_paste(),
            application_cursor: screen.application_cursor(),
            scrollback,
            cursor_bytes,
            clusters,
            mouse_mode: screen.mouse_protocol_mode(),
            mouse_encoding: screen.mouse_protocol_encoding(),
            scrollback_len: 0,
            bells: 0,
        }
    }

    pub(crate) fn has_cluster(&self, row: u16, col: u16) -> bool {
        let index = u32::from(row) * u32::from(self.cols) + u32::from(col);
        self.clusters.binary_search_by_key(&index, |(i, _)| *i).is_ok()
    }

    /// The cell's whole text: its character and any combining marks.
    pub(crate) fn push_text(&self, row: u16, col: u16, out: &mut String) {
        let index = u32::from(row) * u32::from(self.cols) + u32::from(col);
        match self.clusters.binary_search_by_key(&index, |(i, _)| *i) {
            Ok(found) => out.push_str(&self.clusters[found].1),
            Err(_) => out.push(self.cell(row, col).ch),
        }
    }

    /// The screen as text, one line per row (right halves of wide characters left out, trailing
    /// blanks trimmed): what the test hook `TUIC_GUI_GRID_DUMP` writes.
    pub(crate) fn dump(&self) -> String {
        let mut out = String::new();
        for row in 0..self.rows {
            let mut line = String::new();
            for col in 0..self.cols {
                if self.cell(row, col).flags & WIDE_CONTINUATION == 0 {
                    self.push_text(row, col, &mut line);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    pub(crate) fn cell(&self, row: u16, col: u16) -> Cell {
        self.cells.get(usize::from(row) * usize::from(self.cols) + usize::from(col)).copied().unwrap_or_default()
    }

    /// The text between two cells (inclusive, in reading order), rows joined by newlines with
    /// trailing blanks trimmed, as a terminal copies a selection.
    pub(crate) fn text_between(&self, from: (u16, u16), to: (u16, u16)) -> String {
        let (start, end) = if from <= to { (from, to) } else { (to, from) };
        let mut out = String::new();
        for row in start.0..=end.0.min(self.rows.saturating_sub(1)) {
            let first = if row == start.0 { start.1 } else { 0 };
            let last = if row == end.0 { end.1.min(self.cols.saturating_sub(1)) } else { self.cols.saturating_sub(1) };
            let mut line = String::new();
            for col in first..=last {
                if self.cell(row, col).flags & WIDE_CONTINUATION == 0 {
                    self.push_text(row, col, &mut line);
                }
            }
            if row != start.0 {
                out.push('\n');
            }
            out.push_str(line.trim_end());
        }
        out
    }
}

fn cell_of(cell: &vt100::Cell, index: u32, clusters: &mut Vec<(u32, String)>) -> Cell {
    let mut fg = color(cell.fgcolor(), DEFAULT_FG, cell.bold());
    let mut bg = color(cell.bgcolor(), DEFAULT_BG, false);
    if cell.inverse() {
        std::mem::swap(&mut fg, &mut bg);
    }
    let mut flags = 0;
    if cell.dim() {
        fg = dimmed(fg, bg);
        flags |= DIM;
    }
    if cell.is_wide() {
        flags |= WIDE;
    }
    let contents = cell.contents();
    let mut chars = contents.chars();
    let ch = chars.next().unwrap_or(' ');
    if chars.clone().next().is_some() {
        let struck = contents.contains(STRIKE_MARK);
        if struck {
            flags |= STRIKE;
        }
        let text: String = contents.chars().filter(|c| *c != STRIKE_MARK).collect();
        if text.chars().nth(1).is_some() {
            clusters.push((index, text));
        }
    }
    if cell.bold() {
        flags |= BOLD;
    }
    if cell.underline() {
        flags |= UNDERLINE;
    }
    if cell.italic() {
        flags |= ITALIC;
    }
    if cell.is_wide_continuation() {
        flags |= WIDE_CONTINUATION;
    }
    Cell { ch, fg, bg, flags }
}

/// Faint text: the colour halfway to the background.
pub(crate) fn dimmed(fg: Color32, bg: Color32) -> Color32 {
    let mid = |a: u8, b: u8| ((u16::from(a) + u16::from(b)) / 2) as u8;
    Color32::from_rgb(mid(fg.r(), bg.r()), mid(fg.g(), bg.g()), mid(fg.b(), bg.b()))
}

/// A vt100 colour as painted: the 16 ANSI colours (bold brightens the first eight, as xterm
/// does), the 6x6x6 cube, the grey ramp, or true colour.
pub(crate) fn color(color: vt100::Color, default: Color32, bold: bool) -> Color32 {
    match color {
        vt100::Color::Default => default,
        vt100::Color::Idx(i) if i < 8 && bold => ANSI[usize::from(i) + 8],
        vt100::Color::Idx(i) if i < 16 => ANSI[usize::from(i)],
        vt100::Color::Idx(i) if i < 232 => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            Color32::from_rgb(level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        vt100::Color::Idx(i) => {
            let v = 8 + (i - 232) * 10;
            Color32::from_rgb(v, v, v)
        }
        vt100::Color::Rgb(r, g, b) => Color32::from_rgb(r, g, b),
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU16;

    use super::*;

    fn parsed(bytes: &[u8]) -> vt100::Parser {
        let size = |n| NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN);
        let mut parser = vt100::Parser::new(size(5), size(20), 100);
        parser.process(bytes);
        parser
    }

    #[test]
    fn sgr_colours_bold_underline_and_inverse_reach_the_cells() {
        let parser = parsed(b"\x1b[31mR\x1b[0m\x1b[1;4mB\x1b[0m\x1b[7mI\x1b[0m\x1b[38;2;1;2;3mT");
        let grid = Grid::from_screen(parser.screen(), 0);
        assert_eq!(grid.cell(0, 0).fg, ANSI[1]);
        let bold = grid.cell(0, 1);
        assert_eq!(bold.flags & (BOLD | UNDERLINE), BOLD | UNDERLINE);
        let inverse = grid.cell(0, 2);
        assert_eq!((inverse.fg, inverse.bg), (DEFAULT_BG, DEFAULT_FG));
        assert_eq!(grid.cell(0, 3).fg, Color32::from_rgb(1, 2, 3));
    }

    #[test]
    fn cursor_position_and_alternate_screen_are_reported() {
        let parser = parsed(b"\x1b[?1049h\x1b[3;5Hx");
        let grid = Grid::from_screen(parser.screen(), 7);
        assert!(grid.alternate_screen);
        assert_eq!(grid.cursor, Some((2, 5)));
        assert_eq!(grid.cell(2, 4).ch, 'x');
        assert_eq!(grid.cursor_bytes, 7);
    }

    #[test]
    fn a_selection_copies_its_text_with_trailing_blanks_trimmed() {
        let parser = parsed(b"hello world\r\nsecond line");
        let grid = Grid::from_screen(parser.screen(), 0);
        assert_eq!(grid.text_between((0, 6), (1, 5)), "world\nsecond");
        assert_eq!(grid.text_between((1, 5), (0, 6)), "world\nsecond", "a backwards drag copies the same");
    }

    #[test]
    fn wide_combining_dim_and_struck_cells() {
        let mut filter = crate::charset::Filter::default();
        let bytes = filter.process("中e\u{301}\x1b[2;31mD\x1b[0;9mS\x1b[0m\x1b(0lqk".as_bytes());
        let parser = parsed(&bytes);
        let grid = Grid::from_screen(parser.screen(), 0);
        assert_eq!(grid.cell(0, 0).flags & WIDE, WIDE);
        assert_eq!(grid.cell(0, 1).flags & WIDE_CONTINUATION, WIDE_CONTINUATION);
        let mut text = String::new();
        grid.push_text(0, 2, &mut text);
        assert_eq!(text, "e\u{301}", "the accent joins its base");
        assert_eq!(grid.cell(0, 3).fg, dimmed(ANSI[1], DEFAULT_BG));
        assert_eq!(grid.cell(0, 3).flags & DIM, DIM);
        let struck = grid.cell(0, 4);
        assert_eq!((struck.ch, struck.flags & STRIKE), ('S', STRIKE));
        assert_eq!(grid.dump().lines().next(), Some("中e\u{301}DS┌─┐"));
    }

    #[test]
    fn the_256_colour_cube_and_grey_ramp_match_xterm() {
        assert_eq!(color(vt100::Color::Idx(196), DEFAULT_FG, false), Color32::from_rgb(255, 0, 0));
        assert_eq!(color(vt100::Color::Idx(232), DEFAULT_FG, false), Color32::from_rgb(8, 8, 8));
        assert_eq!(color(vt100::Color::Idx(1), DEFAULT_FG, true), ANSI[9], "bold brightens");
    }
}
