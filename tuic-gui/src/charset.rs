//! What vt100 leaves out, done on the byte stream before it parses: the G0/G1 character sets
//! (`ESC ( 0` DEC special graphics, `ESC ( A` the UK set, SI/SO to switch), the strike-through
//! attribute (SGR 9/29, carried to the cell as a combining long stroke, U+0336, which the grid
//! turns back into a flag), and the bell (BEL outside a string).
//!
//! The filter follows the escape-sequence grammar just far enough to know what is printed text:
//! parameters of a CSI and the body of an OSC/DCS are passed through untouched.

/// The combining mark a struck-through character carries from here to the grid (`grid.rs`).
pub(crate) const STRIKE_MARK: char = '\u{336}';

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Set {
    #[default]
    Ascii,
    DecGraphics,
    Uk,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Ground,
    /// Inside a UTF-8 sequence: continuation bytes still to come.
    Utf8(u8),
    Esc,
    /// `ESC` and an intermediate byte (`(`, `)`, `#`, ...), waiting for the final byte.
    EscIntermediate(u8),
    Csi,
    /// OSC, DCS, APC, PM or SOS body, up to BEL or ST.
    Str,
    StrEsc,
}

#[derive(Debug, Default)]
pub(crate) struct Filter {
    state: State,
    g: [Set; 2],
    /// 0 = G0 in GL (SI), 1 = G1 (SO).
    gl: usize,
    saved: ([Set; 2], usize),
    strike: bool,
    /// The current CSI's bytes (parameters and intermediates), to read SGR.
    csi: Vec<u8>,
    /// Bells seen since the last [`Filter::take_bell`].
    bells: u32,
}

impl Filter {
    /// Rewrites `input` for vt100: graphics-set characters mapped to Unicode, struck text marked.
    pub(crate) fn process(&mut self, input: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(input.len() + input.len() / 8);
        for &b in input {
            self.byte(b, &mut out);
        }
        out
    }

    /// Whether a bell rang since the last call.
    pub(crate) fn take_bell(&mut self) -> bool {
        std::mem::take(&mut self.bells) > 0
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        match self.state {
            State::Ground | State::Utf8(_) => self.ground(b, out),
            State::Esc => {
                out.push(b);
                self.state = match b {
                    b'[' => {
                        self.csi.clear();
                        State::Csi
                    }
                    b']' | b'P' | b'_' | b'^' | b'X' => State::Str,
                    0x20..=0x2f => State::EscIntermediate(b),
                    0x1b => State::Esc,
                    0x18 | 0x1a => State::Ground,
                    0x00..=0x1f => State::Esc,
                    _ => {
                        match b {
                            b'7' => self.saved = (self.g, self.gl),
                            b'8' => (self.g, self.gl) = self.saved,
                            b'c' => {
                                self.g = [Set::Ascii; 2];
                                self.gl = 0;
                                self.strike = false;
                            }
                            _ => {}
                        }
                        State::Ground
                    }
                };
            }
            State::EscIntermediate(i) => {
                out.push(b);
                match b {
                    0x20..=0x2f => {}
                    0x30..=0x7e => {
                        let set = match b {
                            b'0' => Set::DecGraphics,
                            b'A' => Set::Uk,
                            _ => Set::Ascii,
                        };
                        match i {
                            b'(' => self.g[0] = set,
                            b')' => self.g[1] = set,
                            _ => {}
                        }
                        self.state = State::Ground;
                    }
                    0x1b => self.state = State::Esc,
                    0x18 | 0x1a => self.state = State::Ground,
                    _ => {}
                }
            }
            State::Csi => {
                out.push(b);
                match b {
                    0x20..=0x3f => self.csi.push(b),
                    0x40..=0x7e => {
                        if b == b'm' {
                            self.sgr();
                        }
                        self.state = State::Ground;
                    }
                    0x1b => self.state = State::Esc,
                    0x18 | 0x1a => self.state = State::Ground,
                    _ => {}
                }
            }
            State::Str => {
                out.push(b);
                match b {
                    0x07 | 0x18 | 0x1a => self.state = State::Ground,
                    0x1b => self.state = State::StrEsc,
                    _ => {}
                }
            }
            State::StrEsc => {
                out.push(b);
                self.state = if b == b'\\' { State::Ground } else { State::Str };
            }
        }
    }

    fn ground(&mut self, b: u8, out: &mut Vec<u8>) {
        if let State::Utf8(left) = self.state {
            if b & 0xc0 == 0x80 {
                out.push(b);
                if left <= 1 {
                    self.state = State::Ground;
                    self.mark(out);
                } else {
                    self.state = State::Utf8(left - 1);
                }
                return;
            }
            // A broken sequence: vt100 shows its replacement character; start over with this byte.
            self.state = State::Ground;
        }
        match b {
            0x1b => {
                out.push(b);
                self.state = State::Esc;
            }
            0x07 => {
                self.bells += 1;
                out.push(b);
            }
            0x0e => self.gl = 1,
            0x0f => self.gl = 0,
            0x20..=0x7e => {
                match (self.g[self.gl], b) {
                    (Set::DecGraphics, 0x5f..=0x7e) => {
                        let mut buf = [0; 4];
                        out.extend_from_slice(dec_graphics(b).encode_utf8(&mut buf).as_bytes());
                    }
                    (Set::Uk, b'#') => out.extend_from_slice("£".as_bytes()),
                    _ => out.push(b),
                }
                self.mark(out);
            }
            0xc0..=0xdf => {
                out.push(b);
                self.state = State::Utf8(1);
            }
            0xe0..=0xef => {
                out.push(b);
                self.state = State::Utf8(2);
            }
            0xf0..=0xf7 => {
                out.push(b);
                self.state = State::Utf8(3);
            }
            _ => out.push(b),
        }
    }

    /// After a printed character: the strike mark when strike-through is on.
    fn mark(&self, out: &mut Vec<u8>) {
        if self.strike {
            let mut buf = [0; 4];
            out.extend_from_slice(STRIKE_MARK.encode_utf8(&mut buf).as_bytes());
        }
    }

    /// SGR: only strike-through (9 on; 29, 0 or nothing off) matters here; the colour
    /// parameters of 38/48/58 are skipped so their numbers are not read as attributes.
    fn sgr(&mut self) {
        if self.csi.first().is_some_and(|b| matches!(b, b'<'..=b'?')) || self.csi.iter().any(|b| *b < 0x30) {
            return;
        }
        let text = String::from_utf8_lossy(&self.csi).into_owned();
        let params: Vec<&str> = text.split(';').collect();
        let mut i = 0;
        while i < params.len() {
            let p = params[i];
            let head = p.split(':').next().unwrap_or("");
            match head {
                "" | "0" => self.strike = false,
                "9" => self.strike = true,
                "29" => self.strike = false,
                "38" | "48" | "58" if !p.contains(':') => match params.get(i + 1).copied() {
                    Some("5") => i += 2,
                    Some("2") => i += 4,
                    _ => {}
                },
                _ => {}
            }
            i += 1;
        }
    }
}

/// The DEC special graphics set for 0x5f..=0x7e, as xterm maps it to Unicode.
fn dec_graphics(b: u8) -> char {
    const TABLE: [char; 32] = [
        '\u{a0}', '◆', '▒', '␉', '␌', '␍', '␊', '°', '±', '␤', '␋', '┘', '┐', '┌', '└', '┼', '⎺', '⎻', '─', '⎼', '⎽',
        '├', '┤', '┴', '┬', '│', '≤', '≥', 'π', '≠', '£', '·',
    ];
    TABLE[usize::from(b - 0x5f)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8]) -> String {
        String::from_utf8(Filter::default().process(input)).unwrap()
    }

    #[test]
    fn dec_graphics_draws_a_box_and_b_returns_to_ascii() {
        assert_eq!(run(b"\x1b(0lqqk\r\nx  x\r\nmqqj\x1b(Bq"), "\x1b(0┌──┐\r\n│  │\r\n└──┘\x1b(Bq");
    }

    #[test]
    fn si_so_switch_between_g0_and_g1() {
        assert_eq!(run(b"\x1b)0q\x0eq\x0fq"), "\x1b)0q─q");
    }

    #[test]
    fn the_uk_set_maps_only_the_pound() {
        assert_eq!(run(b"\x1b(A#1\x1b(B#"), "\x1b(A£1\x1b(B#");
    }

    #[test]
    fn csi_parameters_and_osc_bodies_are_not_mapped() {
        // `q` and `l` as CSI finals/parameters, and inside an OSC title, stay as they are.
        assert_eq!(run(b"\x1b(0\x1b[?25l\x1b[2 q\x1b]0;lqk\x07q"), "\x1b(0\x1b[?25l\x1b[2 q\x1b]0;lqk\x07─");
    }

    #[test]
    fn the_state_survives_a_split_between_chunks() {
        let mut f = Filter::default();
        let mut out = f.process(b"\x1b(");
        out.extend(f.process(b"0q"));
        out.extend(f.process("é".as_bytes()));
        assert_eq!(String::from_utf8(out).unwrap(), "\x1b(0─é");
    }

    #[test]
    fn strike_through_marks_each_character_until_reset() {
        assert_eq!(run(b"a\x1b[9mbc\x1b[29md"), "a\x1b[9mb\u{336}c\u{336}\x1b[29md");
        assert_eq!(run("\x1b[1;9mé\x1b[mx".as_bytes()), "\x1b[1;9mé\u{336}\x1b[mx");
        assert_eq!(run(b"\x1b[38;5;9mx"), "\x1b[38;5;9mx", "a colour index 9 is not strike");
    }

    #[test]
    fn a_bell_is_counted_but_an_osc_terminator_is_not() {
        let mut f = Filter::default();
        f.process(b"\x1b]0;title\x07");
        assert!(!f.take_bell());
        f.process(b"ding\x07");
        assert!(f.take_bell());
        assert!(!f.take_bell());
    }
}
