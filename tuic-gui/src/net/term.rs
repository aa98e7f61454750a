//! One open terminal: its WebSocket (binary output frames) parsed by vt100 on the network thread,
//! published to the UI as a [`Grid`] at most once per [`PUBLISH_INTERVAL`]. A flood costs the UI
//! nothing more than one grid copy per frame.

use std::num::NonZeroU16;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use super::Repaint;
use super::api::{Api, ApiError};
use crate::grid::Grid;
use crate::lock::Recover as _;

/// The shortest gap between two published grids: a frame at 120 Hz. Output in between is parsed
/// and shown with the next grid.
const PUBLISH_INTERVAL: Duration = Duration::from_millis(8);
/// Rows kept for the mouse wheel.
const SCROLLBACK_ROWS: usize = 5000;
/// How long to wait before reconnecting a stream the daemon dropped.
const RECONNECT_DELAY: Duration = Duration::from_millis(500);
/// Input and resizes queued from the UI for one terminal.
const INPUT_QUEUE: usize = 256;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TermStatus {
    Connecting,
    Live,
    /// The stream dropped (the daemon is down or restarting); it reconnects by itself.
    Offline(String),
    Exited(Option<i64>),
    /// The session no longer exists (closed, or the daemon restarted without it).
    Gone(String),
}

/// What the UI reads for one terminal.
#[derive(Debug, Clone)]
pub(crate) struct TermView {
    pub grid: Arc<Grid>,
    pub status: TermStatus,
    pub title: Option<String>,
    /// The last input the daemon refused (over TCP input goes through REST, which may refuse it).
    pub refused: Option<String>,
    /// When the latest grid was published (for the keystroke-to-pixel figure).
    pub published_at: Instant,
}

#[derive(Debug)]
pub(crate) enum TermInput {
    Bytes(Vec<u8>),
    Resize {
        rows: u16,
        cols: u16,
    },
    /// Rows back from the live screen.
    Scroll(usize),
}

#[derive(Clone)]
pub(crate) struct Term {
    pub session_id: String,
    pub view: Arc<Mutex<TermView>>,
    /// Signalled with `view`'s mutex each time a grid is published.
    published: Arc<Condvar>,
    input: mpsc::Sender<TermInput>,
}

impl Term {
    /// Queues input; a full queue drops it (the UI shows nothing is lost silently: the typed
    /// text simply does not echo).
    pub(crate) fn send(&self, input: TermInput) {
        let _ = self.input.try_send(input);
    }

    /// The latest grid once it holds output past byte `cursor`, or after `limit` whatever it is:
    /// the one wait of the UI thread on the network side, bounded, so the frame that sent a key
    /// can paint its echo.
    pub(crate) fn wait_for_output(&self, cursor: u64, limit: Duration) -> Arc<Grid> {
        let view = self.view.lock().unwrap_or_else(PoisonError::into_inner);
        let waited = self.published.wait_timeout_while(view, limit, |view| view.grid.cursor_bytes <= cursor);
        let (view, _) = waited.unwrap_or_else(PoisonError::into_inner);
        view.grid.clone()
    }
}

pub(crate) fn open(api: Api, session_id: String, rows: u16, cols: u16, repaint: Repaint) -> Term {
    let grid = Arc::new(Grid { rows, cols, ..Grid::default() });
    let view = Arc::new(Mutex::new(TermView {
        grid,
        status: TermStatus::Connecting,
        title: None,
        refused: None,
        published_at: Instant::now(),
    }));
    let (input, rx) = mpsc::channel(INPUT_QUEUE);
    let published = Arc::new(Condvar::new());
    let term = Term { session_id: session_id.clone(), view: view.clone(), published: published.clone(), input };
    let stream = Stream {
        parser: vt100::Parser::new(size(rows), size(cols), SCROLLBACK_ROWS),
        filter: crate::charset::Filter::default(),
        bells: 0,
        cursor: None,
        view,
        published,
        repaint,
        last_publish: Instant::now(),
    };
    tokio::spawn(run(api, session_id, (rows.max(1), cols.max(1)), stream, rx));
    term
}

fn size(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

struct Stream {
    parser: vt100::Parser,
    /// Character sets, strike-through and the bell, which vt100 leaves out.
    filter: crate::charset::Filter,
    bells: u64,
    /// The byte cursor after the last byte parsed: where a reconnect resumes.
    cursor: Option<u64>,
    view: Arc<Mutex<TermView>>,
    published: Arc<Condvar>,
    repaint: Repaint,
    last_publish: Instant,
}

impl Stream {
    fn publish(&mut self) {
        let mut grid = Grid::from_screen(self.parser.screen(), self.cursor.unwrap_or(0));
        grid.scrollback_len = self.parser.screen().scrollback_len();
        grid.bells = self.bells;
        let grid = Arc::new(grid);
        let mut view = self.view.locked();
        view.grid = grid;
        view.published_at = Instant::now();
        drop(view);
        self.published.notify_all();
        self.last_publish = Instant::now();
        self.repaint.request();
    }

    fn set_status(&self, status: TermStatus) {
        self.view.locked().status = status;
        self.repaint.request();
    }
}

async fn run(
    api: Api,
    session_id: String,
    mut size: (u16, u16),
    mut stream: Stream,
    mut input: mpsc::Receiver<TermInput>,
) {
    loop {
        let path = match stream.cursor {
            Some(cursor) => format!("/sessions/{session_id}/stream?binary=1&cursor={cursor}"),
            None => format!("/sessions/{session_id}/stream?binary=1"),
        };
        match api.websocket(&path).await {
            Ok(ws) => {
                stream.set_status(TermStatus::Live);
                // The PTY takes the view's size (the daemon's resize is a no-op when unchanged).
                resize(&api, &session_id, size).await;
                match pump(&api, &session_id, ws, &mut stream, &mut input, &mut size).await {
                    Pumped::Exited(code) => {
                        stream.publish();
                        stream.set_status(TermStatus::Exited(code));
                        return;
                    }
                    Pumped::Closed => return,
                    Pumped::Dropped(why) => stream.set_status(TermStatus::Offline(why)),
                }
            }
            Err(ApiError::Status(404, _)) => {
                stream.set_status(TermStatus::Gone("the session no longer exists".into()));
                return;
            }
            Err(ApiError::Unauthorized) => {
                stream.set_status(TermStatus::Gone(ApiError::Unauthorized.to_string()));
                return;
            }
            Err(e) => stream.set_status(TermStatus::Offline(e.to_string())),
        }
        // Offline: wait, dropping input (nothing can take it) unless the UI closed the tab.
        let retry = tokio::time::sleep(RECONNECT_DELAY);
        tokio::pin!(retry);
        loop {
            tokio::select! {
                () = &mut retry => break,
                message = input.recv() => match message {
                    None => return,
                    Some(TermInput::Resize { rows, cols }) => size = (rows, cols),
                    Some(_) => {}
                },
            }
        }
    }
}

enum Pumped {
    Exited(Option<i64>),
    /// The UI closed the tab.
    Closed,
    Dropped(String),
}

async fn pump(
    api: &Api,
    session_id: &str,
    ws: super::api::Ws,
    stream: &mut Stream,
    input: &mut mpsc::Receiver<TermInput>,
    size: &mut (u16, u16),
) -> Pumped {
    let (mut sink, mut frames) = ws.split();
    let mut publish_due: Option<Instant> = None;
    loop {
        let publish_timer = async {
            match publish_due {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            frame = frames.next() => {
                let message = match frame {
                    None => return Pumped::Dropped("the stream closed".into()),
                    Some(Err(e)) => return Pumped::Dropped(e.to_string()),
                    Some(Ok(message)) => message,
                };
                match message {
                    Message::Binary(bytes) if bytes.len() >= 8 => {
                        let mut head = [0u8; 8];
                        head.copy_from_slice(&bytes[..8]);
                        let cursor = u64::from_be_bytes(head);
                        let filtered = stream.filter.process(&bytes[8..]);
                        stream.parser.process(&filtered);
                        if stream.filter.take_bell() {
                            stream.bells += 1;
                        }
                        stream.cursor = Some(cursor + (bytes.len() as u64 - 8));
                        // Output after a quiet spell (an echo) is shown at once; more output within
                        // the interval waits for the timer, so a flood costs one grid per interval.
                        let due = stream.last_publish + PUBLISH_INTERVAL;
                        if publish_due.is_none() && due <= Instant::now() {
                            stream.publish();
                        } else if publish_due.is_none() {
                            publish_due = Some(due);
                        }
                    }
                    Message::Text(text) => {
                        let frame: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
                        match frame["type"].as_str() {
                            Some("exit") => return Pumped::Exited(frame["exit_code"].as_i64()),
                            Some("closed") => return Pumped::Exited(None),
                            Some("lagged") => stream.cursor = frame["cursor"].as_u64(),
                            Some("parsed") if frame["event"]["type"] == "title" => {
                                stream.view.locked().title = frame["event"]["title"].as_str().map(String::from);
                            }
                            _ => {}
                        }
                    }
                    Message::Close(_) => return Pumped::Dropped("the daemon closed the stream".into()),
                    _ => {}
                }
            }
            () = publish_timer => {
                publish_due = None;
                stream.publish();
            }
            message = input.recv() => match message {
                None => {
                    let _ = sink.send(Message::Close(None)).await;
                    return Pumped::Closed;
                }
                Some(TermInput::Bytes(bytes)) => {
                    if api.is_remote() {
                        // Over TCP the person writes through REST (WebSocket input is local-only).
                        let data = String::from_utf8_lossy(&bytes).into_owned();
                        let written = api.send(reqwest::Method::POST, &format!("/sessions/{session_id}/write"), &json!({"data": data})).await;
                        stream.view.locked().refused = written.err().map(|e| format!("input refused: {e}"));
                    } else if let Err(e) = sink.send(Message::Binary(bytes.into())).await {
                        return Pumped::Dropped(e.to_string());
                    }
                }
                Some(TermInput::Resize { rows, cols }) => {
                    if (rows, cols) != *size && rows > 0 && cols > 0 {
                        *size = (rows, cols);
                        stream.parser.screen_mut().set_size(self::size(rows), self::size(cols));
                        stream.publish();
                        resize(api, session_id, *size).await;
                    }
                }
                Some(TermInput::Scroll(rows)) => {
                    stream.parser.screen_mut().set_scrollback(rows);
                    stream.publish();
                }
            },
        }
    }
}

async fn resize(api: &Api, session_id: &str, (rows, cols): (u16, u16)) {
    let body = json!({"rows": rows, "cols": cols});
    let _ = api.send(reqwest::Method::POST, &format!("/sessions/{session_id}/resize"), &body).await;
}
