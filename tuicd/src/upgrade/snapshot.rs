//! The hand-over snapshot: what an upgrading daemon writes for its next process image. A magic,
//! the format version, a JSON header, then the sessions' ring bytes back to back. The descriptors
//! themselves cross the `exec` open; the header names them by number.
//!
//! The format version changes whenever the header's meaning does: a binary reads only its own
//! version, and the old daemon asks the new binary to read a trial snapshot before it hands
//! anything over, so a downgrade or a corrupt snapshot is refused while the old daemon serves on.

use serde::{Deserialize, Serialize};

use crate::session::handover::HandedSession;

/// The snapshot format this binary writes and reads.
pub(crate) const FORMAT: u32 = 1;
const MAGIC: &[u8; 8] = b"TUICDHO\0";
/// Magic, format and header length.
const PREFIX: usize = 8 + 4 + 8;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Header {
    /// The version of the daemon that wrote it (for the log).
    pub daemon_version: String,
    /// The IPC listener's descriptor.
    pub ipc_fd: i32,
    pub sessions: Vec<SessionEntry>,
    /// The `/events` history, so a client resuming with `Last-Event-ID` misses nothing.
    pub events: Events,
    /// The MCP protocol sessions, so clients keep their `mcp-session-id`.
    pub mcp_sessions: Vec<McpSession>,
    /// When the sessions froze (Unix ms): the new image logs how long output waited.
    pub frozen_unix_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SessionEntry {
    pub meta: HandedSession,
    pub ring_len: u64,
    pub master_fd: i32,
    pub pidfd: i32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Events {
    pub next_id: u64,
    /// `(id, kind, JSON payload)`, oldest first.
    pub history: Vec<(u64, String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct McpSession {
    pub id: String,
    pub tuic_session: Option<String>,
    pub channels: bool,
    pub collapse_tools: bool,
    pub name: Option<String>,
    pub answers: Vec<String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum SnapshotError {
    #[error("not a tuicd hand-over snapshot (bad magic)")]
    Magic,
    #[error("snapshot format {found}, but this tuicd reads format {FORMAT} only")]
    Format { found: u32 },
    #[error("the snapshot is truncated: {0}")]
    Truncated(&'static str),
    #[error("the snapshot's header is unreadable: {0}")]
    Header(String),
    #[error("the snapshot's ring bytes do not add up: the header names {named} bytes, {present} follow")]
    Rings { named: u64, present: u64 },
}

/// The snapshot's bytes: `rings[i]` belongs to `header.sessions[i]`.
pub(crate) fn encode(header: &Header, rings: &[&[u8]]) -> Vec<u8> {
    let json = serde_json::to_vec(header).unwrap_or_default();
    let total: usize = rings.iter().map(|r| r.len()).sum();
    let mut out = Vec::with_capacity(PREFIX + json.len() + total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    for ring in rings {
        out.extend_from_slice(ring);
    }
    out
}

/// Reads a snapshot: the header and each session's ring bytes.
pub(crate) fn decode(bytes: &[u8]) -> Result<(Header, Vec<&[u8]>), SnapshotError> {
    if bytes.len() < 8 || &bytes[..8] != MAGIC {
        return Err(SnapshotError::Magic);
    }
    let prefix = bytes.get(..PREFIX).ok_or(SnapshotError::Truncated("the prefix"))?;
    let found = u32::from_le_bytes(prefix[8..12].try_into().unwrap_or_default());
    if found != FORMAT {
        return Err(SnapshotError::Format { found });
    }
    let header_len = u64::from_le_bytes(prefix[12..20].try_into().unwrap_or_default());
    let header_end = usize::try_from(header_len)
        .ok()
        .and_then(|n| n.checked_add(PREFIX))
        .filter(|end| *end <= bytes.len())
        .ok_or(SnapshotError::Truncated("the header"))?;
    let header: Header =
        serde_json::from_slice(&bytes[PREFIX..header_end]).map_err(|e| SnapshotError::Header(e.to_string()))?;
    let mut rest = &bytes[header_end..];
    let named: u64 = header.sessions.iter().map(|s| s.ring_len).sum();
    if named != rest.len() as u64 {
        return Err(SnapshotError::Rings { named, present: rest.len() as u64 });
    }
    let mut rings = Vec::with_capacity(header.sessions.len());
    for session in &header.sessions {
        let (ring, tail) = rest.split_at(session.ring_len as usize);
        rings.push(ring);
        rest = tail;
    }
    Ok((header, rings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        let meta = HandedSession {
            id: "s1".into(),
            tuic_session: "7b0c7a52-5b3e-4c55-9d0a-1f2f4b7f0e11".into(),
            alias: "work-1".into(),
            display_name: None,
            agent_type: Some("claude".into()),
            cwd: "/tmp".into(),
            shell: "/bin/sh".into(),
            created_unix_ms: 1,
            rows: 24,
            cols: 80,
            window_size: None,
            pid: 42,
            ring_oldest: 100,
        };
        Header {
            daemon_version: "0.1.0".into(),
            ipc_fd: 5,
            sessions: vec![
                SessionEntry { meta: meta.clone(), ring_len: 3, master_fd: 6, pidfd: 7 },
                SessionEntry { meta: HandedSession { id: "s2".into(), ..meta }, ring_len: 0, master_fd: 8, pidfd: 9 },
            ],
            events: Events { next_id: 9, history: vec![(8, "session-created".into(), "{}".into())] },
            mcp_sessions: vec![],
            frozen_unix_ms: 0,
        }
    }

    #[test]
    fn a_snapshot_reads_back_as_written() {
        let bytes = encode(&header(), &[b"abc", b""]);
        let (read, rings) = decode(&bytes).unwrap();
        assert_eq!(read, header());
        assert_eq!(rings, vec![b"abc".as_slice(), b"".as_slice()]);
    }

    #[test]
    fn a_corrupt_snapshot_or_another_format_is_refused_with_the_reason() {
        let good = encode(&header(), &[b"abc", b""]);
        assert_eq!(decode(b"garbage!garbage").unwrap_err(), SnapshotError::Magic);
        let mut other = good.clone();
        other[8..12].copy_from_slice(&(FORMAT + 1).to_le_bytes());
        assert_eq!(decode(&other).unwrap_err(), SnapshotError::Format { found: FORMAT + 1 });
        assert!(decode(&other).unwrap_err().to_string().contains(&format!("reads format {FORMAT} only")));
        assert_eq!(decode(&good[..good.len() - 1]).unwrap_err(), SnapshotError::Rings { named: 3, present: 2 });
        assert_eq!(decode(&good[..30]).unwrap_err(), SnapshotError::Truncated("the header"));
        assert_eq!(decode(&good[..10]).unwrap_err(), SnapshotError::Truncated("the prefix"));
        let mut mangled = good.clone();
        mangled[PREFIX] = b'[';
        assert!(matches!(decode(&mangled).unwrap_err(), SnapshotError::Header(_)));
    }
}
