//! What a terminal sends for a key: xterm's sequences for the keys that are not text, Ctrl and
//! Alt combinations, and bracketed paste.

use eframe::egui::{Key, Modifiers};

/// The bytes for a key press, or `None` when the key arrives as text instead (plain and
/// shifted printable keys).
pub(crate) fn encode(key: Key, mods: Modifiers, application_cursor: bool) -> Option<Vec<u8>> {
    // xterm's modifier parameter: 1 + shift + 2*alt + 4*ctrl.
    let param = 1 + u8::from(mods.shift) + 2 * u8::from(mods.alt) + 4 * u8::from(mods.ctrl);
    let modified = param > 1;
    let csi_letter = |letter: char| -> Vec<u8> {
        if modified {
            format!("\x1b[1;{param}{letter}").into_bytes()
        } else if application_cursor {
            format!("\x1bO{letter}").into_bytes()
        } else {
            format!("\x1b[{letter}").into_bytes()
        }
    };
    let tilde = |n: u8| -> Vec<u8> {
        if modified { format!("\x1b[{n};{param}~").into_bytes() } else { format!("\x1b[{n}~").into_bytes() }
    };
    let ss3 = |letter: char| -> Vec<u8> {
        if modified { format!("\x1b[1;{param}{letter}").into_bytes() } else { format!("\x1bO{letter}").into_bytes() }
    };
    let alt = |bytes: &[u8]| -> Vec<u8> {
        let mut out = if mods.alt { vec![0x1b] } else { Vec::new() };
        out.extend_from_slice(bytes);
        out
    };
    let bytes = match key {
        Key::ArrowUp => csi_letter('A'),
        Key::ArrowDown => csi_letter('B'),
        Key::ArrowRight => csi_letter('C'),
        Key::ArrowLeft => csi_letter('D'),
        Key::Home => csi_letter('H'),
        Key::End => csi_letter('F'),
        Key::Insert => tilde(2),
        Key::Delete => tilde(3),
        Key::PageUp => tilde(5),
        Key::PageDown => tilde(6),
        Key::F1 => ss3('P'),
        Key::F2 => ss3('Q'),
        Key::F3 => ss3('R'),
        Key::F4 => ss3('S'),
        Key::F5 => tilde(15),
        Key::F6 => tilde(17),
        Key::F7 => tilde(18),
        Key::F8 => tilde(19),
        Key::F9 => tilde(20),
        Key::F10 => tilde(21),
        Key::F11 => tilde(23),
        Key::F12 => tilde(24),
        Key::Enter => alt(b"\r"),
        Key::Tab if mods.shift => b"\x1b[Z".to_vec(),
        Key::Tab => alt(b"\t"),
        Key::Backspace if mods.ctrl => alt(b"\x08"),
        Key::Backspace => alt(b"\x7f"),
        Key::Escape => b"\x1b".to_vec(),
        Key::Space if mods.ctrl => alt(&[0]),
        Key::Space if mods.alt => alt(b" "),
        _ => return chord(key, mods),
    };
    Some(bytes)
}

/// Ctrl and Alt with a letter, digit or punctuation key; plain keys arrive as text.
fn chord(key: Key, mods: Modifiers) -> Option<Vec<u8>> {
    if !mods.ctrl && !mods.alt {
        return None;
    }
    let base = match key {
        Key::OpenBracket => '[',
        Key::CloseBracket => ']',
        Key::Backslash => '\\',
        Key::Slash => '/',
        Key::Minus => '-',
        Key::Period => '.',
        Key::Comma => ',',
        Key::Semicolon => ';',
        _ => {
            let name = key.name();
            let mut chars = name.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if c.is_ascii_alphanumeric() => c.to_ascii_lowercase(),
                _ => return None,
            }
        }
    };
    let byte = if mods.ctrl {
        match base {
            'a'..='z' => base as u8 - b'a' + 1,
            '[' => 0x1b,
            '\\' => 0x1c,
            ']' => 0x1d,
            '/' | '-' => 0x1f,
            '2' => 0,
            '3'..='7' => base as u8 - b'3' + 0x1b,
            '8' => 0x7f,
            _ => return None,
        }
    } else if mods.shift {
        base.to_ascii_uppercase() as u8
    } else {
        base as u8
    };
    let mut out = if mods.alt { vec![0x1b] } else { Vec::new() };
    out.push(byte);
    Some(out)
}

/// Pasted text as the program expects it: newlines as Enter, and wrapped in the bracketed-paste
/// markers when the program turned that mode on (any marker inside is dropped, so a paste cannot
/// end the bracket early).
pub(crate) fn paste(text: &str, bracketed: bool) -> Vec<u8> {
    let text = text.replace("\r\n", "\r").replace('\n', "\r");
    if bracketed {
        let inner = text.replace("\x1b[201~", "").replace("\x1b[200~", "");
        format!("\x1b[200~{inner}\x1b[201~").into_bytes()
    } else {
        text.into_bytes()
    }
}

/// A mouse event as the program asked to hear it: the button code (0 left, 1 middle, 2 right,
/// 64/65 wheel up/down; +32 for motion; shift 4, alt 8, ctrl 16), at a 0-based cell, in the
/// legacy `CSI M` encoding (UTF-8 extended when asked) or SGR 1006 (`CSI <b;x;yM`, `m` on release).
pub(crate) fn mouse(
    encoding: vt100::MouseProtocolEncoding,
    code: u8,
    released: bool,
    (row, col): (u16, u16),
) -> Option<Vec<u8>> {
    let (x, y) = (u32::from(col) + 1, u32::from(row) + 1);
    match encoding {
        vt100::MouseProtocolEncoding::Sgr => {
            Some(format!("\x1b[<{code};{x};{y}{}", if released { 'm' } else { 'M' }).into_bytes())
        }
        legacy => {
            // The legacy forms cannot name which button was released.
            let code = if released { (code & !3) | 3 } else { code };
            let mut out = b"\x1b[M".to_vec();
            out.push(32 + code);
            for v in [x, y] {
                let v = 32 + v;
                match legacy {
                    vt100::MouseProtocolEncoding::Utf8 => {
                        let c = char::from_u32(v)?;
                        let mut buf = [0; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    _ => out.push(u8::try_from(v).ok()?),
                }
            }
            Some(out)
        }
    }
}

/// The modifier bits of a mouse event's button code.
pub(crate) fn mouse_modifiers(mods: Modifiers) -> u8 {
    4 * u8::from(mods.shift) + 8 * u8::from(mods.alt) + 16 * u8::from(mods.ctrl)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Modifiers = Modifiers::NONE;

    #[test]
    fn arrows_follow_the_cursor_key_mode_and_modifiers() {
        assert_eq!(encode(Key::ArrowUp, NONE, false).as_deref(), Some(&b"\x1b[A"[..]));
        assert_eq!(encode(Key::ArrowUp, NONE, true).as_deref(), Some(&b"\x1bOA"[..]));
        assert_eq!(encode(Key::ArrowLeft, Modifiers::CTRL, false).as_deref(), Some(&b"\x1b[1;5D"[..]));
        assert_eq!(encode(Key::Home, Modifiers::SHIFT, false).as_deref(), Some(&b"\x1b[1;2H"[..]));
    }

    #[test]
    fn paging_and_function_keys_use_xterm_sequences() {
        assert_eq!(encode(Key::PageUp, NONE, false).as_deref(), Some(&b"\x1b[5~"[..]));
        assert_eq!(encode(Key::PageDown, Modifiers::ALT, false).as_deref(), Some(&b"\x1b[6;3~"[..]));
        assert_eq!(encode(Key::F1, NONE, false).as_deref(), Some(&b"\x1bOP"[..]));
        assert_eq!(encode(Key::F5, NONE, false).as_deref(), Some(&b"\x1b[15~"[..]));
        assert_eq!(encode(Key::F12, Modifiers::CTRL, false).as_deref(), Some(&b"\x1b[24;5~"[..]));
    }

    #[test]
    fn control_and_alt_chords_send_control_bytes_and_escape_prefixes() {
        assert_eq!(encode(Key::C, Modifiers::CTRL, false), Some(vec![3]));
        assert_eq!(encode(Key::D, Modifiers::CTRL, false), Some(vec![4]));
        assert_eq!(encode(Key::OpenBracket, Modifiers::CTRL, false), Some(vec![0x1b]));
        assert_eq!(encode(Key::B, Modifiers::ALT, false), Some(b"\x1bb".to_vec()));
        assert_eq!(encode(Key::X, Modifiers::CTRL | Modifiers::ALT, false), Some(vec![0x1b, 0x18]));
        assert_eq!(encode(Key::A, NONE, false), None, "plain letters arrive as text");
    }

    #[test]
    fn enter_tab_escape_and_backspace() {
        assert_eq!(encode(Key::Enter, NONE, false), Some(b"\r".to_vec()));
        assert_eq!(encode(Key::Tab, NONE, false), Some(b"\t".to_vec()));
        assert_eq!(encode(Key::Tab, Modifiers::SHIFT, false), Some(b"\x1b[Z".to_vec()));
        assert_eq!(encode(Key::Escape, NONE, false), Some(b"\x1b".to_vec()));
        assert_eq!(encode(Key::Backspace, NONE, false), Some(vec![0x7f]));
    }

    #[test]
    fn mouse_reports_in_sgr_and_the_legacy_encoding() {
        use vt100::MouseProtocolEncoding as E;
        assert_eq!(mouse(E::Sgr, 0, false, (4, 9)), Some(b"\x1b[<0;10;5M".to_vec()));
        assert_eq!(mouse(E::Sgr, 2, true, (0, 0)), Some(b"\x1b[<2;1;1m".to_vec()));
        assert_eq!(mouse(E::Default, 0, false, (0, 0)), Some(b"\x1b[M !!".to_vec()));
        assert_eq!(mouse(E::Default, 1, true, (1, 2)), Some(b"\x1b[M##\"".to_vec()), "a release is button 3");
        assert_eq!(mouse(E::Default, 0, false, (0, 300)), None, "beyond the legacy range");
        assert_eq!(mouse(E::Utf8, 0, false, (0, 300)).map(|b| b.len()), Some(7));
    }

    #[test]
    fn a_paste_is_bracketed_only_when_the_program_asked() {
        assert_eq!(paste("a\nb", false), b"a\rb".to_vec());
        assert_eq!(paste("x\x1b[201~y", true), b"\x1b[200~xy\x1b[201~".to_vec());
    }
}
