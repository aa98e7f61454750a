//! One terminal on screen: the last published [`Grid`] painted cell by cell (runs of one style
//! share a galley, which egui caches between frames), and the keyboard, mouse, selection and
//! clipboards turned into what the program reads, with xterm's habits: a selection is copied to
//! PRIMARY as it is made and middle-click or Shift+Insert pastes it, Ctrl+Shift+C/V use CLIPBOARD,
//! Ctrl+C always reaches the program, the mouse goes to a program that asked for it (Shift to
//! select instead), Shift+PgUp/PgDn scroll back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, FontId, Pos2, Rect, Sense, Stroke, Vec2};

use crate::clipboard;
use crate::grid::{BOLD, Cell, DEFAULT_BG, Grid, ITALIC, STRIKE, UNDERLINE, WIDE, WIDE_CONTINUATION};
use crate::keys;
use crate::lock::Recover as _;
use crate::net::term::{Term, TermInput, TermStatus, TermView};

const FONT_SIZE: f32 = 14.0;
const SELECTION: Color32 = Color32::from_rgba_premultiplied(60, 90, 160, 110);

/// One tab's state in the UI.
pub(crate) struct Tab {
    pub term: Term,
    /// The selection as (row, col) of the grid, anchor first.
    selection: Option<((u16, u16), (u16, u16))>,
    /// Rows scrolled back, as the user asked (the parser clamps it).
    scroll: usize,
    /// The geometry last printed under `--print-geometry`.
    printed: Option<String>,
    /// Bells already raised.
    bells_seen: u64,
    /// A mouse button held down and reported to the program (for motion and its release).
    mouse_held: Option<u8>,
    /// The last cell a motion was reported for.
    mouse_cell: Option<(u16, u16)>,
    /// The grid last written to `TUIC_GUI_GRID_DUMP`.
    dumped: Option<Arc<Grid>>,
}

impl Tab {
    pub(crate) fn new(term: Term) -> Self {
        Self {
            term,
            selection: None,
            scroll: 0,
            printed: None,
            bells_seen: 0,
            mouse_held: None,
            mouse_cell: None,
            dumped: None,
        }
    }

    /// The grid's bell count when bells rang since the last call, for every tab (shown or not).
    pub(crate) fn new_bells(&mut self) -> Option<u64> {
        let bells = self.term.view.locked().grid.bells;
        let rang = bells > self.bells_seen;
        self.bells_seen = bells;
        rang.then_some(bells)
    }
}

/// The longest a frame that sent input waits for the program's echo before it paints. Software
/// GL takes 10-15 ms a frame under Xvfb: without the wait the echo, 0.2-1 ms behind the key,
/// waits for the key's own frame to finish painting, then paints in a second one. A key that
/// never echoes (a password) holds its frame this long.
const ECHO_WAIT: Duration = Duration::from_millis(4);

/// What the frame's input did, for the keystroke-to-pixel figure.
#[derive(Default)]
pub(crate) struct Typed {
    /// The grid's byte cursor when input was sent this frame, and when it was sent.
    pub sent_at_cursor: Option<u64>,
    pub sent_at: Option<Instant>,
    /// The byte cursor of the grid painted.
    pub painted_cursor: u64,
}

/// Paints the terminal (`flash`: its visual bell shows) and handles its input.
pub(crate) fn show(ui: &mut egui::Ui, tab: &mut Tab, view: &TermView, print_geometry: bool, flash: bool) -> Typed {
    let font = FontId::monospace(FONT_SIZE);
    let (cell_w, cell_h) = ui.ctx().fonts_mut(|f| (f.glyph_width(&font, 'M'), f.row_height(&font)));
    let cell = Vec2::new(cell_w.max(1.0), cell_h.max(1.0));
    let status_line = status_text(&view.status);
    for text in status_line.iter().chain(&view.refused) {
        ui.colored_label(Color32::from_rgb(230, 180, 80), text);
    }
    let available = ui.available_size();
    let rows = ((available.y / cell.y).floor() as u16).max(1);
    let cols = ((available.x / cell.x).floor() as u16).max(1);
    let grid = view.grid.clone();
    if (rows, cols) != (grid.rows, grid.cols) && matches!(view.status, TermStatus::Live | TermStatus::Connecting) {
        tab.term.send(TermInput::Resize { rows, cols });
    }
    let (rect, response) = ui.allocate_exact_size(available, Sense::click_and_drag());
    let origin = rect.min;
    if print_geometry {
        let line = format!(
            "geometry session={} x={:.1} y={:.1} cell_w={:.3} cell_h={:.3} rows={} cols={} ppp={}",
            tab.term.session_id,
            origin.x,
            origin.y,
            cell.x,
            cell.y,
            grid.rows,
            grid.cols,
            ui.ctx().pixels_per_point()
        );
        if tab.printed.as_deref() != Some(line.as_str()) {
            println!("{line}");
            tab.printed = Some(line);
        }
    }
    let mut typed = input(ui, tab, &grid, rect, &response, cell);
    typed.sent_at = typed.sent_at_cursor.map(|_| Instant::now());
    // The input's echo is painted in this frame when it comes quickly (see ECHO_WAIT).
    let grid = match typed.sent_at_cursor {
        Some(cursor) => tab.term.wait_for_output(cursor, ECHO_WAIT),
        None => grid,
    };
    dump(tab, &grid);
    paint(ui, rect, &grid, cell, &font, tab.selection, response.has_focus(), flash);
    typed.painted_cursor = grid.cursor_bytes;
    typed
}

/// The mouse, the selection, the clipboards and the keyboard: what the program is sent.
fn input(ui: &mut egui::Ui, tab: &mut Tab, grid: &Grid, rect: Rect, response: &egui::Response, cell: Vec2) -> Typed {
    let origin = rect.min;
    let cell_at = |pos: Pos2| -> (u16, u16) {
        let rel = pos - origin;
        let row = (rel.y / cell.y).floor().clamp(0.0, f32::from(grid.rows.saturating_sub(1)));
        let col = (rel.x / cell.x).floor().clamp(0.0, f32::from(grid.cols.saturating_sub(1)));
        (row as u16, col as u16)
    };
    if response.clicked() || response.drag_started() || response.middle_clicked() {
        response.request_focus();
    }
    // Shift selects instead of reporting; a selection drag stays one until its button is up,
    // even when Shift is let go first.
    let shift = ui.input(|i| i.modifiers.shift);
    let selecting = tab.selection.is_some() && (response.dragged() || response.drag_stopped());
    let reporting = grid.mouse_mode != vt100::MouseProtocolMode::None && !shift && !selecting && grid.scrollback == 0;
    let mut typed = Typed::default();
    if reporting {
        if mouse(ui, tab, grid, rect, &cell_at) {
            tab.selection = None;
            typed.sent_at_cursor = Some(grid.cursor_bytes);
        }
    } else {
        tab.mouse_held = None;
        if response.clicked() {
            tab.selection = None;
        }
        // The selection starts at the cell under the button-down, not where the drag was noticed.
        if response.drag_started() {
            let anchor = ui.input(|i| i.pointer.press_origin()).or(response.interact_pointer_pos());
            if let Some(anchor) = anchor {
                tab.selection = Some((cell_at(anchor), cell_at(anchor)));
            }
        }
        if response.dragged()
            && let (Some(pos), Some((anchor, _))) = (response.interact_pointer_pos(), tab.selection)
        {
            tab.selection = Some((anchor, cell_at(pos)));
        }
        if response.drag_stopped()
            && let Some((from, to)) = tab.selection
        {
            clipboard::set_primary(&grid.text_between(from, to));
        }
        if response.middle_clicked()
            && let Some(text) = clipboard::primary()
        {
            send(tab, keys::paste(&text, grid.bracketed_paste));
            typed.sent_at_cursor = Some(grid.cursor_bytes);
        }
        if response.hovered() {
            scroll(ui, tab, grid, cell.y);
        }
    }
    if !response.has_focus() {
        return typed;
    }
    ui.memory_mut(|m| {
        m.set_focus_lock_filter(
            response.id,
            egui::EventFilter { tab: true, horizontal_arrows: true, vertical_arrows: true, escape: true },
        )
    });
    if keyboard(ui, tab, grid) {
        typed.sent_at_cursor = Some(grid.cursor_bytes);
    }
    typed
}

/// Under `TUIC_GUI_GRID_DUMP=FILE` (tests), the shown grid as text each time it changes.
fn dump(tab: &mut Tab, grid: &Arc<Grid>) {
    static PATH: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    let Some(path) = PATH.get_or_init(|| std::env::var_os("TUIC_GUI_GRID_DUMP").map(Into::into)) else { return };
    if tab.dumped.as_ref().is_some_and(|d| Arc::ptr_eq(d, grid)) {
        return;
    }
    tab.dumped = Some(grid.clone());
    let text = format!(
        "session={} rows={} cols={} scrollback={} mouse={:?}/{:?}\n{}",
        tab.term.session_id,
        grid.rows,
        grid.cols,
        grid.scrollback,
        grid.mouse_mode,
        grid.mouse_encoding,
        grid.dump()
    );
    let tmp = path.with_extension("tmp");
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

fn send(tab: &mut Tab, bytes: Vec<u8>) {
    if tab.scroll != 0 {
        tab.scroll = 0;
        tab.term.send(TermInput::Scroll(0));
    }
    tab.term.send(TermInput::Bytes(bytes));
}

/// Mouse events to a program that turned reporting on; `true` when something was sent.
fn mouse(ui: &egui::Ui, tab: &mut Tab, grid: &Grid, rect: Rect, cell_at: &dyn Fn(Pos2) -> (u16, u16)) -> bool {
    use vt100::MouseProtocolMode as Mode;
    let events = ui.input(|i| i.events.clone());
    let mut out = Vec::new();
    for event in events {
        match event {
            egui::Event::PointerButton { pos, button, pressed, modifiers } => {
                let code = match button {
                    egui::PointerButton::Primary => 0,
                    egui::PointerButton::Middle => 1,
                    egui::PointerButton::Secondary => 2,
                    _ => continue,
                };
                if pressed && !rect.contains(pos) {
                    continue;
                }
                if !pressed && tab.mouse_held != Some(code) {
                    continue;
                }
                tab.mouse_held = pressed.then_some(code);
                let at = cell_at(pos);
                tab.mouse_cell = Some(at);
                if !pressed && grid.mouse_mode == Mode::Press {
                    continue;
                }
                let code = if grid.mouse_mode == Mode::Press { code } else { code | keys::mouse_modifiers(modifiers) };
                out.extend(keys::mouse(grid.mouse_encoding, code, !pressed, at).unwrap_or_default());
            }
            egui::Event::PointerMoved(pos) => {
                let wanted = match grid.mouse_mode {
                    Mode::AnyMotion => rect.contains(pos),
                    Mode::ButtonMotion => tab.mouse_held.is_some(),
                    _ => false,
                };
                let at = cell_at(pos);
                if !wanted || tab.mouse_cell == Some(at) {
                    continue;
                }
                tab.mouse_cell = Some(at);
                let mods = ui.input(|i| i.modifiers);
                let code = 32 + tab.mouse_held.unwrap_or(3) + keys::mouse_modifiers(mods);
                out.extend(keys::mouse(grid.mouse_encoding, code, false, at).unwrap_or_default());
            }
            egui::Event::MouseWheel { delta, modifiers, .. } if grid.mouse_mode != Mode::Press => {
                let Some(pos) = ui.input(|i| i.pointer.latest_pos()) else { continue };
                if !rect.contains(pos) || delta.y == 0.0 {
                    continue;
                }
                let code = if delta.y > 0.0 { 64 } else { 65 } + keys::mouse_modifiers(modifiers);
                out.extend(keys::mouse(grid.mouse_encoding, code, false, cell_at(pos)).unwrap_or_default());
            }
            _ => {}
        }
    }
    if out.is_empty() {
        return false;
    }
    send(tab, out);
    true
}

fn status_text(status: &TermStatus) -> Option<String> {
    match status {
        TermStatus::Live => None,
        TermStatus::Connecting => Some("connecting…".into()),
        TermStatus::Offline(why) => Some(format!("offline, reconnecting: {why}")),
        TermStatus::Exited(Some(code)) => Some(format!("the program exited with code {code}")),
        TermStatus::Exited(None) => Some("the program exited".into()),
        TermStatus::Gone(why) => Some(why.clone()),
    }
}

#[allow(clippy::too_many_arguments)]
fn paint(
    ui: &egui::Ui,
    rect: Rect,
    grid: &Grid,
    cell: Vec2,
    font: &FontId,
    selection: Option<((u16, u16), (u16, u16))>,
    focused: bool,
    flash: bool,
) {
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, DEFAULT_BG);
    let at = |row: u16, col: u16| rect.min + Vec2::new(f32::from(col) * cell.x, f32::from(row) * cell.y);
    for row in 0..grid.rows {
        // Backgrounds first, in runs of one colour.
        let mut col = 0;
        while col < grid.cols {
            let bg = grid.cell(row, col).bg;
            let mut end = col + 1;
            while end < grid.cols && grid.cell(row, end).bg == bg {
                end += 1;
            }
            if bg != DEFAULT_BG {
                painter.rect_filled(Rect::from_min_max(at(row, col), at(row, end) + Vec2::new(0.0, cell.y)), 0.0, bg);
            }
            col = end;
        }
        // Text: runs of plain ASCII in one style share a galley (egui caches it between frames);
        // anything else (wide, combining, symbols from a fallback font, line drawing) is placed
        // in its own cell so a glyph of another width never shifts the rest of the row.
        let mut col = 0;
        while col < grid.cols {
            let first = grid.cell(row, col);
            if first.flags & WIDE_CONTINUATION != 0 {
                col += 1;
                continue;
            }
            let style = first.flags & !(WIDE | WIDE_CONTINUATION);
            let origin = at(row, col);
            let simple = |c: &Cell, index: u16| {
                c.ch.is_ascii() && c.flags & (WIDE | WIDE_CONTINUATION) == 0 && !grid.has_cluster(row, index)
            };
            if !simple(&first, col) {
                let width = if first.flags & WIDE != 0 { 2.0 } else { 1.0 };
                let span = Rect::from_min_size(origin, Vec2::new(cell.x * width, cell.y));
                if !special(&painter, span, first.ch, first.fg) {
                    let mut text = String::new();
                    grid.push_text(row, col, &mut text);
                    let galley = painter.layout_job(job(text, font, first.fg, style));
                    let x = span.center().x - galley.size().x / 2.0;
                    painter.galley(Pos2::new(x, origin.y), galley.clone(), first.fg);
                    if style & BOLD != 0 {
                        painter.galley(Pos2::new(x + 0.6, origin.y), galley, first.fg);
                    }
                }
                decorate(&painter, span, style, first.fg);
                col += if first.flags & WIDE != 0 { 2 } else { 1 };
                continue;
            }
            let mut end = col + 1;
            let mut text = String::new();
            text.push(first.ch);
            while end < grid.cols {
                let next = grid.cell(row, end);
                if (next.fg, next.flags) != (first.fg, style) || !simple(&next, end) {
                    break;
                }
                text.push(next.ch);
                end += 1;
            }
            let run = Rect::from_min_max(origin, at(row, end) + Vec2::new(0.0, cell.y));
            if !text.trim().is_empty() {
                let galley = painter.layout_job(job(text, font, first.fg, style));
                painter.galley(run.min, galley.clone(), first.fg);
                if style & BOLD != 0 {
                    painter.galley(run.min + Vec2::new(0.6, 0.0), galley, first.fg);
                }
            }
            decorate(&painter, run, style, first.fg);
            col = end;
        }
    }
    if let Some((from, to)) = selection {
        let (start, end) = if from <= to { (from, to) } else { (to, from) };
        for row in start.0..=end.0 {
            let first = if row == start.0 { start.1 } else { 0 };
            let last = if row == end.0 { end.1 + 1 } else { grid.cols };
            painter.rect_filled(
                Rect::from_min_max(at(row, first), at(row, last) + Vec2::new(0.0, cell.y)),
                0.0,
                SELECTION,
            );
        }
    }
    if let Some((row, col)) = grid.cursor {
        let cursor = Rect::from_min_size(at(row, col), cell);
        let colour = Color32::from_rgb(220, 220, 220);
        if focused {
            painter.rect_filled(cursor, 0.0, colour.gamma_multiply(0.7));
        } else {
            painter.rect_stroke(cursor, 0.0, Stroke::new(1.0, colour), egui::StrokeKind::Inside);
        }
    }
    if grid.scrollback > 0 {
        let text = format!("scrolled back {} of {} lines · Shift+PgDn", grid.scrollback, grid.scrollback_len);
        let galley = painter.layout_no_wrap(text, FontId::proportional(12.0), Color32::BLACK);
        let size = galley.size() + Vec2::new(12.0, 4.0);
        let badge = Rect::from_min_size(Pos2::new(rect.max.x - size.x - 4.0, rect.min.y + 4.0), size);
        painter.rect_filled(badge, 4.0, Color32::from_rgb(230, 180, 80));
        painter.galley(badge.min + Vec2::new(6.0, 2.0), galley, Color32::BLACK);
    }
    if flash {
        painter.rect_filled(rect, 0.0, Color32::from_white_alpha(70));
    }
}

/// One run's text in its style: italic as egui slants it.
fn job(text: String, font: &FontId, colour: Color32, style: u8) -> egui::text::LayoutJob {
    let format =
        egui::TextFormat { font_id: font.clone(), color: colour, italics: style & ITALIC != 0, ..Default::default() };
    egui::text::LayoutJob::single_section(text, format)
}

/// Underline and strike-through across a run of cells.
fn decorate(painter: &egui::Painter, run: Rect, style: u8, colour: Color32) {
    if style & UNDERLINE != 0 {
        let y = run.max.y - 1.5;
        painter.line_segment([Pos2::new(run.min.x, y), Pos2::new(run.max.x, y)], Stroke::new(1.0, colour));
    }
    if style & STRIKE != 0 {
        let y = run.center().y.round() + 0.5;
        painter.line_segment([Pos2::new(run.min.x, y), Pos2::new(run.max.x, y)], Stroke::new(1.0, colour));
    }
}

/// Line drawing and block elements drawn as shapes, as xterm does, so they join across cells
/// whatever the font. `false` when the character is not one of them.
fn special(painter: &egui::Painter, span: Rect, ch: char, colour: Color32) -> bool {
    if let Some([left, right, up, down]) = box_lines(ch) {
        let c = Pos2::new(span.center().x.round() + 0.5, span.center().y.round() + 0.5);
        let arm = |to: Pos2, weight: u8| match weight {
            1 => {
                painter.line_segment([c, to], Stroke::new(1.0, colour));
            }
            2 => {
                painter.line_segment([c, to], Stroke::new(2.0, colour));
            }
            3 => {
                let d = if to.x == c.x { Vec2::new(1.5, 0.0) } else { Vec2::new(0.0, 1.5) };
                painter.line_segment([c - d, to - d], Stroke::new(1.0, colour));
                painter.line_segment([c + d, to + d], Stroke::new(1.0, colour));
            }
            _ => {}
        };
        // Arms overlap the centre by half a stroke so corners close.
        arm(Pos2::new(span.min.x, c.y), left);
        arm(Pos2::new(span.max.x, c.y), right);
        arm(Pos2::new(c.x, span.min.y), up);
        arm(Pos2::new(c.x, span.max.y), down);
        return true;
    }
    let (w, h) = (span.width(), span.height());
    let part = |x0: f32, y0: f32, x1: f32, y1: f32| {
        Rect::from_min_max(span.min + Vec2::new(w * x0, h * y0), span.min + Vec2::new(w * x1, h * y1))
    };
    let (area, alpha) = match ch {
        '█' => (part(0.0, 0.0, 1.0, 1.0), 1.0),
        '▀' => (part(0.0, 0.0, 1.0, 0.5), 1.0),
        '▄' => (part(0.0, 0.5, 1.0, 1.0), 1.0),
        '▌' => (part(0.0, 0.0, 0.5, 1.0), 1.0),
        '▐' => (part(0.5, 0.0, 1.0, 1.0), 1.0),
        '░' => (part(0.0, 0.0, 1.0, 1.0), 0.25),
        '▒' => (part(0.0, 0.0, 1.0, 1.0), 0.5),
        '▓' => (part(0.0, 0.0, 1.0, 1.0), 0.75),
        '▁'..='▇' => {
            let eighths = f32::from(ch as u8 & 0x0f);
            (part(0.0, 1.0 - eighths / 8.0, 1.0, 1.0), 1.0)
        }
        '▉'..='▏' => {
            let eighths = 8.0 - f32::from((ch as u32 - 0x2588) as u8);
            (part(0.0, 0.0, eighths / 8.0, 1.0), 1.0)
        }
        _ => return false,
    };
    painter.rect_filled(area, 0.0, colour.gamma_multiply(alpha));
    true
}

/// The arms of a box-drawing character: left, right, up, down; 1 light, 2 heavy, 3 double.
fn box_lines(ch: char) -> Option<[u8; 4]> {
    Some(match ch {
        '─' | '┄' | '┈' | '╌' => [1, 1, 0, 0],
        '━' | '┅' | '┉' | '╍' => [2, 2, 0, 0],
        '│' | '┆' | '┊' | '╎' => [0, 0, 1, 1],
        '┃' | '┇' | '┋' | '╏' => [0, 0, 2, 2],
        '┌' | '╭' => [0, 1, 0, 1],
        '┐' | '╮' => [1, 0, 0, 1],
        '└' | '╰' => [0, 1, 1, 0],
        '┘' | '╯' => [1, 0, 1, 0],
        '├' => [0, 1, 1, 1],
        '┤' => [1, 0, 1, 1],
        '┬' => [1, 1, 0, 1],
        '┴' => [1, 1, 1, 0],
        '┼' => [1, 1, 1, 1],
        '┏' => [0, 2, 0, 2],
        '┓' => [2, 0, 0, 2],
        '┗' => [0, 2, 2, 0],
        '┛' => [2, 0, 2, 0],
        '┣' => [0, 2, 2, 2],
        '┫' => [2, 0, 2, 2],
        '┳' => [2, 2, 0, 2],
        '┻' => [2, 2, 2, 0],
        '╋' => [2, 2, 2, 2],
        '═' => [3, 3, 0, 0],
        '║' => [0, 0, 3, 3],
        '╔' => [0, 3, 0, 3],
        '╗' => [3, 0, 0, 3],
        '╚' => [0, 3, 3, 0],
        '╝' => [3, 0, 3, 0],
        '╠' => [0, 3, 3, 3],
        '╣' => [3, 0, 3, 3],
        '╦' => [3, 3, 0, 3],
        '╩' => [3, 3, 3, 0],
        '╬' => [3, 3, 3, 3],
        '╴' => [1, 0, 0, 0],
        '╶' => [0, 1, 0, 0],
        '╵' => [0, 0, 1, 0],
        '╷' => [0, 0, 0, 1],
        _ => return None,
    })
}

/// The mouse wheel: scrollback on the main screen; on the alternate screen (a full-screen
/// program) it sends arrow keys, as terminals do.
fn scroll(ui: &egui::Ui, tab: &mut Tab, grid: &Grid, row_height: f32) {
    let lines: f32 = ui.input(|i| {
        i.events
            .iter()
            .map(|e| match e {
                egui::Event::MouseWheel { unit: egui::MouseWheelUnit::Line, delta, .. } => delta.y,
                egui::Event::MouseWheel { unit: egui::MouseWheelUnit::Point, delta, .. } => delta.y / row_height,
                egui::Event::MouseWheel { unit: egui::MouseWheelUnit::Page, delta, .. } => {
                    delta.y * f32::from(grid.rows)
                }
                _ => 0.0,
            })
            .sum()
    });
    // Three rows per notch, as terminals scroll.
    let lines = (lines * 3.0).round() as i64;
    if lines == 0 {
        return;
    }
    if grid.alternate_screen {
        let key = if lines > 0 { egui::Key::ArrowUp } else { egui::Key::ArrowDown };
        if let Some(bytes) = keys::encode(key, egui::Modifiers::NONE, grid.application_cursor) {
            tab.term.send(TermInput::Bytes(bytes.repeat(lines.unsigned_abs().min(10) as usize)));
        }
        return;
    }
    scroll_by(tab, grid, lines);
}

/// Scrolls the view back (positive) or forward by rows, within what the parser holds.
fn scroll_by(tab: &mut Tab, grid: &Grid, lines: i64) {
    let current = tab.scroll.min(grid.scrollback_len) as i64;
    tab.scroll = (current + lines).clamp(0, grid.scrollback_len as i64) as usize;
    tab.term.send(TermInput::Scroll(tab.scroll));
}

fn keyboard(ui: &egui::Ui, tab: &mut Tab, grid: &Grid) -> bool {
    let events = ui.input(|i| i.events.clone());
    let mut out: Vec<u8> = Vec::new();
    // The modifiers of the key event a text event belongs to (it follows its key event), and
    // whether that key was already sent: Alt+letter goes once, as ESC and the letter.
    let mut key_sent = false;
    let mut key_alt = false;
    let mut key_ctrl = ui.input(|i| i.modifiers.ctrl);
    for event in events {
        match event {
            egui::Event::Text(text) => {
                let dropped = key_sent || (key_ctrl && !key_alt);
                if dropped {
                    // Already sent by its key event (Alt+letter), or a Ctrl chord's text.
                } else if key_alt {
                    out.push(0x1b);
                    out.extend_from_slice(text.as_bytes());
                } else {
                    out.extend_from_slice(text.as_bytes());
                }
                key_sent = false;
            }
            egui::Event::Key { key, pressed: true, modifiers, .. } => {
                key_sent = true;
                key_alt = modifiers.alt && !modifiers.ctrl;
                key_ctrl = modifiers.ctrl;
                let page = i64::from(grid.rows.saturating_sub(1).max(1));
                match key {
                    egui::Key::C if modifiers.ctrl && modifiers.shift => {
                        if let Some((from, to)) = tab.selection {
                            clipboard::set_clipboard(&grid.text_between(from, to));
                        }
                    }
                    egui::Key::V if modifiers.ctrl && modifiers.shift => {
                        if let Some(text) = clipboard::clipboard() {
                            out.extend_from_slice(&keys::paste(&text, grid.bracketed_paste));
                        }
                    }
                    egui::Key::Insert if modifiers.shift_only() => {
                        if let Some(text) = clipboard::primary() {
                            out.extend_from_slice(&keys::paste(&text, grid.bracketed_paste));
                        }
                    }
                    egui::Key::PageUp if modifiers.shift_only() && !grid.alternate_screen => scroll_by(tab, grid, page),
                    egui::Key::PageDown if modifiers.shift_only() && !grid.alternate_screen => {
                        scroll_by(tab, grid, -page)
                    }
                    _ => match keys::encode(key, modifiers, grid.application_cursor) {
                        Some(bytes) => out.extend_from_slice(&bytes),
                        None => key_sent = false,
                    },
                }
            }
            // egui turns Ctrl+C/X/V into clipboard events; in a terminal they are control keys,
            // as in xterm (copying is Ctrl+Shift+C, or just selecting).
            egui::Event::Copy => out.push(0x03),
            egui::Event::Cut => out.push(0x18),
            egui::Event::Paste(_) => out.push(0x16),
            _ => {}
        }
    }
    if out.is_empty() {
        return false;
    }
    send(tab, out);
    true
}
