//! `GET /sessions/:id/stream`: the WebSocket. Catch-up from `?cursor=` (or the whole ring), then
//! live JSON text frames (`output`, `parsed`, `lagged`, `exit`, `closed`), then the close
//! handshake. With `?binary=1` output goes as binary frames instead (an 8-byte big-endian cursor,
//! then the raw bytes: no UTF-8 hold-back, no JSON escaping); every other frame stays JSON text.
//! Client text or binary frames are written to the PTY verbatim (from the IPC socket, and from a
//! person authenticated over TCP: remote access is the phone page's and remote GUI's way in).
//! The close handshake follows RFC 6455: a client's Close is answered with a Close, and a text
//! frame that is not UTF-8 closes the stream with 1007.
//!
//! On a plain socket (IPC, TCP without TLS) the session's reader thread writes the client's output
//! frames itself (`stream_direct.rs`) and this task sends the other frames, from the session's
//! `notices`. Over TLS, and whenever the client's socket has not taken the rest of one frame by the
//! time the next is ready, this task relays the output from the session broadcast at the client's
//! own pace. A client whose socket stalls falls behind the broadcast's bounded window, is told with
//! a `lagged` frame only if the ring no longer has what it missed, and is resynced from the ring:
//! memory stays bounded and the PTY and the other clients never wait for it.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use hyper_tungstenite::WebSocketStream;
use hyper_tungstenite::tungstenite::handshake::derive_accept_key;
use hyper_tungstenite::tungstenite::protocol::frame::CloseFrame;
use hyper_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use hyper_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use hyper_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};
use hyper_util::rt::TokioIo;
use proto::session::StreamFrame;
use serde::Deserialize;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{Notify, broadcast};

use crate::http::body::query;
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::limits::{WS_BATCH_BYTES, WS_CATCH_UP_CHUNK, WS_READ_BUFFER};
use crate::principals::Scope;
use crate::session::{Session, SessionEvent, SizeClient, Watch};
use crate::state::App;

use super::stream_direct::{DirectSocket, Position, SocketIo};
use super::stream_encode::{binary_output, json_output, json_output_holding_back};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StreamParams {
    /// Byte cursor to catch up from; the oldest retained byte when absent.
    cursor: Option<u64>,
    /// The reference's name for `cursor`.
    offset: Option<u64>,
    /// Only `raw` is served over the socket; text/log readers poll `/output` with a cursor.
    format: Option<String>,
    /// `1`/`true`: output as binary frames (see the module doc); `0`/`false` (the default): JSON.
    binary: Option<String>,
    /// This client's size (both or neither): it joins the session's size rule, gets a `resize`
    /// frame first, and may send `{"type":"resize","rows":R,"cols":C}` text frames.
    rows: Option<u16>,
    cols: Option<u16>,
    /// This client's name, for `POST /sessions/:id/resize` and `/write` (`client`); `ws-<n>` when absent.
    client: Option<String>,
}

/// A size-aware client's `resize` text frame.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum ClientFrame {
    Resize { rows: u16, cols: u16 },
}

pub(crate) async fn stream(app: &App, caller: &Caller, id: &str, mut req: Request) -> ApiResult {
    let session = app.sessions.resolve(id)?;
    let params: StreamParams = query(&req)?;
    if params.format.as_deref().is_some_and(|f| f != "raw") {
        return Err(ApiError::InvalidField("format: the stream serves 'raw' only".into()));
    }
    if !hyper_tungstenite::is_upgrade_request(&req) {
        return Err(ApiError::BadRequest("this endpoint expects a WebSocket upgrade".into()));
    }
    let binary = match params.binary.as_deref() {
        None | Some("0" | "false") => false,
        Some("1" | "true") => true,
        Some(_) => return Err(ApiError::InvalidField("binary: expected 1, 0, true or false".into())),
    };
    let size = match (params.rows, params.cols) {
        (Some(rows), Some(cols)) => {
            let range = crate::limits::TERMINAL_SIZE_MIN..=crate::limits::TERMINAL_SIZE_MAX;
            for (field, value) in [("rows", rows), ("cols", cols)] {
                if !range.contains(&value) {
                    return Err(ApiError::InvalidField(format!(
                        "{field}: {value} is out of range; allowed {}..={}",
                        range.start(),
                        range.end()
                    )));
                }
            }
            Some((rows, cols))
        }
        (None, None) => None,
        _ => return Err(ApiError::InvalidField("rows, cols: give both or neither".into())),
    };
    if params.client.as_deref().is_some_and(|c| c.is_empty() || c.len() > 128) {
        return Err(ApiError::InvalidField("client: 1..=128 bytes".into()));
    }
    let accept = websocket_accept(&req)?;
    // An HTTP/1.1 connection belongs to this socket alone once upgraded: only then may the reader
    // thread write to its descriptor.
    // A token's stream is cut when the token is revoked, which needs the connection to hold the
    // only copy of the socket: the direct path keeps a duplicate, so it is left to the owner.
    let token = caller.grant.token_id().map(str::to_owned);
    let direct = caller.socket.filter(|_| req.version() == http::Version::HTTP_11 && token.is_none()).and_then(|fd| {
        #[allow(unsafe_code)]
        // SAFETY: `fd` is the descriptor of the connection this request arrived on, which hyper
        // keeps open while it serves the request (now); it is duplicated at once, so the copy
        // outlives the borrow.
        let socket = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        socket.try_clone_to_owned().ok().map(|fd| Arc::new(DirectSocket::new(fd, binary)))
    });
    let upgrading = hyper::upgrade::on(&mut req);
    // What a token may not write is refused on the stream too: a watcher does not type.
    let writable = caller.grant.allows(Scope::Drive, Some(&session.id)).is_ok();
    let sizing = Sizing { size, name: params.client, shown: (0, 0) };
    let client = Client { app: app.clone(), session, binary, writable, next: 0, held: Vec::new(), direct, sizing };
    let cursor = params.cursor.or(params.offset);
    tokio::spawn(async move {
        match upgrading.await {
            Ok(upgraded) => {
                let io = SocketIo::new(TokioIo::new(upgraded), client.direct.clone());
                let config = WebSocketConfig::default().read_buffer_size(WS_READ_BUFFER);
                let socket = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
                match token {
                    Some(id) => {
                        let tokens = client.app.tokens.clone();
                        tokio::select! {
                            () = client.run(socket, cursor) => {}
                            () = tokens.ended(&id) => tracing::info!(token = %id, "closed a stream: its token was revoked or expired"),
                        }
                    }
                    None => client.run(socket, cursor).await,
                }
            }
            Err(e) => tracing::debug!(error = %e, "WebSocket handshake failed"),
        }
    });
    switching_protocols(&accept)
}

/// The `Sec-WebSocket-Accept` value for an upgrade request, or what it lacks.
pub(super) fn websocket_accept(req: &Request) -> Result<String, ApiError> {
    let key = req
        .headers()
        .get("sec-websocket-key")
        .ok_or_else(|| ApiError::BadRequest("WebSocket upgrade failed: no Sec-WebSocket-Key header".into()))?;
    if req.headers().get("sec-websocket-version").map(|v| v.as_bytes()) != Some(b"13") {
        return Err(ApiError::BadRequest("WebSocket upgrade failed: Sec-WebSocket-Version must be 13".into()));
    }
    Ok(derive_accept_key(key.as_bytes()))
}

/// The 101 answer that completes a WebSocket upgrade.
pub(super) fn switching_protocols(accept: &str) -> ApiResult {
    http::Response::builder()
        .status(http::StatusCode::SWITCHING_PROTOCOLS)
        .header(http::header::CONNECTION, "upgrade")
        .header(http::header::UPGRADE, "websocket")
        .header("sec-websocket-accept", accept)
        .body(crate::http::body::empty())
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("building the upgrade response: {e}")))
}

type Socket = WebSocketStream<SocketIo<TokioIo<hyper::upgrade::Upgraded>>>;
type Sink = futures_util::stream::SplitSink<Socket, Message>;
type Events = broadcast::Receiver<Arc<SessionEvent>>;

struct Client {
    app: App,
    session: Arc<Session>,
    /// Output as binary frames (raw bytes after an 8-byte cursor) instead of JSON text.
    binary: bool,
    /// Input frames reach the session; else the first one closes the stream with 1008.
    writable: bool,
    /// Cursor after the last byte taken from the session (sent, or held in `held`). Stale while
    /// the reader thread writes the output (see `stream_direct.rs`): [`Client::take_back`] first.
    next: u64,
    /// An incomplete UTF-8 character at the end of the last chunk, sent with the next one (JSON
    /// mode only: binary frames carry raw bytes and may split a character).
    held: Vec<u8>,
    /// On a plain socket: the reader thread's way to write this client's output frames itself.
    direct: Option<Arc<DirectSocket>>,
    sizing: Sizing,
}

/// This client and the session's size rule.
struct Sizing {
    /// The size the client reported at connect (`?rows=&cols=`): it is size-aware.
    size: Option<(u16, u16)>,
    name: Option<String>,
    /// The size last told to the client (or, for a client that did not report one, the size at
    /// connect): a `resize` frame goes out when the session's differs.
    shown: (u16, u16),
}

/// Why this client is no longer served.
enum Gone {
    /// The socket failed or the daemon is shutting down: close without a code.
    Dropped,
    /// The client sent Close: its reply is queued, to be flushed.
    ClosedByClient,
    /// The client broke the protocol: close with this code.
    Refused(CloseCode, &'static str),
}

impl Client {
    async fn run(mut self, socket: Socket, cursor: Option<u64>) {
        let (mut sink, incoming) = socket.split();
        // Input first: the client's frames are read and written to the PTY on their own task, so
        // a Ctrl-C arrives however far behind this client's output is (while this task waits on
        // a full socket, or the reader thread owns the output).
        let (input_ended, mut input_end) = tokio::sync::oneshot::channel();
        let Watch { read: first, live, mut notices, exit: finished } =
            self.session.watch_from(cursor, WS_CATCH_UP_CHUNK);
        // A client that may type is one of the session's size clients (an observer's size never
        // counts); it leaves them when this future ends.
        let sized = self.writable.then(|| {
            Arc::new(self.session.attach_size_client(
                self.sizing.name.as_deref(),
                self.sizing.size,
                self.app.config.get().window_size,
            ))
        });
        let input = Input {
            session: self.session.clone(),
            writable: self.writable,
            size_aware: self.sizing.size.is_some(),
            sized: sized.as_ref().map(Arc::downgrade),
        };
        let input = tokio::spawn(read_input(incoming, input, input_ended));
        self.sizing.shown = self.session.size();
        // Output comes from `live` while this task relays it, and not at all while the reader
        // writes it; every other event comes from `notices`.
        let mut live = Some(live);
        self.next = first.start;
        let result: Result<(), Gone> = async {
            if self.sizing.size.is_some() {
                let (rows, cols) = self.sizing.shown;
                send(&mut sink, &StreamFrame::Resize { rows, cols }).await?;
            }
            if first.missed > 0 {
                send(&mut sink, &StreamFrame::Lagged { missed: first.missed, cursor: first.start }).await?;
            }
            self.forward(&mut sink, first.start, &[&first.data]).await?;
            self.catch_up(&mut sink).await?;
            if let Some(exit) = finished {
                return self.end(&mut sink, exit.exit_code, exit.reason).await;
            }
            loop {
                if live.as_ref().is_some_and(|rx| self.go_direct(rx)) {
                    live = None;
                }
                tokio::select! {
                    () = self.app.stopping() => return Err(Gone::Dropped),
                    received = recv_live(&mut live) => match received {
                        Ok(event) => {
                            if let SessionEvent::Output { start, data } = &*event {
                                self.on_output(&mut sink, *start, data.clone(), live.as_mut().expect("relaying")).await?;
                            }
                        }
                        Err(RecvError::Lagged(_)) => {
                            self.app.sessions.counters().ws_lag_resyncs.fetch_add(1, Ordering::Relaxed);
                            self.catch_up(&mut sink).await?;
                        }
                        Err(RecvError::Closed) => return Err(Gone::Dropped),
                    },
                    notice = notices.recv() => match notice.as_deref() {
                        Ok(SessionEvent::Parsed(parsed)) => {
                            send(&mut sink, &StreamFrame::Parsed { event: parsed.clone() }).await?;
                        }
                        Ok(SessionEvent::Resize { rows, cols }) => {
                            if self.sizing.shown != (*rows, *cols) {
                                self.sizing.shown = (*rows, *cols);
                                send(&mut sink, &StreamFrame::Resize { rows: *rows, cols: *cols }).await?;
                            }
                        }
                        Ok(SessionEvent::Exit | SessionEvent::Closed) => {
                            let exit = self.session.exit_info();
                            let (code, reason) = exit.map_or((None, "closed"), |e| (e.exit_code, e.reason));
                            return self.end(&mut sink, code, reason).await;
                        }
                        // Only `parsed` and `resize` notices can be missed (a missed size comes
                        // with the next change): the exit ones are the last two.
                        Ok(SessionEvent::Output { .. }) | Err(RecvError::Lagged(_)) => {}
                        Err(RecvError::Closed) => return Err(Gone::Dropped),
                    },
                    () = notified(self.direct.as_deref(), DirectSocket::handed_back), if live.is_none() => {
                        // The socket was full: relay from where the reader stopped until caught up.
                        if let Some(position) = self.direct.as_ref().and_then(|d| d.handed()) {
                            self.app.sessions.counters().ws_lag_resyncs.fetch_add(1, Ordering::Relaxed);
                            (self.next, self.held) = (position.next, position.held);
                            live = Some(self.session.subscribe());
                            sink.flush().await.map_err(|_| Gone::Dropped)?;
                            self.catch_up(&mut sink).await?;
                        }
                    },
                    () = notified(self.direct.as_deref(), DirectSocket::flush_wanted), if live.is_none() => {
                        // The socket took part of a frame: send the rest as soon as it drains,
                        // should the reader's next chunk not come first.
                        sink.flush().await.map_err(|_| Gone::Dropped)?;
                    },
                    ended = &mut input_end => return Err(ended.unwrap_or(Gone::Dropped)),
                }
            }
        }
        .await;
        input.abort();
        drop(sized);
        if let Some(direct) = &self.direct {
            self.session.detach_sink(direct);
        }
        match result {
            Ok(()) => {}
            // The reply tungstenite queued when it read the Close goes out with the flush.
            Err(Gone::ClosedByClient) => drop(sink.flush().await),
            Err(Gone::Refused(code, reason)) => {
                let frame = CloseFrame { code, reason: Utf8Bytes::from_static(reason) };
                drop(sink.send(Message::Close(Some(frame))).await);
            }
            Err(Gone::Dropped) => drop(sink.send(Message::Close(None)).await),
        }
    }

    /// Hands the output to the reader thread if this client has sent everything so far and nothing
    /// is queued for it; true when it did.
    fn go_direct(&mut self, live: &Events) -> bool {
        let Some(direct) = &self.direct else { return false };
        let at = self.next;
        self.session.attach_sink(direct, at, || {
            // Under the output lock: no chunk can be broadcast between this check and the arming.
            live.is_empty() && {
                direct.arm(Position { next: at, held: std::mem::take(&mut self.held) });
                true
            }
        })
    }

    /// Takes the output back from the reader thread, if it has it.
    fn take_back(&mut self) {
        if let Some((position, handed)) = self.direct.as_ref().and_then(|d| d.take_back()) {
            if handed {
                // A resync the `handed_back` branch did not get to (the task was busy flushing).
                self.app.sessions.counters().ws_lag_resyncs.fetch_add(1, Ordering::Relaxed);
            }
            (self.next, self.held) = (position.next, position.held);
        }
    }

    /// Sends a live output chunk, coalescing the output chunks already queued behind it into one
    /// frame (other events are taken from `notices`).
    async fn on_output(&mut self, sink: &mut Sink, start: u64, data: Bytes, live: &mut Events) -> Result<(), Gone> {
        // The chunks are shared with the broadcast: gathered by reference, encoded once.
        let mut batch = vec![data];
        let mut len = batch[0].len();
        while len < WS_BATCH_BYTES {
            match live.try_recv() {
                Ok(next) => match &*next {
                    SessionEvent::Output { start: s, data } if *s == start + len as u64 => {
                        len += data.len();
                        batch.push(data.clone());
                    }
                    SessionEvent::Output { .. } => break,
                    _ => {}
                },
                Err(TryRecvError::Lagged(_)) => {
                    self.deliver(sink, start, batch).await?;
                    self.app.sessions.counters().ws_lag_resyncs.fetch_add(1, Ordering::Relaxed);
                    return self.catch_up(sink).await;
                }
                Err(_) => break,
            }
        }
        self.deliver(sink, start, batch).await
    }

    /// Sends a live chunk; a chunk that starts beyond `next` means this client missed bytes, so
    /// it resyncs from the ring instead.
    async fn deliver(&mut self, sink: &mut Sink, start: u64, batch: Vec<Bytes>) -> Result<(), Gone> {
        if start > self.next {
            return self.catch_up(sink).await;
        }
        let parts: Vec<&[u8]> = batch.iter().map(|b| b.as_ref()).collect();
        self.forward(sink, start, &parts).await
    }

    /// Sends the part of the contiguous `parts`, starting at cursor `start`, that this client has not
    /// had yet (`start` must not be beyond `next`), as one frame encoded straight from the parts.
    async fn forward(&mut self, sink: &mut Sink, start: u64, parts: &[&[u8]]) -> Result<(), Gone> {
        let end = start + parts.iter().map(|p| p.len() as u64).sum::<u64>();
        if end <= self.next {
            return Ok(());
        }
        let mut skip = (self.next - start) as usize;
        let cursor = self.next - self.held.len() as u64;
        self.next = end;
        let held = std::mem::take(&mut self.held);
        let mut fresh: Vec<&[u8]> = Vec::with_capacity(parts.len() + 1);
        fresh.push(&held);
        for part in parts {
            let from = skip.min(part.len());
            skip -= from;
            fresh.push(&part[from..]);
        }
        if self.binary {
            let mut frame = binary_output(cursor, (end - cursor) as usize);
            fresh.iter().for_each(|part| frame.extend_from_slice(part));
            return sink.send(Message::binary(frame)).await.map_err(|_| Gone::Dropped);
        }
        let (frame, tail) = json_output_holding_back(fresh, cursor);
        self.held = tail;
        let Some(frame) = frame else { return Ok(()) };
        // The frame is UTF-8 (`json_output_bytes`); tungstenite checks it once more.
        let text = Utf8Bytes::try_from(frame).map_err(|_| Gone::Dropped)?;
        sink.send(Message::Text(text)).await.map_err(|_| Gone::Dropped)
    }

    /// Reads the ring from `next` until it is exhausted, telling the client what was evicted.
    async fn catch_up(&mut self, sink: &mut Sink) -> Result<(), Gone> {
        loop {
            let read = self.session.read_raw(self.next, WS_CATCH_UP_CHUNK);
            if read.missed > 0 {
                self.held.clear();
                self.next = read.start;
                send(sink, &StreamFrame::Lagged { missed: read.missed, cursor: read.start }).await?;
            }
            if read.data.is_empty() {
                return Ok(());
            }
            self.forward(sink, read.start, &[&read.data]).await?;
        }
    }

    /// Flushes what is held, then `exit`, `closed` and the close handshake.
    async fn end(&mut self, sink: &mut Sink, exit_code: Option<i32>, reason: &'static str) -> Result<(), Gone> {
        self.take_back();
        self.catch_up(sink).await?;
        // An incomplete character left at the end goes out as it is (U+FFFD).
        let held = std::mem::take(&mut self.held);
        if !held.is_empty() {
            let frame = json_output(&[&held], self.next - held.len() as u64, self.next);
            sink.send(Message::text(frame)).await.map_err(|_| Gone::Dropped)?;
        }
        let session_id = self.session.id.clone();
        send(sink, &StreamFrame::Exit { session_id: session_id.clone(), exit_code }).await?;
        send(sink, &StreamFrame::Closed { session_id, reason: reason.to_owned() }).await?;
        sink.close().await.map_err(|_| Gone::Dropped)
    }
}

/// What the input task needs of its client.
struct Input {
    session: Arc<Session>,
    writable: bool,
    /// The client reported a size at connect: its `resize` text frames are sizes, not input.
    size_aware: bool,
    /// Its place among the size clients (owned by the output task, so it leaves with the stream).
    sized: Option<std::sync::Weak<SizeClient>>,
}

impl Input {
    /// The client's place among the size clients, while the stream lasts.
    fn sized(&self) -> Option<Arc<SizeClient>> {
        self.sized.as_ref().and_then(std::sync::Weak::upgrade)
    }

    /// A size-aware client's `resize` frame, applied; false for anything else.
    fn resized(&self, text: &str) -> bool {
        if !self.size_aware || !text.starts_with('{') {
            return false;
        }
        let Ok(ClientFrame::Resize { rows, cols }) = serde_json::from_str(text) else { return false };
        if let Some(sized) = self.sized()
            && let Err(e) = sized.report(rows, cols)
        {
            tracing::debug!(session = %self.session.id, error = %e, "a client's resize frame was refused");
        }
        true
    }

    /// Input from this client: under `latest` the session takes its size first.
    async fn write(&self, data: Bytes) {
        if let Some(sized) = self.sized() {
            sized.active();
        }
        write_input(&self.session, data).await;
    }
}

/// Reads the client's frames until it closes or breaks the protocol, writing input to the PTY;
/// how it ended goes to the output task, which closes the socket.
async fn read_input(
    mut incoming: futures_util::stream::SplitStream<Socket>,
    input: Input,
    ended: tokio::sync::oneshot::Sender<Gone>,
) {
    let gone = loop {
        match incoming.next().await {
            Some(Ok(Message::Text(text))) if input.resized(&text) => {}
            Some(Ok(Message::Text(_) | Message::Binary(_))) if !input.writable => {
                break Gone::Refused(CloseCode::Policy, "this token observes the session: it cannot type into it");
            }
            Some(Ok(Message::Text(text))) => input.write(Bytes::from(text)).await,
            Some(Ok(Message::Binary(data))) => input.write(data).await,
            Some(Ok(Message::Close(_))) => break Gone::ClosedByClient,
            Some(Err(WsError::Utf8(_))) => break Gone::Refused(CloseCode::Invalid, "a text frame is not UTF-8"),
            Some(Err(WsError::Protocol(_))) => break Gone::Refused(CloseCode::Protocol, "protocol error"),
            Some(Err(WsError::Capacity(_))) => break Gone::Refused(CloseCode::Size, "message too big"),
            None | Some(Err(_)) => break Gone::Dropped,
            Some(Ok(_)) => {}
        }
    };
    let _ = ended.send(gone);
}

async fn write_input(session: &Session, data: Bytes) {
    if let Err(e) = session.write(data).await {
        tracing::debug!(session = %session.id, error = %e, "WebSocket input refused");
    }
}

/// The next event of `live` while relaying; never while the reader writes the output.
async fn recv_live(live: &mut Option<Events>) -> Result<Arc<SessionEvent>, RecvError> {
    match live {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// One of the direct socket's wake-ups (`which`); never without a direct socket.
async fn notified(direct: Option<&DirectSocket>, which: fn(&DirectSocket) -> &Notify) {
    match direct {
        Some(direct) => which(direct).notified().await,
        None => std::future::pending().await,
    }
}

async fn send(sink: &mut Sink, frame: &StreamFrame) -> Result<(), Gone> {
    let text = serde_json::to_string(frame).map_err(|_| Gone::Dropped)?;
    sink.send(Message::text(text)).await.map_err(|_| Gone::Dropped)
}
