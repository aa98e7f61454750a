//! A server-sent events parser for the upstream client: bytes in, events out, as the HTML
//! event-stream rules read them (fields `data`, `id`, `event`, `retry`; `:` comments; lines ended by
//! CR, LF or CRLF, split anywhere across chunks). Pure, and bounded: a line or an event's data past
//! the limit is an error rather than unbounded growth.

use std::time::Duration;

/// One dispatched event. `id` is the stream's last event id as of this event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("an SSE event exceeds {0} bytes")]
pub(crate) struct SseTooLarge(pub usize);

#[derive(Debug)]
pub(crate) struct SseParser {
    max_bytes: usize,
    line: Vec<u8>,
    /// The previous chunk ended in CR: an LF starting the next one belongs to that line end.
    after_cr: bool,
    data: String,
    has_data: bool,
    event: Option<String>,
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

impl SseParser {
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            line: Vec::new(),
            after_cr: false,
            data: String::new(),
            has_data: false,
            event: None,
            last_event_id: None,
            retry: None,
        }
    }

    /// The parser for the stream that resumes this one: the last event id and the server's
    /// `retry:` carry over, a half-read line or event does not.
    pub(crate) fn resumed(&self) -> Self {
        Self { last_event_id: self.last_event_id.clone(), retry: self.retry, ..Self::new(self.max_bytes) }
    }

    /// The id to send as `Last-Event-ID` when reconnecting.
    pub(crate) fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection delay the server asked for with `retry:`.
    pub(crate) fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Feeds one chunk; returns the events it completed, in order.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseTooLarge> {
        let mut events = Vec::new();
        for &byte in chunk {
            let after_cr = std::mem::take(&mut self.after_cr);
            match byte {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(event) = self.line_ended(&line)? {
                        events.push(event);
                    }
                }
                _ => {
                    if self.line.len() >= self.max_bytes {
                        return Err(SseTooLarge(self.max_bytes));
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(events)
    }

    fn line_ended(&mut self, line: &[u8]) -> Result<Option<SseEvent>, SseTooLarge> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line[0] == b':' {
            return Ok(None);
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.max_bytes {
                    return Err(SseTooLarge(self.max_bytes));
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.last_event_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// A blank line: an event with data is delivered; one with empty data (a priming `id:` event,
    /// say) only moves the last event id.
    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !std::mem::take(&mut self.has_data) || self.data.is_empty() {
            self.data.clear();
            return None;
        }
        Some(SseEvent { event, data: std::mem::take(&mut self.data), id: self.last_event_id.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(input: &str, size: usize) -> (Vec<SseEvent>, SseParser) {
        let mut parser = SseParser::new(1024);
        let mut events = Vec::new();
        for chunk in input.as_bytes().chunks(size) {
            events.extend(parser.push(chunk).unwrap());
        }
        (events, parser)
    }

    #[test]
    fn an_event_split_at_every_byte_parses_as_a_whole() {
        let input = "event: message\r\nid: 7\r\ndata: {\"a\":1}\r\n\r\ndata: two\n\n";
        let whole = parse_in_chunks(input, input.len()).0;
        for size in 1..input.len() {
            assert_eq!(parse_in_chunks(input, size).0, whole, "chunk size {size}");
        }
        assert_eq!(whole.len(), 2);
        assert_eq!(
            whole[0],
            SseEvent { event: Some("message".into()), data: "{\"a\":1}".into(), id: Some("7".into()) }
        );
        assert_eq!(whole[1], SseEvent { event: None, data: "two".into(), id: Some("7".into()) });
    }

    #[test]
    fn multi_line_data_joins_with_newlines_and_lone_cr_ends_lines() {
        let (events, _) = parse_in_chunks("data: one\rdata:two\r\ndata\n\n", 3);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "one\ntwo\n");
    }

    #[test]
    fn comments_are_skipped_and_unknown_fields_ignored() {
        let (events, _) = parse_in_chunks(": keep-alive\n\nfoo: bar\ndata: x\n\n:\n\n", 5);
        assert_eq!(events, vec![SseEvent { event: None, data: "x".into(), id: None }]);
    }

    #[test]
    fn a_priming_event_moves_the_id_and_retry_without_dispatching() {
        let (events, parser) = parse_in_chunks("id: 0\nretry: 500\ndata: \n\n", 4);
        assert_eq!(events, Vec::new(), "empty data is not dispatched");
        assert_eq!(parser.last_event_id(), Some("0"));
        assert_eq!(parser.retry(), Some(Duration::from_millis(500)));
    }

    #[test]
    fn a_malformed_retry_is_ignored_and_an_id_persists_across_events() {
        let (events, parser) = parse_in_chunks("retry: 5s\nid: a\ndata: 1\n\ndata: 2\n\n", 2);
        assert_eq!(parser.retry(), None);
        assert_eq!(events[1].id.as_deref(), Some("a"));
    }

    #[test]
    fn a_resumed_parser_keeps_the_id_and_retry_and_drops_a_half_read_event() {
        let mut parser = SseParser::new(64);
        parser.push(b"retry: 20\nid: 41\ndata: half").unwrap();
        let mut resumed = parser.resumed();
        assert_eq!((resumed.last_event_id(), resumed.retry()), (Some("41"), Some(Duration::from_millis(20))));
        let events = resumed.push(b"data: whole\n\n").unwrap();
        assert_eq!(events, vec![SseEvent { event: None, data: "whole".into(), id: Some("41".into()) }]);
    }

    #[test]
    fn data_past_the_limit_is_an_error() {
        let mut parser = SseParser::new(10);
        assert_eq!(parser.push(b"data: 0123456789\n"), Err(SseTooLarge(10)), "one long line");
        let mut parser = SseParser::new(10);
        parser.push(b"data: 012\ndata: 345\n").unwrap();
        assert_eq!(parser.push(b"data: 678\n"), Err(SseTooLarge(10)), "short lines adding up");
    }
}
