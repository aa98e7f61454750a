//! asciicast v2 (asciinema's recording format), pure: a header line, then one JSON array per
//! event, `[seconds, "o" | "i", text]`. Output split inside a UTF-8 character is carried to the
//! next event, so every event is valid text; bytes that are not UTF-8 become U+FFFD.

use std::time::Duration;

use serde_json::json;

/// Builds a recording of a `cols` x `rows` terminal; `events` are (time since the start,
/// `"o"` output or `"i"` input, bytes), in order.
pub(crate) fn encode<'a>(
    cols: u16,
    rows: u16,
    started_unix: u64,
    events: impl IntoIterator<Item = (Duration, &'a str, &'a [u8])>,
) -> String {
    let mut out = json!({"version": 2, "width": cols, "height": rows, "timestamp": started_unix}).to_string();
    out.push('\n');
    // Output and input each carry their own split character.
    let mut held: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    for (time, kind, bytes) in events {
        let held = &mut held[usize::from(kind == "i")];
        held.extend_from_slice(bytes);
        let keep = super::ring::incomplete_utf8_tail(held);
        let whole = held.len() - keep;
        if whole == 0 {
            continue;
        }
        let text = String::from_utf8_lossy(&held[..whole]).into_owned();
        held.drain(..whole);
        let line = json!([(time.as_secs_f64() * 1e6).round() / 1e6, kind, text]);
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// A raw `.tcap` capture (docs/http-api.md "Diagnostics") as an asciicast v2 recording of a
/// `cols` x `rows` terminal: its output and its input with their real timings.
pub fn from_tcap_file(path: &std::path::Path, cols: u16, rows: u16) -> std::io::Result<String> {
    let records = crate::tcap::read_file(path)?;
    let started_unix = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let events = records.iter().map(|r| {
        let kind = match r.direction {
            crate::tcap::Direction::Output => "o",
            crate::tcap::Direction::Input => "i",
        };
        (Duration::from_micros(r.micros), kind, r.data.as_slice())
    });
    Ok(encode(cols, rows, started_unix, events))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_then_one_event_per_piece_with_split_characters_carried() {
        let euro = "€".as_bytes();
        let cast = encode(
            80,
            24,
            1_700_000_000,
            [
                (Duration::from_millis(0), "o", b"a".as_slice()),
                (Duration::from_millis(250), "o", &euro[..1]),
                (Duration::from_millis(500), "o", &euro[1..]),
                (Duration::from_millis(750), "i", b"\x03".as_slice()),
            ],
        );
        let lines: Vec<serde_json::Value> = cast.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0], json!({"version": 2, "width": 80, "height": 24, "timestamp": 1_700_000_000}));
        assert_eq!(lines[1], json!([0.0, "o", "a"]));
        assert_eq!(lines[2], json!([0.5, "o", "€"]), "the split character waits for its end");
        assert_eq!(lines[3], json!([0.75, "i", "\u{3}"]));
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn a_tcap_capture_becomes_output_and_input_events_at_its_times() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.tcap");
        let mut bytes = crate::tcap::TCAP_MAGIC.to_vec();
        for (direction, micros, data) in
            [(b'o', 1_000u64, b"$ ".as_slice()), (b'i', 1_500_000, b"ls\r"), (b'o', 1_600_000, b"ls\r\n")]
        {
            bytes.push(direction);
            bytes.extend(micros.to_le_bytes());
            bytes.extend((data.len() as u32).to_le_bytes());
            bytes.extend(data);
        }
        std::fs::write(&path, bytes).unwrap();
        let cast = from_tcap_file(&path, 100, 30).unwrap();
        let lines: Vec<serde_json::Value> = cast.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!((lines[0]["width"].as_u64(), lines[0]["height"].as_u64()), (Some(100), Some(30)));
        assert_eq!(lines[1..], [json!([0.001, "o", "$ "]), json!([1.5, "i", "ls\r"]), json!([1.6, "o", "ls\r\n"])]);
        std::fs::write(&path, b"not a capture").unwrap();
        assert!(from_tcap_file(&path, 80, 24).is_err());
    }
}
