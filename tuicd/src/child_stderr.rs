//! A child's stderr (a stdio MCP upstream's, an ACP agent's): every line into its own size-bounded log file (rotated once, so at
//! most twice `UPSTREAM_STDERR_LOG_BYTES` on disk), at most one line per
//! `UPSTREAM_STDERR_SAMPLE` into the daemon's own log (with how many were skipped), and the last
//! lines kept for the error that names a crash.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use tokio::io::BufReader;
use tokio::sync::watch;

use crate::jsonl::{Line, read_line_bounded};
use crate::limits::{UPSTREAM_STDERR_LOG_BYTES, UPSTREAM_STDERR_SAMPLE, UPSTREAM_STDERR_TAIL_BYTES};
use crate::lock::Recover;

/// The longest stderr line kept (in the file, the log and the tail).
const STDERR_LINE_MAX: usize = 4096;

/// The last stderr lines of one process, and whether its stderr has closed.
#[derive(Debug)]
pub(crate) struct Tail {
    lines: Mutex<VecDeque<String>>,
    closed: watch::Sender<bool>,
}

impl Default for Tail {
    fn default() -> Self {
        Self { lines: Mutex::default(), closed: watch::channel(false).0 }
    }
}

impl Tail {
    fn push(&self, line: &str) {
        let mut lines = self.lines.locked();
        lines.push_back(line.to_owned());
        while lines.iter().map(String::len).sum::<usize>() > UPSTREAM_STDERR_TAIL_BYTES && lines.len() > 1 {
            lines.pop_front();
        }
    }

    /// The last lines, joined with " | ", once stderr has closed or after `wait` (a crash's
    /// last words may still be in the pipe when its stdout's end is noticed); `None` when it
    /// wrote none.
    pub(crate) async fn text(&self, wait: std::time::Duration) -> Option<String> {
        let mut closed = self.closed.subscribe();
        let _ = tokio::time::timeout(wait, closed.wait_for(|c| *c)).await;
        let lines = self.lines.locked();
        (!lines.is_empty()).then(|| lines.iter().map(String::as_str).collect::<Vec<_>>().join(" | "))
    }
}

/// An append-only log file that starts again (the old one renamed to `<name>.1`) past its bound.
struct Rotating {
    path: PathBuf,
    file: Option<std::fs::File>,
    written: u64,
}

impl Rotating {
    fn open(path: PathBuf) -> Self {
        let file = open_append(&path);
        let written = file.as_ref().and_then(|f| f.metadata().ok()).map_or(0, |m| m.len());
        Self { path, file, written }
    }

    fn write_line(&mut self, line: &str) {
        let length = line.len() as u64 + 1;
        if self.written + length > UPSTREAM_STDERR_LOG_BYTES {
            self.file = None;
            let _ = std::fs::rename(&self.path, self.path.with_extension("log.1"));
            self.file = open_append(&self.path);
            self.written = 0;
        }
        let Some(file) = self.file.as_mut() else { return };
        if writeln!(file, "{line}").is_ok() {
            self.written += length;
        } else {
            tracing::warn!(path = %self.path.display(), "cannot write a child's stderr log; lines are dropped");
            self.file = None;
        }
    }
}

fn open_append(path: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent() {
        let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir);
    }
    let opened = std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(path);
    opened.map_err(|e| tracing::warn!(path = %path.display(), error = %e, "cannot open a child's stderr log")).ok()
}

/// Reads stderr until it closes. Writing the file is a short page-cache write per line, done
/// on this task: a process that floods stderr is slowed by its own pipe, never the daemon's log.
pub(crate) async fn stderr_loop(
    source: &'static str,
    name: String,
    stderr: tokio::process::ChildStderr,
    log: Option<PathBuf>,
    tail: std::sync::Arc<Tail>,
) {
    let mut lines = BufReader::new(stderr);
    let mut file = log.map(Rotating::open);
    let mut buf = Vec::new();
    let mut logged: Option<Instant> = None;
    let mut skipped = 0u64;
    loop {
        buf.clear();
        match read_line_bounded(&mut lines, &mut buf, STDERR_LINE_MAX).await {
            Ok(Line::Eof) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end();
                if line.is_empty() {
                    continue;
                }
                if let Some(file) = file.as_mut() {
                    file.write_line(line);
                }
                tail.push(line);
                if logged.is_none_or(|at| at.elapsed() >= UPSTREAM_STDERR_SAMPLE) {
                    let path = file.as_ref().map(|f| f.path.display().to_string()).unwrap_or_default();
                    tracing::info!(source, process = %name, stream = "stderr", skipped, log = %path, "{line}");
                    logged = Some(Instant::now());
                    skipped = 0;
                } else {
                    skipped += 1;
                }
            }
        }
    }
    tail.closed.send_replace(true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_once_past_its_bound_and_the_tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/up.log");
        let mut log = Rotating::open(path.clone());
        let line = "x".repeat(1000);
        for _ in 0..(UPSTREAM_STDERR_LOG_BYTES / 1001 + 10) {
            log.write_line(&line);
        }
        let current = std::fs::metadata(&path).unwrap().len();
        let rotated = std::fs::metadata(path.with_extension("log.1")).unwrap().len();
        assert!(current <= UPSTREAM_STDERR_LOG_BYTES && rotated <= UPSTREAM_STDERR_LOG_BYTES, "{current} {rotated}");
        assert_eq!(current + rotated, (UPSTREAM_STDERR_LOG_BYTES / 1001 + 10) * 1001);
        let tail = Tail::default();
        for i in 0..10_000 {
            tail.push(&format!("line {i}"));
        }
        let kept = tail.lines.locked();
        assert_eq!(kept.back().map(String::as_str), Some("line 9999"));
        assert!(kept.iter().map(String::len).sum::<usize>() <= UPSTREAM_STDERR_TAIL_BYTES);
    }
}
