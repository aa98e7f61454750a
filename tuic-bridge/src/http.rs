//! A minimal HTTP/1.1 client over the daemon's Unix socket: one request per connection, the
//! response read by its `Content-Length` (or chunked framing) rather than by waiting for EOF,
//! since the daemon keeps connections alive. Also reads SSE responses event by event: the GET
//! /mcp stream, and a POST answered as a stream (a call that puts requests to the client).

use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::limits::{MAX_HEADER_BYTES, MAX_RESPONSE_BYTES};

/// Why a request got no HTTP answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TransportError {
    /// Nothing listens on the socket: the daemon is not running.
    #[error("tuicd is not running (nothing listens on {0})")]
    Down(String),
    /// No answer within the deadline. `sent`: the whole request reached tuicd's socket, so tuicd
    /// may still carry it out; otherwise it never saw the request.
    #[error("tuicd did not answer within {} s", .secs)]
    Timeout { secs: u64, sent: bool },
    #[error("the connection to tuicd failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("tuicd sent a malformed HTTP response: {0}")]
    Malformed(String),
}

#[derive(Debug)]
pub(crate) struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// One request: `(method, headers, body)`, answered within `deadline`.
pub(crate) async fn request(
    socket: &Path,
    method: &str,
    headers: &[(&str, String)],
    body: &[u8],
    deadline: Duration,
) -> Result<HttpResponse, TransportError> {
    let mut sent = false;
    let work = async {
        let mut reader = send(socket, method, headers, body).await?;
        sent = true;
        let (status, headers) = read_head(&mut reader).await?;
        let body = read_body(&mut reader, &headers).await?;
        Ok(HttpResponse { status, headers, body })
    };
    let answer = tokio::time::timeout(deadline, work).await;
    answer.map_err(|_| TransportError::Timeout { secs: deadline.as_secs(), sent })?
}

/// What a POST was answered with: a whole response, or an SSE stream still being read.
pub(crate) enum Answer {
    Whole(HttpResponse),
    Stream(EventStream),
}

/// One POST whose answer may be an SSE stream: the stream is returned as soon as its head is
/// read. `Err(sent)` on a deadline says whether the whole request reached tuicd.
pub(crate) async fn exchange(
    socket: &Path,
    headers: &[(&str, String)],
    body: &[u8],
    sent: &mut bool,
) -> Result<Answer, TransportError> {
    let mut reader = send(socket, "POST", headers, body).await?;
    *sent = true;
    let (status, headers) = read_head(&mut reader).await?;
    let streamed = header(&headers, "content-type").is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    if status == 200 && streamed {
        return Ok(Answer::Stream(EventStream::new(reader, &headers)));
    }
    let body = read_body(&mut reader, &headers).await?;
    Ok(Answer::Whole(HttpResponse { status, headers, body }))
}

/// An open SSE response: yields each event's `data` until the stream ends.
pub(crate) struct EventStream {
    reader: BufReader<UnixStream>,
    chunked: bool,
    /// Bytes of the current chunk not yet consumed (chunked framing only).
    chunk_left: usize,
    pending: Vec<u8>,
}

pub(crate) async fn open_stream(
    socket: &Path,
    headers: &[(&str, String)],
    deadline: Duration,
) -> Result<Result<EventStream, HttpResponse>, TransportError> {
    let work = async {
        let mut reader = send(socket, "GET", headers, b"").await?;
        let (status, headers) = read_head(&mut reader).await?;
        if status != 200 {
            let body = read_body(&mut reader, &headers).await?;
            return Ok(Err(HttpResponse { status, headers, body }));
        }
        Ok(Ok(EventStream::new(reader, &headers)))
    };
    let opened = tokio::time::timeout(deadline, work).await;
    opened.map_err(|_| TransportError::Timeout { secs: deadline.as_secs(), sent: true })?
}

impl EventStream {
    fn new(reader: BufReader<UnixStream>, headers: &[(String, String)]) -> Self {
        let chunked = header(headers, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
        Self { reader, chunked, chunk_left: 0, pending: Vec::new() }
    }

    /// The next event's data (its `data:` lines joined); `None` when the stream ended.
    pub(crate) async fn next_event(&mut self) -> Result<Option<String>, TransportError> {
        let mut data: Vec<String> = Vec::new();
        loop {
            let Some(line) = self.next_line().await? else { return Ok(None) };
            if line.is_empty() {
                if !data.is_empty() {
                    return Ok(Some(data.join("\n")));
                }
                continue;
            }
            if let Some(value) = line.strip_prefix("data:") {
                data.push(value.strip_prefix(' ').unwrap_or(value).to_owned());
            }
        }
    }

    async fn next_line(&mut self) -> Result<Option<String>, TransportError> {
        loop {
            if let Some(pos) = self.pending.iter().position(|b| *b == b'\n') {
                let mut line: Vec<u8> = self.pending.drain(..=pos).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
            }
            if self.pending.len() > MAX_RESPONSE_BYTES {
                return Err(TransportError::Malformed("an SSE line exceeds the size limit".into()));
            }
            if !self.fill().await? {
                return Ok(None);
            }
        }
    }

    /// Appends the next bytes of the body to `pending`; false at the end of the body.
    async fn fill(&mut self) -> Result<bool, TransportError> {
        if self.chunked && self.chunk_left == 0 {
            let size = read_chunk_size(&mut self.reader).await?;
            if size == 0 {
                return Ok(false);
            }
            self.chunk_left = size;
        }
        let mut buf = [0u8; 8192];
        let want = if self.chunked { self.chunk_left.min(buf.len()) } else { buf.len() };
        let n = self.reader.read(&mut buf[..want]).await?;
        if n == 0 {
            return Ok(false);
        }
        self.pending.extend_from_slice(&buf[..n]);
        if self.chunked {
            self.chunk_left -= n;
            if self.chunk_left == 0 {
                let mut crlf = String::new();
                self.reader.read_line(&mut crlf).await?;
            }
        }
        Ok(true)
    }
}

async fn send(
    socket: &Path,
    method: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> Result<BufReader<UnixStream>, TransportError> {
    let mut stream = UnixStream::connect(socket).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            TransportError::Down(socket.display().to_string())
        }
        _ => TransportError::Io(e),
    })?;
    let mut head = format!("{method} /mcp HTTP/1.1\r\nHost: localhost\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if method != "GET" {
        head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    stream.write_all(&out).await?;
    Ok(BufReader::new(stream))
}

async fn read_head(reader: &mut (impl AsyncBufRead + Unpin)) -> Result<(u16, Vec<(String, String)>), TransportError> {
    let mut total = 0;
    let mut status_line = String::new();
    total += reader.read_line(&mut status_line).await?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| TransportError::Malformed(format!("status line {status_line:?}")))?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).await?;
        total += n;
        if n == 0 || total > MAX_HEADER_BYTES {
            return Err(TransportError::Malformed("truncated or oversized headers".into()));
        }
        let line = line.trim_end();
        if line.is_empty() {
            return Ok((status, headers));
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

async fn read_body(
    reader: &mut (impl AsyncBufRead + Unpin),
    headers: &[(String, String)],
) -> Result<Vec<u8>, TransportError> {
    if let Some(length) = header(headers, "content-length") {
        let length: usize = length.parse().map_err(|_| TransportError::Malformed("Content-Length".into()))?;
        if length > MAX_RESPONSE_BYTES {
            return Err(TransportError::Malformed(format!("a {length}-byte response exceeds the limit")));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).await?;
        return Ok(body);
    }
    if header(headers, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        let mut body = Vec::new();
        loop {
            let size = read_chunk_size(reader).await?;
            if size == 0 || body.len() + size > MAX_RESPONSE_BYTES {
                return Ok(body);
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..]).await?;
            let mut crlf = String::new();
            reader.read_line(&mut crlf).await?;
        }
    }
    let mut body = Vec::new();
    reader.take(MAX_RESPONSE_BYTES as u64).read_to_end(&mut body).await?;
    Ok(body)
}

async fn read_chunk_size(reader: &mut (impl AsyncBufRead + Unpin)) -> Result<usize, TransportError> {
    let mut line = String::new();
    if reader.read_line(&mut line).await? == 0 {
        return Ok(0);
    }
    let hex = line.trim().split(';').next().unwrap_or("");
    usize::from_str_radix(hex, 16).map_err(|_| TransportError::Malformed(format!("chunk size {line:?}")))
}
