//! The WebSocket's `output` frames, encoded straight into one buffer each: the JSON text frame
//! (byte-identical to serde's encoding of `StreamFrame::Output`, with an escape scan that skips 8
//! plain bytes at a time) and the opt-in binary frame (`?binary=1`: an 8-byte big-endian cursor,
//! then the raw bytes).

use std::fmt::Write;

/// Length of the binary frame's header: the cursor of its first byte, big-endian.
pub const BINARY_HEADER_BYTES: usize = 8;

/// `{"type":"output","data":"...","cursor":C,"total_written":T}`.
pub fn json_output(data: &str, cursor: u64, total_written: u64) -> String {
    // Headroom for the envelope and a line break escape every ~40 bytes, so typical output never
    // reallocates.
    let mut out = String::with_capacity(data.len() + data.len() / 20 + 96);
    out.push_str(r#"{"type":"output","data":""#);
    escape_into(&mut out, data);
    let _ = write!(out, r#"","cursor":{cursor},"total_written":{total_written}}}"#);
    out
}

/// Starts a binary output frame whose first byte has cursor `cursor`; append the bytes to it.
pub fn binary_output(cursor: u64, capacity: usize) -> Vec<u8> {
    let mut frame = Vec::with_capacity(BINARY_HEADER_BYTES + capacity);
    frame.extend_from_slice(&cursor.to_be_bytes());
    frame
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of the 8 in `word` is a control character, `"` or `\` (SWAR: the classic exact
/// "has a byte less than n" and "has a zero byte" tests).
fn needs_escape(word: u64) -> bool {
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    (below_space | zero_byte(word ^ (ONES * u64::from(b'"'))) | zero_byte(word ^ (ONES * u64::from(b'\\')))) != 0
}

/// Appends `s` JSON-escaped exactly as serde_json does: `"`, `\`, the short escapes `\b \t \n \f \r`,
/// other control characters as `\u00xx`; everything else (DEL and non-ASCII included) verbatim.
pub fn escape_into(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut plain_from = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            if !needs_escape(word) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(bytes.len());
        for (j, &b) in bytes.iter().enumerate().take(end).skip(i) {
            let short = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0..=0x1f => "",
                _ => continue,
            };
            // `j` indexes an ASCII byte, so both slice ends are character boundaries.
            out.push_str(&s[plain_from..j]);
            if short.is_empty() {
                let _ = write!(out, "\\u{b:04x}");
            } else {
                out.push_str(short);
            }
            plain_from = j + 1;
        }
        i = end;
    }
    out.push_str(&s[plain_from..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::session::StreamFrame;

    fn serde(data: &str, cursor: u64, total_written: u64) -> String {
        serde_json::to_string(&StreamFrame::Output { data: data.to_owned(), cursor, total_written }).unwrap()
    }

    #[test]
    fn every_character_class_encodes_as_serde_does() {
        let mut all = String::new();
        for c in (0u32..0x80).chain([0xe9, 0x20ac, 0x1f600]) {
            all.push(char::from_u32(c).unwrap());
        }
        // Every offset, so each special byte is met inside and across the 8-byte words.
        for from in 0..all.len() {
            if all.is_char_boundary(from) {
                let s = &all[from..];
                assert_eq!(json_output(s, 3, 3 + s.len() as u64), serde(s, 3, 3 + s.len() as u64), "from {from}");
            }
        }
        let base64ish = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\r\n".repeat(50);
        assert_eq!(json_output(&base64ish, 0, 7), serde(&base64ish, 0, 7));
        assert_eq!(json_output("", 0, 0), serde("", 0, 0));
    }

    #[test]
    fn the_binary_header_is_the_big_endian_cursor() {
        let mut frame = binary_output(0x0102_0304_0506_0708, 2);
        frame.extend_from_slice(b"hi");
        assert_eq!(frame, [1, 2, 3, 4, 5, 6, 7, 8, b'h', b'i']);
    }
}
