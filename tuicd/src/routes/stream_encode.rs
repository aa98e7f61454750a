//! The WebSocket's `output` frames, encoded straight into one buffer each: the JSON text frame
//! (byte-identical to serde's encoding of `StreamFrame::Output`, escaped straight from the shared
//! output chunks by a scan that moves 8 plain bytes at a time) and the opt-in binary frame
//! (`?binary=1`: an 8-byte big-endian cursor, then the raw bytes).

use std::io::Write as _;

use crate::session::ring::incomplete_utf8_tail;

/// Length of the binary frame's header: the cursor of its first byte, big-endian.
pub(super) const BINARY_HEADER_BYTES: usize = 8;

const JSON_OUTPUT_HEAD: &[u8] = br#"{"type":"output","data":""#;

/// `{"type":"output","data":"...","cursor":C,"total_written":T}` for the contiguous output in
/// `parts` (a character may straddle two parts). Bytes that are not UTF-8 become U+FFFD, as
/// `String::from_utf8_lossy` makes them.
pub(super) fn json_output(parts: &[&[u8]], cursor: u64, total_written: u64) -> String {
    String::from_utf8(json_output_bytes(parts, cursor, total_written))
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// [`json_output`] as bytes, which are UTF-8: checked only when the output has a non-ASCII byte.
pub(super) fn json_output_bytes(parts: &[&[u8]], cursor: u64, total_written: u64) -> Vec<u8> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    // Headroom for the envelope and a line break escape every ~40 bytes, so typical output never
    // reallocates.
    let mut out = Vec::with_capacity(len + len / 20 + 96);
    out.extend_from_slice(JSON_OUTPUT_HEAD);
    let mut ascii = true;
    for part in parts {
        ascii &= escape_into(&mut out, part);
    }
    let _ = write!(out, r#"","cursor":{cursor},"total_written":{total_written}}}"#);
    // Escaping maps ASCII to ASCII and copies every other byte as it is, so the frame is UTF-8
    // exactly when the output is: this one check is the output's validation.
    if ascii || std::str::from_utf8(&out).is_ok() {
        return out;
    }
    let text = String::from_utf8_lossy(&parts.concat()).into_owned();
    json_output_bytes(&[text.as_bytes()], cursor, total_written)
}

/// The JSON `output` frame for the contiguous `parts`, whose first byte has cursor `cursor`, less an
/// incomplete UTF-8 character at their end, which is returned to go out with the rest of it (in
/// the next frame). No frame when only that character is left.
pub(super) fn json_output_holding_back(mut parts: Vec<&[u8]>, cursor: u64) -> (Option<Vec<u8>>, Vec<u8>) {
    let tail = take_incomplete_tail(&mut parts);
    let len: u64 = parts.iter().map(|p| p.len() as u64).sum();
    ((len > 0).then(|| json_output_bytes(&parts, cursor, cursor + len)), tail)
}

/// Removes an incomplete UTF-8 character from the end of the contiguous `parts` (it may straddle
/// parts) and returns its bytes, to be sent with the rest of it.
fn take_incomplete_tail(parts: &mut Vec<&[u8]>) -> Vec<u8> {
    let mut last = [0u8; 3];
    let mut got = 0;
    for part in parts.iter().rev() {
        for &b in part.iter().rev().take(last.len() - got) {
            got += 1;
            last[last.len() - got] = b;
        }
    }
    let mut hold = incomplete_utf8_tail(&last[last.len() - got..]);
    let mut tail = Vec::with_capacity(hold);
    while let Some(part) = parts.last_mut().filter(|_| hold > 0) {
        let take = hold.min(part.len());
        let (keep, taken) = part.split_at(part.len() - take);
        tail.splice(0..0, taken.iter().copied());
        *part = keep;
        hold -= take;
        if part.is_empty() {
            parts.pop();
        }
    }
    tail
}

/// Starts a binary output frame whose first byte has cursor `cursor`; append the bytes to it.
pub(super) fn binary_output(cursor: u64, capacity: usize) -> Vec<u8> {
    let mut frame = Vec::with_capacity(BINARY_HEADER_BYTES + capacity);
    frame.extend_from_slice(&cursor.to_be_bytes());
    frame
}

/// Bytes the escape scans per step.
const BLOCK: usize = 16;

/// Appends `bytes` JSON-escaped exactly as serde_json does: `"`, `\`, the short escapes
/// `\b \t \n \f \r`, other control characters as `\u00xx`; everything else (DEL and non-ASCII
/// included) verbatim. Each step copies a block of 16 bytes at once (a fixed-size copy); at an
/// escape the copy is cut back to it (a CR LF pair, which ends every terminal line, is escaped in
/// one step). Returns whether every byte was ASCII.
pub(super) fn escape_into(out: &mut Vec<u8>, bytes: &[u8]) -> bool {
    let mut i = 0;
    let mut ascii = true;
    while let Some(block) = bytes.get(i..i + BLOCK) {
        let block: &[u8; BLOCK] = block.try_into().unwrap_or(&[0; BLOCK]);
        out.extend_from_slice(block);
        // The bytes of a block past an escape are scanned again by the next step.
        let (marks, block_ascii) = scan(block);
        ascii &= block_ascii;
        if marks == 0 {
            i += BLOCK;
            continue;
        }
        let at = marks.trailing_zeros() as usize;
        out.truncate(out.len() - (BLOCK - at));
        // A terminal ends its lines with CR LF: one step for the pair.
        if block[at] == b'\r' && bytes.get(i + at + 1) == Some(&b'\n') {
            out.extend_from_slice(b"\\r\\n");
            i += at + 2;
            continue;
        }
        push_escaped(out, block[at]);
        i += at + 1;
    }
    for &b in &bytes[i..] {
        ascii &= b.is_ascii();
        if needs_escape(b) {
            push_escaped(out, b);
        } else {
            out.push(b);
        }
    }
    ascii
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Bit `i` set for each byte `i` of `block` that needs an escape, and whether all are ASCII.
#[cfg(target_arch = "x86_64")]
fn scan(block: &[u8; BLOCK]) -> (u32, bool) {
    #[allow(unsafe_code)]
    // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
    unsafe {
        scan_sse2(block)
    }
}

/// [`scan`] with SSE2: all 16 bytes compared at once.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn scan_sse2(block: &[u8; BLOCK]) -> (u32, bool) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x, _mm_set1_epi8,
    };
    let half = |h: &[u8]| i64::from_le_bytes(h.try_into().unwrap_or_default());
    let v = _mm_set_epi64x(half(&block[8..]), half(&block[..8]));
    // Unsigned `v <= 0x1f` as `max(v, 0x1f) == 0x1f`.
    let control = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f));
    let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
    let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
    let marks = _mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash)));
    (marks as u32, _mm_movemask_epi8(v) == 0)
}

#[cfg(not(target_arch = "x86_64"))]
fn scan(block: &[u8; BLOCK]) -> (u32, bool) {
    scan_swar(block)
}

const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// [`scan`] 8 bytes at a time in plain integer arithmetic, for other architectures.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))] // tested against the SSE2 scan
fn scan_swar(block: &[u8; BLOCK]) -> (u32, bool) {
    let lo = u64::from_le_bytes(block[..8].try_into().unwrap_or_default());
    let hi = u64::from_le_bytes(block[8..].try_into().unwrap_or_default());
    let bits = |marks: u64| (0..8).filter(|k| marks >> (8 * k + 7) & 1 == 1).fold(0u32, |m, k| m | 1 << k);
    (bits(escape_marks(lo)) | bits(escape_marks(hi)) << 8, (lo | hi) & HIGHS == 0)
}

/// The high bit of each byte of `word` that is a control character, `"` or `\`. Exact: adding to
/// the low 7 bits of a byte never carries into the next byte.
fn escape_marks(word: u64) -> u64 {
    let ones = |b: u8| u64::from_ne_bytes([b; 8]);
    // High bit set where the low 7 bits are at least 0x20; a byte is below 0x20 where neither that
    // nor its own high bit is set.
    let below_space = !((word & LOWS) + ones(0x60)) & !word & HIGHS;
    let zero_byte = |v: u64| !(((v & LOWS) + LOWS) | v) & HIGHS;
    below_space | zero_byte(word ^ ones(b'"')) | zero_byte(word ^ ones(b'\\'))
}

/// The escape of one byte that needs one.
fn push_escaped(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short: &[u8] = match b {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        b'\n' => b"\\n",
        b'\r' => b"\\r",
        b'\t' => b"\\t",
        0x08 => b"\\b",
        0x0c => b"\\f",
        _ => &[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]],
    };
    out.extend_from_slice(short);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::session::StreamFrame;

    fn serde(data: &str, cursor: u64, total_written: u64) -> String {
        serde_json::to_string(&StreamFrame::Output { data: data.to_owned(), cursor, total_written }).unwrap()
    }

    #[test]
    fn the_byte_frame_is_the_text_frame_for_ascii_non_ascii_and_invalid_output() {
        for input in [&b"plain \x1b[1mascii\r\n"[..], "caf\u{e9} \u{1f600}".as_bytes(), b"bad \xff\xfe end"] {
            let text = json_output(&[input], 4, 4 + input.len() as u64);
            assert_eq!(json_output_bytes(&[input], 4, 4 + input.len() as u64), text.into_bytes());
        }
    }

    #[test]
    fn both_block_scans_mark_every_escape_and_see_non_ascii() {
        // Every byte value at every position, over a background of plain and of special bytes.
        for background in [b'a', b'"', 0x80, b'\n', 0x1f, 0x20, 0xff] {
            for at in 0..BLOCK {
                for value in 0..=255u8 {
                    let mut block = [b'x'; BLOCK];
                    block[at..].fill(background);
                    block[at] = value;
                    let marks = (0..BLOCK).filter(|&i| needs_escape(block[i])).fold(0u32, |m, i| m | 1 << i);
                    let expected = (marks, block.iter().all(u8::is_ascii));
                    assert_eq!(scan(&block), expected, "{block:?}");
                    assert_eq!(scan_swar(&block), expected, "{block:?}");
                }
            }
        }
    }

    #[test]
    fn every_character_class_encodes_as_serde_does() {
        let mut all = String::new();
        for c in (0u32..0x80).chain([0xe9, 0x20ac, 0x1f600]) {
            all.push(char::from_u32(c).unwrap());
        }
        // Every offset, so each special byte is met inside and across the 16-byte blocks.
        for from in 0..all.len() {
            if all.is_char_boundary(from) {
                let s = &all[from..];
                let expected = serde(s, 3, 3 + s.len() as u64);
                assert_eq!(json_output(&[s.as_bytes()], 3, 3 + s.len() as u64), expected, "from {from}");
            }
        }
        let base64ish = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\r\n".repeat(50);
        assert_eq!(json_output(&[base64ish.as_bytes()], 0, 7), serde(&base64ish, 0, 7));
        assert_eq!(json_output(&[], 0, 0), serde("", 0, 0));
        // Several escapes in one word, and a borrow past an escape that must not mark the next byte.
        let dense = "\"\\\n\x01\x1f\"ab\x00!\\\t\r\n\"x";
        assert_eq!(json_output(&[dense.as_bytes()], 1, 2), serde(dense, 1, 2));
        // CR LF pairs (one step), and CRs that are not followed by LF.
        for lines in ["0123456789abcd\r\n\r\r\n\n\r0123456789abcdef\r", "\r", "\r\n", "x\r\r"] {
            assert_eq!(json_output(&[lines.as_bytes()], 0, 0), serde(lines, 0, 0), "{lines:?}");
        }
    }

    #[test]
    fn parts_encode_as_their_concatenation_even_mid_character() {
        let text = "line one\r\nh€llo \"wörld\" 😀\r\n".repeat(3);
        let bytes = text.as_bytes();
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(json_output(&[a, b], 5, 9), serde(&text, 5, 9), "cut at {cut}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_become_replacement_characters() {
        let bytes: &[u8] = &[b'o', b'k', 0xff, b'\n', 0xe2, 0x82, b'"', 0x80];
        let lossy = String::from_utf8_lossy(bytes);
        assert_eq!(json_output(&[&bytes[..3], &bytes[3..]], 0, 8), serde(&lossy, 0, 8));
    }

    #[test]
    fn an_incomplete_character_is_taken_from_the_end_across_parts() {
        let smile = "😀".as_bytes();
        let mut parts: Vec<&[u8]> = vec![b"ab", &smile[..1], &smile[1..3]];
        assert_eq!(take_incomplete_tail(&mut parts), &smile[..3]);
        assert_eq!(parts, [b"ab".as_slice()]);
        let mut whole: Vec<&[u8]> = vec![b"ab", &smile[..2], &smile[2..]];
        assert!(take_incomplete_tail(&mut whole).is_empty());
        assert_eq!(whole.concat(), [b"ab".as_slice(), smile].concat());
        let mut empty: Vec<&[u8]> = vec![b"", b""];
        assert!(take_incomplete_tail(&mut empty).is_empty());
        let mut only: Vec<&[u8]> = vec![b"", &smile[..2]];
        assert_eq!(take_incomplete_tail(&mut only), &smile[..2]);
        assert_eq!(only, [b"".as_slice()]);
    }

    #[test]
    fn the_binary_header_is_the_big_endian_cursor() {
        let mut frame = binary_output(0x0102_0304_0506_0708, 2);
        frame.extend_from_slice(b"hi");
        assert_eq!(frame, [1, 2, 3, 4, 5, 6, 7, 8, b'h', b'i']);
    }
}
