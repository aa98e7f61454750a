//! The `.tcap` raw PTY capture format, pure: what a session's capture tap writes and the
//! fixture replays and tools read. The 8-byte magic `TCAP\x01\n\0\0`, then records of
//! `direction: u8` (`b'o'` output from the child, `b'i'` input to it), `micros: u64 LE`
//! (monotonic, since the file was opened), `len: u32 LE`, then `len` bytes.

use std::path::Path;

pub const TCAP_MAGIC: &[u8; 8] = b"TCAP\x01\n\0\0";

/// Which way a record crossed the PTY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Output,
    Input,
}

/// One decoded record, for tests and tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub direction: Direction,
    pub micros: u64,
    pub data: Vec<u8>,
}

/// Decodes a `.tcap` file; `None` when it is not one.
pub fn decode(bytes: &[u8]) -> Option<Vec<Record>> {
    let mut rest = bytes.strip_prefix(TCAP_MAGIC.as_slice())?;
    let mut records = Vec::new();
    while !rest.is_empty() {
        let direction = match rest.first()? {
            b'o' => Direction::Output,
            b'i' => Direction::Input,
            _ => return None,
        };
        let micros = u64::from_le_bytes(rest.get(1..9)?.try_into().ok()?);
        let len = u32::from_le_bytes(rest.get(9..13)?.try_into().ok()?) as usize;
        let data = rest.get(13..13 + len)?.to_vec();
        records.push(Record { direction, micros, data });
        rest = &rest[13 + len..];
    }
    Some(records)
}

/// Reads a capture file: a `.tcap`, or a legacy `.raw` fixture (output bytes only, no boundaries),
/// which reads as one output record.
pub fn read_file(path: &Path) -> std::io::Result<Vec<Record>> {
    let bytes = std::fs::read(path)?;
    if path.extension().is_some_and(|e| e == "raw") {
        return Ok(vec![Record { direction: Direction::Output, micros: 0, data: bytes }]);
    }
    decode(&bytes).ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "not a .tcap file"))
}
