//! The daemon is the terminal: the queries a program sends its terminal (device attributes,
//! status and cursor reports, mode and colour queries, the window size, the terminal's version)
//! are answered here from the session's own screen model, once, as tmux does, whether no client
//! or several are attached. Clients never answer them. Pure: the screen model's callbacks call
//! these and queue the replies as the terminal's input.

use vt100::{MouseProtocolEncoding, MouseProtocolMode, Screen};

/// The palette the colour queries report (OSC 10 foreground, 11 background, 12 cursor): tuic-gui's
/// dark scheme, so programs that pick a palette by the background (vim) pick the dark one.
const FOREGROUND: &str = "rgb:d8d8/d8d8/d8d8";
const BACKGROUND: &str = "rgb:1e1e/1e1e/1e1e";
const CURSOR: &str = "rgb:d8d8/d8d8/d8d8";

/// The reply to a CSI sequence vt100 does not handle itself, if it is a query.
pub(super) fn answer_csi(
    screen: &Screen,
    i1: Option<u8>,
    i2: Option<u8>,
    params: &[&[u16]],
    c: char,
) -> Option<Vec<u8>> {
    let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
    let reply = match (i1, i2, c) {
        // DA1: a VT100 with advanced video, as tmux says of itself.
        (None, None, 'c') if first == 0 => "\x1b[?1;2c".to_owned(),
        // DA2: a VT220-class terminal, firmware 10, no ROM cartridge.
        (Some(b'>'), None, 'c') if first == 0 => "\x1b[>1;10;0c".to_owned(),
        // DSR: "terminal OK".
        (None, None, 'n') if first == 5 => "\x1b[0n".to_owned(),
        // CPR: where the cursor is now, 1-based.
        (None, None, 'n') if first == 6 => {
            let (row, col) = screen.cursor_position();
            format!("\x1b[{};{}R", row + 1, col + 1)
        }
        // DECXCPR: the same with the page.
        (Some(b'?'), None, 'n') if first == 6 => {
            let (row, col) = screen.cursor_position();
            format!("\x1b[?{};{};1R", row + 1, col + 1)
        }
        // XTVERSION.
        (Some(b'>'), None, 'q') if first == 0 => format!("\x1bP>|tuic({})\x1b\\", env!("CARGO_PKG_VERSION")),
        // DECRQM for the private modes the screen model tracks; 0: not recognised.
        (Some(b'?'), Some(b'$'), 'p') => format!("\x1b[?{first};{}$y", private_mode(screen, first)),
        // ANSI modes: none tracked.
        (Some(b'$'), None, 'p') => format!("\x1b[{first};0$y"),
        // XTWINOPS 18: the text area in characters.
        (None, None, 't') if first == 18 => {
            let (rows, cols) = screen.size();
            format!("\x1b[8;{rows};{cols}t")
        }
        _ => return None,
    };
    Some(reply.into_bytes())
}

/// DECRPM's answer for private mode `mode`: 1 set, 2 reset, 0 not recognised.
fn private_mode(screen: &Screen, mode: u16) -> u8 {
    let set = |on: bool| if on { 1 } else { 2 };
    let mouse = screen.mouse_protocol_mode();
    match mode {
        1 => set(screen.application_cursor()),
        25 => set(!screen.hide_cursor()),
        47 | 1047 | 1049 => set(screen.alternate_screen()),
        66 => set(screen.application_keypad()),
        9 => set(mouse == MouseProtocolMode::Press),
        1000 => set(mouse == MouseProtocolMode::PressRelease),
        1002 => set(mouse == MouseProtocolMode::ButtonMotion),
        1003 => set(mouse == MouseProtocolMode::AnyMotion),
        1005 => set(screen.mouse_protocol_encoding() == MouseProtocolEncoding::Utf8),
        1006 => set(screen.mouse_protocol_encoding() == MouseProtocolEncoding::Sgr),
        2004 => set(screen.bracketed_paste()),
        _ => 0,
    }
}

/// The reply to an OSC sequence vt100 does not handle itself: the colour queries, each `?`
/// answered for the colour its place names (`OSC 10;?;?` asks for the foreground and background).
pub(super) fn answer_osc(params: &[&[u8]]) -> Option<Vec<u8>> {
    let first: u16 = std::str::from_utf8(params.first()?).ok()?.parse().ok()?;
    if !(10..=12).contains(&first) {
        return None;
    }
    let mut reply = String::new();
    for (offset, param) in params[1..].iter().enumerate() {
        let which = first + offset as u16;
        let colour = match which {
            10 => FOREGROUND,
            11 => BACKGROUND,
            12 => CURSOR,
            _ => break,
        };
        if *param == b"?" {
            reply.push_str(&format!("\x1b]{which};{colour}\x1b\\"));
        }
    }
    (!reply.is_empty()).then(|| reply.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reply a byte stream draws from a screen model fed it, in order.
    fn replies(input: &[u8]) -> String {
        struct Collect(Vec<u8>);
        impl vt100::Callbacks for Collect {
            fn unhandled_csi(&mut self, s: &mut Screen, i1: Option<u8>, i2: Option<u8>, p: &[&[u16]], c: char) {
                self.0.extend(answer_csi(s, i1, i2, p, c).unwrap_or_default());
            }
            fn unhandled_osc(&mut self, _: &mut Screen, params: &[&[u8]]) {
                self.0.extend(answer_osc(params).unwrap_or_default());
            }
        }
        let nz = |n| std::num::NonZeroU16::new(n).unwrap();
        let mut parser = vt100::Parser::new_with_callbacks(nz(24), nz(80), 0, Collect(Vec::new()));
        parser.process(input);
        String::from_utf8(parser.callbacks().0.clone()).unwrap()
    }

    #[test]
    fn device_attributes_status_and_version_are_answered() {
        assert_eq!(replies(b"\x1b[c"), "\x1b[?1;2c");
        assert_eq!(replies(b"\x1b[0c"), "\x1b[?1;2c");
        assert_eq!(replies(b"\x1b[>c"), "\x1b[>1;10;0c");
        assert_eq!(replies(b"\x1b[5n"), "\x1b[0n");
        assert!(replies(b"\x1b[>q").starts_with("\x1bP>|tuic("));
    }

    #[test]
    fn the_cursor_report_says_where_the_cursor_is_after_what_came_before() {
        assert_eq!(replies(b"\x1b[6n"), "\x1b[1;1R");
        assert_eq!(replies(b"abc\r\nde\x1b[6n"), "\x1b[2;3R");
        assert_eq!(replies(b"\x1b[10;20H\x1b[?6n"), "\x1b[?10;20;1R");
        assert_eq!(replies(b"\x1b[6n\x1b[3;4H\x1b[6n"), "\x1b[1;1R\x1b[3;4R", "each query answered once, in order");
    }

    #[test]
    fn mode_queries_report_the_modes_the_screen_model_tracks() {
        assert_eq!(replies(b"\x1b[?2004$p"), "\x1b[?2004;2$y");
        assert_eq!(replies(b"\x1b[?2004h\x1b[?2004$p"), "\x1b[?2004;1$y");
        assert_eq!(replies(b"\x1b[?1049h\x1b[?1049$p\x1b[?25l\x1b[?25$p"), "\x1b[?1049;1$y\x1b[?25;2$y");
        assert_eq!(replies(b"\x1b[?1000h\x1b[?1006h\x1b[?1000$p\x1b[?1006$p"), "\x1b[?1000;1$y\x1b[?1006;1$y");
        assert_eq!(replies(b"\x1b[?7777$p"), "\x1b[?7777;0$y");
        assert_eq!(replies(b"\x1b[4$p"), "\x1b[4;0$y");
    }

    #[test]
    fn colour_and_size_queries_are_answered_and_the_rest_is_not() {
        assert_eq!(replies(b"\x1b]11;?\x07"), format!("\x1b]11;{BACKGROUND}\x1b\\"));
        assert_eq!(replies(b"\x1b]10;?;?\x1b\\"), format!("\x1b]10;{FOREGROUND}\x1b\\\x1b]11;{BACKGROUND}\x1b\\"));
        assert_eq!(replies(b"\x1b[18t"), "\x1b[8;24;80t");
        assert_eq!(replies(b"\x1b]11;rgb:0/0/0\x07"), "", "setting a colour asks nothing");
        assert_eq!(replies(b"\x1b[2J\x1b[31mred\x1b[0m\x1b]0;title\x07"), "");
    }
}
