//! ACP agents driven by the daemon (`/acp/connections/*`): the connections list and the pending
//! questions, polled while the Agents (ACP) view is open and at once when the bus says
//! `acp-notice`; the actions the view asks for; and one connection's conversation, followed on
//! `GET /acp/connections/:id/stream?after=N` (WebSocket) and kept as a bounded list of items.
//!
//! Everything the agent wrote is untrusted text: it is kept as plain strings (control characters
//! replaced, lengths capped) and the UI shows it with labels only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};
use tokio_tungstenite::tungstenite::Message;

pub(crate) use super::acp_view::{ConvView, Diff, ItemKind, StreamStatus};
use super::api::{Api, ApiError};
use super::{Handle, Repaint};
use crate::lock::Recover as _;

/// How often the open view refreshes the connections (besides `acp-notice`).
const POLL_INTERVAL: Duration = Duration::from_secs(2);
/// Launching an agent waits for its `initialize`; a new session for `session/new`.
const SLOW_REQUEST: Duration = Duration::from_secs(60);
/// How long to wait before reopening a stream the daemon dropped.
const RECONNECT_DELAY: Duration = Duration::from_millis(500);
/// Conversation items kept per connection (all its sessions); older ones give way.
pub(crate) const ITEMS_KEPT: usize = 500;
/// One item's text beyond this many bytes is cut.
pub(super) const ITEM_CHARS: usize = 64 * 1024;
/// A line beyond this many characters is cut (the window lays out every line it shows).
pub(crate) const LINE_CHARS: usize = 1000;
/// Turns tracked as running at once; an agent that never answers its prompts cannot grow it.
pub(super) const RUNNING_KEPT: usize = 64;

/// What the view shows of the daemon's ACP side, in the snapshot.
#[derive(Debug, Clone, Default)]
pub(crate) struct AcpState {
    /// `GET /acp/connections` once loaded.
    pub connections: Option<Vec<Value>>,
    /// `GET /acp/connections/:id/interactions` of each connection with questions pending.
    pub interactions: HashMap<String, Vec<Value>>,
    /// The last action's failure, as the daemon worded it (e.g. the 409 naming ego_executable).
    pub error: Option<String>,
    /// A connection or session the last action created: the view selects it.
    pub created: Option<(String, Option<String>)>,
}

#[derive(Debug)]
pub(crate) enum AcpCommand {
    Launch,
    NewSession {
        connection: String,
    },
    Reconnect {
        connection: String,
    },
    Disconnect {
        connection: String,
    },
    /// `load`, `resume`, `close`, ... on one session.
    Session {
        connection: String,
        session: String,
        action: &'static str,
    },
    Prompt {
        connection: String,
        session: String,
        text: String,
    },
    Cancel {
        connection: String,
        session: String,
    },
    Permission {
        connection: String,
        request: String,
        option: String,
    },
    Elicitation {
        connection: String,
        request: String,
        body: Value,
    },
}

/// Whether the view is open, and the poller's wake-up.
#[derive(Clone, Default)]
pub(super) struct Watch {
    visible: Arc<Mutex<bool>>,
    wake: Arc<Notify>,
}

impl Watch {
    pub(super) fn set(&self, visible: bool) {
        let was = std::mem::replace(&mut *self.visible.locked(), visible);
        if visible && !was {
            self.wake();
        }
    }

    pub(super) fn wake(&self) {
        self.wake.notify_one();
    }
}

pub(super) async fn follow(handle: Handle) {
    loop {
        if *handle.acp.visible.locked() {
            poll(&handle).await;
            handle.repaint.request();
        }
        tokio::select! {
            () = tokio::time::sleep(POLL_INTERVAL) => {}
            () = handle.acp.wake.notified() => {}
        }
    }
}

async fn poll(handle: &Handle) {
    let api = handle.api.locked().clone();
    // Offline or refused: the health poller says so; the last list stays on screen.
    let Ok(list) = api.get("/acp/connections").await else { return };
    let connections = list["connections"].as_array().cloned().unwrap_or_default();
    let mut interactions = HashMap::new();
    for connection in &connections {
        let Some(id) = connection["id"].as_str() else { continue };
        if connection["interactions_pending"].as_u64().unwrap_or(0) == 0 {
            continue;
        }
        if let Ok(answer) = api.get(&format!("/acp/connections/{id}/interactions")).await {
            interactions.insert(id.to_owned(), answer["interactions"].as_array().cloned().unwrap_or_default());
        }
    }
    let mut snap = handle.snapshot.locked();
    snap.acp.connections = Some(connections);
    snap.acp.interactions = interactions;
}

pub(super) async fn execute(handle: &Handle, api: &Api, command: AcpCommand) {
    use reqwest::Method;
    let outcome = match command {
        AcpCommand::Launch => {
            api.send_slow(Method::POST, "/acp/connections", &json!({}), SLOW_REQUEST).await.map(|created| {
                let id = created["id"].as_str().map(str::to_owned);
                handle.snapshot.locked().acp.created = id.map(|id| (id, None));
            })
        }
        AcpCommand::NewSession { connection } => api
            .send_slow(Method::POST, &format!("/acp/connections/{connection}/sessions"), &json!({}), SLOW_REQUEST)
            .await
            .map(|created| {
                let session = created["session_id"].as_str().map(str::to_owned);
                handle.snapshot.locked().acp.created = Some((connection, session));
            }),
        AcpCommand::Reconnect { connection } => api
            .send_slow(Method::POST, &format!("/acp/connections/{connection}/reconnect"), &json!({}), SLOW_REQUEST)
            .await
            .map(drop),
        AcpCommand::Disconnect { connection } => api
            .send_slow(Method::DELETE, &format!("/acp/connections/{connection}"), &json!({}), SLOW_REQUEST)
            .await
            .map(drop),
        AcpCommand::Session { connection, session, action } => api
            .send_slow(
                Method::POST,
                &format!("/acp/connections/{connection}/sessions/{session}/{action}"),
                &json!({}),
                SLOW_REQUEST,
            )
            .await
            .map(drop),
        AcpCommand::Prompt { connection, session, text } => api
            .send(
                Method::POST,
                &format!("/acp/connections/{connection}/sessions/{session}/prompt"),
                &json!({"prompt": text}),
            )
            .await
            .map(drop),
        AcpCommand::Cancel { connection, session } => api
            .send(Method::POST, &format!("/acp/connections/{connection}/sessions/{session}/cancel"), &json!({}))
            .await
            .map(drop),
        AcpCommand::Permission { connection, request, option } => api
            .send(
                Method::POST,
                &format!("/acp/connections/{connection}/permissions/{request}/response"),
                &json!({"option_id": option}),
            )
            .await
            .map(drop),
        AcpCommand::Elicitation { connection, request, body } => api
            .send(Method::POST, &format!("/acp/connections/{connection}/elicitations/{request}/response"), &body)
            .await
            .map(drop),
    };
    handle.snapshot.locked().acp.error = outcome.err().map(|e| e.to_string());
    handle.acp.wake();
    handle.repaint.request();
}

/// One connection's conversation, followed while any clone lives.
#[derive(Clone)]
pub(crate) struct Conversation {
    pub connection: String,
    pub view: Arc<Mutex<ConvView>>,
    _alive: mpsc::Sender<()>,
}

/// Follows `connection`'s stream; `watch` is woken when a turn starts or ends there, so the
/// connections list (whose `turn_running` the bus does not announce) is fresh at once.
pub(super) fn open(api: Api, connection: String, repaint: Repaint, watch: Watch) -> Conversation {
    let view = Arc::new(Mutex::new(ConvView { status: Some(StreamStatus::Connecting), ..ConvView::default() }));
    let (alive, closed) = mpsc::channel(1);
    tokio::spawn(run(api, connection.clone(), view.clone(), closed, repaint, watch));
    Conversation { connection, view, _alive: alive }
}

async fn run(
    api: Api,
    connection: String,
    view: Arc<Mutex<ConvView>>,
    mut closed: mpsc::Receiver<()>,
    repaint: Repaint,
    watch: Watch,
) {
    let set_status = |status: StreamStatus| {
        view.locked().status = Some(status);
        repaint.request();
    };
    loop {
        let after = view.locked().last_seq;
        let path = match after {
            Some(seq) => format!("/acp/connections/{connection}/stream?after={seq}"),
            None => format!("/acp/connections/{connection}/stream"),
        };
        let opened = tokio::select! {
            opened = api.websocket(&path) => opened,
            _ = closed.recv() => return,
        };
        match opened {
            Ok(ws) => {
                set_status(StreamStatus::Live);
                match pump(ws, &view, &mut closed, &repaint, &watch).await {
                    None => return,
                    Some(why) => set_status(StreamStatus::Offline(why)),
                }
            }
            // `after` older than the journal keeps: start again from its oldest frame.
            Err(ApiError::Status(404, _)) if after.is_some() => {
                let mut v = view.locked();
                v.last_seq = None;
                v.incomplete = true;
                v.push(None, ItemKind::Notice("history incomplete: the daemon no longer has every frame".into()));
                continue;
            }
            // `after` beyond the newest frame: the daemon restarted and this id names another
            // agent now. Its conversation starts over.
            Err(ApiError::Status(400, _)) if after.is_some() => {
                let mut v = view.locked();
                *v = ConvView { status: v.status.clone(), ..ConvView::default() };
                v.push(None, ItemKind::Notice("the daemon restarted: a new agent under this id".into()));
                continue;
            }
            Err(ApiError::Status(404, _)) => {
                set_status(StreamStatus::Gone("the connection no longer exists".into()));
                return;
            }
            Err(ApiError::Unauthorized) => {
                set_status(StreamStatus::Gone(ApiError::Unauthorized.to_string()));
                return;
            }
            Err(e) => set_status(StreamStatus::Offline(e.to_string())),
        }
        tokio::select! {
            () = tokio::time::sleep(RECONNECT_DELAY) => {}
            _ = closed.recv() => return,
        }
    }
}

/// Reads frames until the socket ends: `None` when the view closed, else why it dropped.
async fn pump(
    ws: super::api::Ws,
    view: &Mutex<ConvView>,
    closed: &mut mpsc::Receiver<()>,
    repaint: &Repaint,
    watch: &Watch,
) -> Option<String> {
    let (mut sink, mut frames) = ws.split();
    loop {
        let message = tokio::select! {
            frame = frames.next() => frame,
            _ = closed.recv() => {
                let _ = sink.send(Message::Close(None)).await;
                return None;
            }
        };
        let text = match message {
            None => return Some("the stream closed".into()),
            Some(Err(e)) => return Some(e.to_string()),
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(_))) => return Some("the daemon closed the stream".into()),
            Some(Ok(_)) => continue,
        };
        let frame: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
        let mut v = view.locked();
        let running = v.running.len();
        match frame["kind"].as_str() {
            Some("hello") => {
                let first = frame["first_sequence"].as_u64().unwrap_or(1);
                if v.last_seq.is_none() && first > 1 {
                    v.incomplete = true;
                    v.push(None, ItemKind::Notice(format!("history before frame {first} is no longer kept")));
                }
                v.apply(&frame);
            }
            Some("gap") => {
                let first = frame["first_sequence"].as_u64().unwrap_or(1);
                v.incomplete = true;
                v.last_seq = Some(first.saturating_sub(1)).filter(|s| *s > 0);
                v.push(None, ItemKind::Notice("history incomplete: frames were missed; resuming".into()));
            }
            _ => {
                let seq = frame["seq"].as_u64();
                if let (Some(seq), Some(last)) = (seq, v.last_seq)
                    && seq <= last
                {
                    continue;
                }
                if seq.is_some() {
                    v.last_seq = seq;
                }
                v.apply(&frame);
            }
        }
        let turn_changed = v.running.len() != running;
        drop(v);
        if turn_changed {
            watch.wake();
        }
        repaint.request();
    }
}
