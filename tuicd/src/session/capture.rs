//! Raw PTY capture (`.tcap`): an off-by-default tap that records what crossed the PTY, one record
//! per original read or write, for agent-state regression fixtures.
//!
//! The format is `crate::tcap`'s. A record that would take the file past [`CAPTURE_MAX_BYTES`] is
//! dropped and the file stops growing.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::owner::Session;
use crate::limits::CAPTURE_MAX_BYTES;
use crate::lock::Recover;
pub use crate::tcap::{Direction, Record, TCAP_MAGIC, decode, read_file};

const RECORD_HEADER: u64 = 1 + 8 + 4;

#[derive(Debug)]
pub struct CaptureFile {
    file: File,
    started: Instant,
    written: u64,
    full: bool,
}

impl CaptureFile {
    /// Starts a fresh file (a new enable truncates the previous capture).
    pub fn create(dir: &Path, session_id: &str) -> std::io::Result<Self> {
        // 0700 and 0600: a capture records every keystroke, passwords typed at a prompt included.
        // An existing dir (an older daemon made it 0755) is tightened, as is a file it replaces.
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700).create(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let mut file = std::os::unix::fs::OpenOptionsExt::mode(
            std::fs::OpenOptions::new().create(true).truncate(true).write(true),
            0o600,
        )
        .open(path_for(dir, session_id))?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(TCAP_MAGIC)?;
        Ok(Self { file, started: Instant::now(), written: TCAP_MAGIC.len() as u64, full: false })
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    fn record(&mut self, direction: Direction, data: &[u8]) {
        if self.full {
            return;
        }
        let size = RECORD_HEADER + data.len() as u64;
        if self.written + size > CAPTURE_MAX_BYTES {
            self.full = true;
            return;
        }
        let mut record = Vec::with_capacity(size as usize);
        record.push(match direction {
            Direction::Output => b'o',
            Direction::Input => b'i',
        });
        record.extend_from_slice(&(self.started.elapsed().as_micros() as u64).to_le_bytes());
        record.extend_from_slice(&(data.len() as u32).to_le_bytes());
        record.extend_from_slice(data);
        // One write per record, no fsync: a small append to the page cache.
        match self.file.write_all(&record) {
            Ok(()) => self.written += size,
            Err(e) => {
                tracing::warn!(error = %e, "capture write failed; this capture stops");
                self.full = true;
            }
        }
    }
}

pub fn path_for(dir: &Path, session_id: &str) -> PathBuf {
    dir.join(format!("{session_id}.tcap"))
}

impl Session {
    pub(super) fn record(&self, direction: Direction, data: &[u8]) {
        let mut capture = self.capture.locked();
        if let Some(file) = capture.as_mut() {
            file.record(direction, data);
        }
    }

    /// Replaces this session's capture (None stops it). Returns the previous file's size.
    pub(super) fn set_capture(&self, file: Option<CaptureFile>) {
        *self.capture.locked() = file;
    }

    pub(super) fn capture_written(&self) -> Option<u64> {
        self.capture.locked().as_ref().map(CaptureFile::written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captures_dir_is_private_and_its_files_too_even_when_an_older_daemon_made_them_open() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("captures");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        CaptureFile::create(&dir, "s1").unwrap();
        assert_eq!((mode(&dir), mode(&path_for(&dir, "s1"))), (0o700, 0o600));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(path_for(&dir, "s1"), std::fs::Permissions::from_mode(0o644)).unwrap();
        CaptureFile::create(&dir, "s1").unwrap();
        assert_eq!((mode(&dir), mode(&path_for(&dir, "s1"))), (0o700, 0o600));
    }

    #[test]
    fn records_keep_boundaries_and_stop_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = CaptureFile::create(dir.path(), "s1").unwrap();
        file.record(Direction::Input, b"ls\r");
        file.record(Direction::Output, b"a b");
        file.record(Direction::Output, &vec![b'x'; CAPTURE_MAX_BYTES as usize]);
        let records = decode(&std::fs::read(path_for(dir.path(), "s1")).unwrap()).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!((records[0].direction, records[0].data.as_slice()), (Direction::Input, &b"ls\r"[..]));
        assert_eq!(records[1].data, b"a b");
        assert!(records[0].micros <= records[1].micros);
        assert_eq!(file.written(), 8 + 13 + 3 + 13 + 3);
        assert_eq!(read_file(&path_for(dir.path(), "s1")).unwrap(), records);
        let legacy = dir.path().join("old.raw");
        std::fs::write(&legacy, b"\x1b[1mhi").unwrap();
        let records = read_file(&legacy).unwrap();
        assert_eq!(
            (records.len(), records[0].direction, records[0].data.as_slice()),
            (1, Direction::Output, &b"\x1b[1mhi"[..])
        );
    }
}
