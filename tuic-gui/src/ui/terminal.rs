//! One terminal on screen: the last published [`Grid`] painted cell by cell (runs of one style
//! share a galley, which egui caches between frames), and the keyboard, mouse wheel, selection
//! and clipboard turned into what the program reads.

use eframe::egui::{self, Color32, FontId, Pos2, Rect, Sense, Stroke, Vec2};

use crate::grid::{BOLD, DEFAULT_BG, Grid, UNDERLINE, WIDE_CONTINUATION};
use crate::keys;
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
}

impl Tab {
    pub(crate) fn new(term: Term) -> Self {
        Self { term, selection: None, scroll: 0, printed: None }
    }
}

/// What the frame's input did, for the keystroke-to-pixel figure.
#[derive(Default)]
pub(crate) struct Typed {
    /// The grid's byte cursor when input was sent this frame.
    pub sent_at_cursor: Option<u64>,
}

pub(crate) fn show(ui: &mut egui::Ui, tab: &mut Tab, view: &TermView, print_geometry: bool) -> Typed {
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
    paint(ui, rect, &grid, cell, &font, tab.selection, response.has_focus());

    let cell_at = |pos: Pos2| -> (u16, u16) {
        let rel = pos - origin;
        let row = (rel.y / cell.y).floor().clamp(0.0, f32::from(grid.rows.saturating_sub(1)));
        let col = (rel.x / cell.x).floor().clamp(0.0, f32::from(grid.cols.saturating_sub(1)));
        (row as u16, col as u16)
    };
    if response.clicked() || response.drag_started() {
        response.request_focus();
    }
    if response.clicked() {
        tab.selection = None;
    }
    if let Some(pos) = response.interact_pointer_pos() {
        if response.drag_started() {
            tab.selection = Some((cell_at(pos), cell_at(pos)));
        } else if response.dragged()
            && let Some((anchor, _)) = tab.selection
        {
            tab.selection = Some((anchor, cell_at(pos)));
        }
    }
    if response.hovered() {
        scroll(ui, tab, &grid, cell.y);
    }
    if !response.has_focus() {
        return Typed::default();
    }
    ui.memory_mut(|m| {
        m.set_focus_lock_filter(
            response.id,
            egui::EventFilter { tab: true, horizontal_arrows: true, vertical_arrows: true, escape: true },
        )
    });
    keyboard(ui, tab, &grid)
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

fn paint(
    ui: &egui::Ui,
    rect: Rect,
    grid: &Grid,
    cell: Vec2,
    font: &FontId,
    selection: Option<((u16, u16), (u16, u16))>,
    focused: bool,
) {
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, DEFAULT_BG);
    let at = |row: u16, col: u16| rect.min + Vec2::new(f32::from(col) * cell.x, f32::from(row) * cell.y);
    for row in 0..grid.rows {
        let mut col = 0;
        while col < grid.cols {
            let first = grid.cell(row, col);
            let mut end = col + 1;
            let mut text = String::new();
            text.push(first.ch);
            while end < grid.cols {
                let next = grid.cell(row, end);
                if (next.fg, next.bg, next.flags & !WIDE_CONTINUATION) != (first.fg, first.bg, first.flags) {
                    break;
                }
                if next.flags & WIDE_CONTINUATION == 0 {
                    text.push(next.ch);
                }
                end += 1;
            }
            let run = Rect::from_min_max(at(row, col), at(row, end) + Vec2::new(0.0, cell.y));
            if first.bg != DEFAULT_BG {
                painter.rect_filled(run, 0.0, first.bg);
            }
            if !text.trim().is_empty() {
                let galley = painter.layout_no_wrap(text, font.clone(), first.fg);
                painter.galley(run.min, galley.clone(), first.fg);
                if first.flags & BOLD != 0 {
                    painter.galley(run.min + Vec2::new(0.6, 0.0), galley, first.fg);
                }
            }
            if first.flags & UNDERLINE != 0 {
                let y = run.max.y - 1.5;
                painter.line_segment([Pos2::new(run.min.x, y), Pos2::new(run.max.x, y)], Stroke::new(1.0, first.fg));
            }
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
    let current = tab.scroll.min(grid.scrollback.max(tab.scroll)) as i64;
    tab.scroll = (current + lines).max(0) as usize;
    tab.term.send(TermInput::Scroll(tab.scroll));
}

fn keyboard(ui: &egui::Ui, tab: &mut Tab, grid: &Grid) -> Typed {
    let events = ui.input(|i| i.events.clone());
    let mut out: Vec<u8> = Vec::new();
    for event in events {
        match event {
            egui::Event::Text(text) => {
                let mods = ui.input(|i| i.modifiers);
                if !mods.ctrl && !mods.alt {
                    out.extend_from_slice(text.as_bytes());
                }
            }
            egui::Event::Key { key, pressed: true, modifiers, .. } => {
                if modifiers.ctrl && modifiers.shift && key == egui::Key::C {
                    copy(ui, tab, grid);
                } else if let Some(bytes) = keys::encode(key, modifiers, grid.application_cursor) {
                    out.extend_from_slice(&bytes);
                }
            }
            egui::Event::Paste(text) => out.extend_from_slice(&keys::paste(&text, grid.bracketed_paste)),
            // Ctrl+C copies a selection when there is one; otherwise it interrupts, as in a terminal.
            egui::Event::Copy => {
                if tab.selection.is_some() {
                    copy(ui, tab, grid);
                } else {
                    out.push(0x03);
                }
            }
            egui::Event::Cut => out.push(0x18),
            _ => {}
        }
    }
    if out.is_empty() {
        return Typed::default();
    }
    if tab.scroll != 0 {
        tab.scroll = 0;
        tab.term.send(TermInput::Scroll(0));
    }
    tab.term.send(TermInput::Bytes(out));
    Typed { sent_at_cursor: Some(grid.cursor_bytes) }
}

fn copy(ui: &egui::Ui, tab: &mut Tab, grid: &Grid) {
    if let Some((from, to)) = tab.selection.take() {
        ui.ctx().copy_text(grid.text_between(from, to));
    }
}
