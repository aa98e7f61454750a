//! The daemon's own recent log: a tracing [`Layer`] that keeps the last [`LOG_RING_EVENTS`]
//! events (and at most [`LOG_RING_BYTES`] of them) in memory, read by MCP `debug action=logs`.
//!
//! One ring per process: the tracing dispatcher it listens to is process-wide too, so the ring is
//! a static that the binary's subscriber writes and the daemon's tools read.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{LazyLock, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;

use crate::limits::{LOG_EVENT_MAX_BYTES, LOG_RING_BYTES, LOG_RING_EVENTS};
use crate::lock::Recover;

/// One recorded event. `source` is the event's `source` field when it names one, else the
/// daemon module that logged it (`session`, `mcp`, `server`, ...).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct LogEntry {
    /// Milliseconds since the Unix epoch.
    pub ts: u64,
    pub level: &'static str,
    pub source: String,
    pub target: String,
    pub message: String,
}

impl LogEntry {
    fn cost(&self) -> usize {
        self.source.len() + self.target.len() + self.message.len() + 32
    }
}

/// The bounded ring. A std mutex, held to push or to copy entries out, never across `.await`.
#[derive(Debug, Default)]
pub(crate) struct LogRing {
    inner: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    entries: VecDeque<LogEntry>,
    bytes: usize,
}

/// What `debug action=logs` asks for.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogFilter {
    pub source: Option<String>,
    /// The least severe level returned (`warn` returns warnings and errors).
    pub level: Option<Level>,
    pub limit: usize,
}

impl LogRing {
    pub(crate) fn push(&self, entry: LogEntry) {
        let mut ring = self.inner.locked();
        ring.bytes += entry.cost();
        ring.entries.push_back(entry);
        while ring.entries.len() > LOG_RING_EVENTS || ring.bytes > LOG_RING_BYTES {
            let Some(old) = ring.entries.pop_front() else { break };
            ring.bytes -= old.cost();
        }
    }

    /// The newest `filter.limit` matching entries, oldest first.
    pub(crate) fn read(&self, filter: &LogFilter) -> Vec<LogEntry> {
        let ring = self.inner.locked();
        let mut picked: Vec<LogEntry> = ring
            .entries
            .iter()
            .rev()
            .filter(|e| filter.source.as_deref().is_none_or(|s| e.source == s))
            .filter(|e| filter.level.is_none_or(|min| level_of(e.level) <= min))
            .take(filter.limit)
            .cloned()
            .collect();
        picked.reverse();
        picked
    }

    /// How many events the ring holds now.
    pub(crate) fn len(&self) -> usize {
        self.inner.locked().entries.len()
    }
}

/// The process's ring.
pub(crate) fn ring() -> &'static LogRing {
    static RING: LazyLock<LogRing> = LazyLock::new(LogRing::default);
    &RING
}

/// The layer the binary adds to its subscriber so that [`ring`] sees every event it logs.
pub fn layer<S: Subscriber>() -> impl Layer<S> {
    RingLayer
}

struct RingLayer;

impl<S: Subscriber> Layer<S> for RingLayer {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let meta = event.metadata();
        let mut fields = Fields::default();
        event.record(&mut fields);
        let source = fields.source.take().unwrap_or_else(|| module_of(meta.target()));
        let mut message = fields.message;
        if !fields.rest.is_empty() {
            if !message.is_empty() {
                message.push(' ');
            }
            message.push_str(fields.rest.trim_start());
        }
        truncate(&mut message, LOG_EVENT_MAX_BYTES);
        let ts = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        ring().push(LogEntry {
            ts,
            level: level_name(*meta.level()),
            source,
            target: meta.target().to_owned(),
            message,
        });
    }
}

#[derive(Default)]
struct Fields {
    message: String,
    source: Option<String>,
    rest: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message.push_str(value),
            "source" => self.source = Some(value.to_owned()),
            name => {
                let _ = write!(self.rest, " {name}={value}");
            }
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => {
                let _ = write!(self.message, "{value:?}");
            }
            "source" => self.source = Some(format!("{value:?}")),
            name => {
                let _ = write!(self.rest, " {name}={value:?}");
            }
        }
    }
}

/// `tuicd::session::reader` -> `session`; a target outside the daemon is kept whole.
fn module_of(target: &str) -> String {
    match target.split("::").collect::<Vec<_>>().as_slice() {
        ["tuicd", module, ..] => (*module).to_owned(),
        _ => target.to_owned(),
    }
}

fn truncate(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
}

pub(crate) fn level_name(level: Level) -> &'static str {
    match level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        Level::TRACE => "trace",
    }
}

/// A level by its name, as `debug action=logs` accepts it.
pub(crate) fn parse_level(name: &str) -> Option<Level> {
    [Level::ERROR, Level::WARN, Level::INFO, Level::DEBUG, Level::TRACE].into_iter().find(|l| level_name(*l) == name)
}

fn level_of(name: &str) -> Level {
    parse_level(name).unwrap_or(Level::TRACE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(level: &'static str, source: &str, message: &str) -> LogEntry {
        LogEntry { ts: 0, level, source: source.into(), target: "tuicd::x".into(), message: message.into() }
    }

    #[test]
    fn the_ring_keeps_the_newest_events_within_its_count_and_bytes() {
        let ring = LogRing::default();
        for i in 0..LOG_RING_EVENTS + 10 {
            ring.push(entry("info", "session", &format!("event {i}")));
        }
        assert_eq!(ring.len(), LOG_RING_EVENTS);
        let all = ring.read(&LogFilter { limit: usize::MAX, ..LogFilter::default() });
        assert_eq!(all.last().unwrap().message, format!("event {}", LOG_RING_EVENTS + 9));
        assert_eq!(all[0].message, "event 10");

        let big = "x".repeat(LOG_EVENT_MAX_BYTES);
        for _ in 0..LOG_RING_EVENTS {
            ring.push(entry("info", "session", &big));
        }
        let held = ring.inner.locked().bytes;
        assert!(held <= LOG_RING_BYTES, "{held} bytes held");
    }

    #[test]
    fn filters_select_source_and_least_level_newest_last() {
        let ring = LogRing::default();
        ring.push(entry("info", "mcp", "a"));
        ring.push(entry("error", "session", "b"));
        ring.push(entry("warn", "mcp", "c"));
        ring.push(entry("debug", "mcp", "d"));
        let warn = LogFilter { level: Some(Level::WARN), limit: 10, ..LogFilter::default() };
        let got: Vec<String> = ring.read(&warn).into_iter().map(|e| e.message).collect();
        assert_eq!(got, ["b", "c"]);
        let mcp = LogFilter { source: Some("mcp".into()), limit: 2, ..LogFilter::default() };
        let got: Vec<String> = ring.read(&mcp).into_iter().map(|e| e.message).collect();
        assert_eq!(got, ["c", "d"]);
    }

    #[test]
    fn sources_come_from_the_field_or_the_module() {
        assert_eq!(module_of("tuicd::session::reader"), "session");
        assert_eq!(module_of("hyper::proto"), "hyper::proto");
        let mut text = "é".repeat(10);
        truncate(&mut text, 5);
        assert_eq!(text, "éé…");
    }
}
