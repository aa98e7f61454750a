//! Newline-delimited JSON from a child's pipe, read with a bound: the stdio MCP upstreams and the
//! ACP agents both speak it, and both must survive a peer that writes an endless line.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::mpsc;

/// What the task owning a child's stdin is asked to do.
pub(crate) enum Outgoing {
    Line(Vec<u8>),
    /// Close stdin: the polite way to ask a stdio server or an ACP agent to exit.
    Close,
}

impl std::fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outgoing::Line(_) => "Line",
            Outgoing::Close => "Close",
        })
    }
}

/// One message as a line.
pub(crate) fn line_of(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).unwrap_or_default();
    line.push(b'\n');
    line
}

/// Owns a child's stdin: writes each line in order, until told to close or the pipe breaks.
pub(crate) async fn write_loop(mut stdin: ChildStdin, mut outgoing: mpsc::Receiver<Outgoing>) {
    while let Some(message) = outgoing.recv().await {
        match message {
            Outgoing::Line(line) => {
                if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                    return;
                }
            }
            Outgoing::Close => return,
        }
    }
}

pub(crate) enum Line {
    Complete,
    TooLong(usize),
    Eof,
}

/// Reads one line into `buf`, keeping at most `max` bytes; a longer line is consumed to its end
/// (its first bytes kept, to name its id) and reported with its length.
pub(crate) async fn read_line_bounded<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    let mut total = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if total == 0 {
                Line::Eof
            } else if total > max {
                Line::TooLong(total)
            } else {
                Line::Complete
            });
        }
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..=at], true),
            None => (available, false),
        };
        let used = chunk.len();
        if total + used <= max {
            buf.extend_from_slice(chunk);
        } else if buf.len() < 256 {
            let room = 256 - buf.len();
            buf.extend_from_slice(&chunk[..room.min(used)]);
        }
        total += used;
        reader.consume(used);
        if found {
            return Ok(if total > max { Line::TooLong(total) } else { Line::Complete });
        }
    }
}

/// The numeric `"id"` near the start of a message, read without parsing the whole of it.
pub(crate) fn leading_id(prefix: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(&prefix[..prefix.len().min(256)]).into_owned();
    let at = text.find("\"id\"")? + 4;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use tokio::io::BufReader;

    use super::*;

    #[test]
    fn the_id_of_an_oversized_answer_is_read_from_its_start() {
        assert_eq!(leading_id(br#"{"jsonrpc":"2.0","id": 42,"result":{"#), Some(42));
        assert_eq!(leading_id(br#"{"id":7"#), Some(7));
        assert_eq!(leading_id(br#"{"method":"x"}"#), None);
    }

    #[tokio::test]
    async fn lines_over_the_limit_are_refused_and_the_next_line_still_reads() {
        let input = format!("{}\n{{\"ok\":1}}\n", "x".repeat(100));
        let mut reader = BufReader::new(input.as_bytes());
        let mut buf = Vec::new();
        assert!(matches!(read_line_bounded(&mut reader, &mut buf, 50).await, Ok(Line::TooLong(101))));
        buf.clear();
        assert!(matches!(read_line_bounded(&mut reader, &mut buf, 50).await, Ok(Line::Complete)));
        assert_eq!(buf, b"{\"ok\":1}\n");
        buf.clear();
        assert!(matches!(read_line_bounded(&mut reader, &mut buf, 50).await, Ok(Line::Eof)));
    }
}
