//! ACP agents driven by the daemon (`/acp/connections/*`): the connections list and the pending
//! questions, polled while the Agents (ACP) view is open and at once when the bus says
//! `acp-notice`; the actions the view asks for; and one connection's conversation, followed on
//! `GET /acp/connections/:id/stream?after=N` (WebSocket) and kept as a bounded list of items.
//!
//! Everything the agent wrote is untrusted text: it is kept as plain strings (control characters
//! replaced, lengths capped) and the UI shows it with labels only.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};
use tokio_tungstenite::tungstenite::Message;

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
const ITEM_CHARS: usize = 64 * 1024;
/// A line beyond this many characters is cut (the window lays out every line it shows).
pub(crate) const LINE_CHARS: usize = 1000;
/// Turns tracked as running at once; an agent that never answers its prompts cannot grow it.
const RUNNING_KEPT: usize = 64;

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

// ---- the conversation ----

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StreamStatus {
    Connecting,
    Live,
    /// Dropped (the daemon restarted, or a gap closed it): it reopens by itself.
    Offline(String),
    /// The connection no longer exists.
    Gone(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Diff {
    pub path: String,
    /// The changed region only: lines removed and added (common head and tail trimmed).
    pub removed: Vec<String>,
    pub added: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ItemKind {
    User(String),
    Agent(String),
    Thought(String),
    Tool {
        id: String,
        title: String,
        kind: String,
        status: String,
        diffs: Vec<Diff>,
    },
    /// Entries as (content, status).
    Plan(Vec<(String, String)>),
    /// The agent's question; `answer` once tuicd sent one (the chosen option or `cancelled`).
    Permission {
        request: String,
        title: String,
        answer: Option<String>,
    },
    Elicitation {
        request: String,
        message: String,
        answer: Option<String>,
    },
    TurnEnd(String),
    /// Something about the stream or the connection, not said by the agent.
    Notice(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    /// The ACP session it belongs to; `None`: the whole connection.
    pub session: Option<String>,
    pub kind: ItemKind,
}

/// What the UI reads of one connection's stream.
#[derive(Debug, Default)]
pub(crate) struct ConvView {
    pub items: VecDeque<Item>,
    pub status: Option<StreamStatus>,
    pub state: String,
    pub generation: u64,
    /// The newest journaled frame seen: where a reopened stream resumes.
    pub last_seq: Option<u64>,
    /// Items dropped to keep the bound, and history the daemon no longer had.
    pub dropped: u64,
    pub incomplete: bool,
    /// Prompt request ids (as strings) whose response has not arrived, with their session.
    pub running: HashMap<String, String>,
}

impl ConvView {
    pub(crate) fn turn_running(&self, session: &str) -> bool {
        self.running.values().any(|s| s == session)
    }

    fn push(&mut self, session: Option<String>, kind: ItemKind) {
        self.items.push_back(Item { session, kind });
        while self.items.len() > ITEMS_KEPT {
            self.items.pop_front();
            self.dropped += 1;
        }
    }

    /// The newest item of `session`, if it is among the last few (chunks join it).
    fn last_of(&mut self, session: &str) -> Option<&mut Item> {
        self.items.iter_mut().rev().take(16).find(|i| i.session.as_deref() == Some(session))
    }

    /// Applies one frame of the stream.
    pub(crate) fn apply(&mut self, frame: &Value) {
        if let Some(generation) = frame["generation"].as_u64()
            && generation != self.generation
        {
            if self.generation != 0 {
                self.push(None, ItemKind::Notice(format!("agent restarted: generation {generation}")));
                self.running.clear();
            }
            self.generation = generation;
        }
        match frame["kind"].as_str().unwrap_or_default() {
            "hello" | "state" => {
                if let Some(state) = frame["state"].as_str() {
                    self.state = state.to_owned();
                    if state == "settled" {
                        self.running.clear();
                        let reason = frame["reason"].as_str().unwrap_or("");
                        if frame["kind"] == "state" {
                            self.push(None, ItemKind::Notice(format!("agent stopped: {reason}")));
                        }
                    }
                }
            }
            "agent" => self.agent(&frame["message"]),
            "client" => self.client(&frame["message"]),
            "invalid" => {
                let reason = frame["reason"].as_str().unwrap_or("invalid");
                self.push(None, ItemKind::Notice(format!("the agent wrote a line tuicd could not read ({reason})")));
            }
            _ => {}
        }
    }

    fn agent(&mut self, message: &Value) {
        let params = &message["params"];
        let session = params["sessionId"].as_str().map(str::to_owned);
        match message["method"].as_str() {
            Some("session/update") => {
                if let Some(session) = session {
                    self.update(session, &params["update"]);
                }
            }
            Some("session/request_permission") => {
                let title = params["toolCall"]["title"].as_str().unwrap_or("a tool call");
                self.push(
                    session,
                    ItemKind::Permission { request: key_of(&message["id"]), title: clean(title), answer: None },
                );
            }
            Some("elicitation/create") => {
                let text = params["message"].as_str().unwrap_or("a question");
                self.push(
                    session,
                    ItemKind::Elicitation { request: key_of(&message["id"]), message: clean(text), answer: None },
                );
            }
            Some(_) => {}
            // A response to one of tuicd's requests: a prompt's ends its turn.
            None => {
                let Some(session) = self.running.remove(&key_of(&message["id"])) else { return };
                let end = match message["result"]["stopReason"].as_str() {
                    Some(reason) => reason.to_owned(),
                    None => format!("error: {}", message["error"]["message"].as_str().unwrap_or("the turn failed")),
                };
                self.push(Some(session), ItemKind::TurnEnd(clean(&end)));
            }
        }
    }

    fn client(&mut self, message: &Value) {
        let id = key_of(&message["id"]);
        match message["method"].as_str() {
            Some("session/prompt") => {
                let session = message["params"]["sessionId"].as_str().unwrap_or_default().to_owned();
                if self.running.len() >= RUNNING_KEPT {
                    self.running.clear();
                }
                self.running.insert(id, session.clone());
                self.push(Some(session), ItemKind::User(blocks_text(&message["params"]["prompt"])));
            }
            Some(_) => {}
            // tuicd's answer to one of the agent's questions.
            None => {
                let result = &message["result"];
                let answer = if let Some(outcome) = result["outcome"].as_object() {
                    outcome.get("optionId").and_then(Value::as_str).map_or_else(
                        || outcome.get("outcome").and_then(Value::as_str).unwrap_or("answered").to_owned(),
                        str::to_owned,
                    )
                } else if let Some(action) = result["action"].as_str() {
                    action.to_owned()
                } else if message["error"].is_object() {
                    "refused".to_owned()
                } else {
                    return;
                };
                for item in self.items.iter_mut().rev() {
                    match &mut item.kind {
                        ItemKind::Permission { request, answer: slot, .. }
                        | ItemKind::Elicitation { request, answer: slot, .. }
                            if *request == id =>
                        {
                            *slot = Some(clean(&answer));
                            return;
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    fn update(&mut self, session: String, update: &Value) {
        let text = || clean(update["content"]["text"].as_str().unwrap_or_default());
        match update["sessionUpdate"].as_str().unwrap_or_default() {
            kind @ ("agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk") => {
                let chunk = text();
                if let Some(last) = self.last_of(&session) {
                    match (&mut last.kind, kind) {
                        (ItemKind::Agent(t), "agent_message_chunk")
                        | (ItemKind::Thought(t), "agent_thought_chunk")
                        | (ItemKind::User(t), "user_message_chunk") => {
                            append_capped(t, &chunk);
                            return;
                        }
                        _ => {}
                    }
                }
                let kind = match kind {
                    "agent_message_chunk" => ItemKind::Agent(chunk),
                    "agent_thought_chunk" => ItemKind::Thought(chunk),
                    _ => ItemKind::User(chunk),
                };
                self.push(Some(session), kind);
            }
            "tool_call" | "tool_call_update" => self.tool(session, update),
            "plan" => {
                let entries = update["entries"]
                    .as_array()
                    .map(|entries| {
                        entries
                            .iter()
                            .map(|e| {
                                (
                                    clean(e["content"].as_str().unwrap_or_default()),
                                    word(e["status"].as_str().unwrap_or("?")),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                // Each plan update is the whole plan: it replaces the session's latest one.
                if let Some(last) = self.last_of(&session)
                    && let ItemKind::Plan(plan) = &mut last.kind
                {
                    *plan = entries;
                    return;
                }
                self.push(Some(session), ItemKind::Plan(entries));
            }
            _ => {}
        }
    }

    fn tool(&mut self, session: String, update: &Value) {
        let id = key_of(&update["toolCallId"]);
        let diffs: Option<Vec<Diff>> = update["content"].as_array().map(|c| c.iter().filter_map(diff_of).collect());
        let existing = self.items.iter_mut().rev().find_map(|item| match &mut item.kind {
            ItemKind::Tool { id: tool_id, title, kind, status, diffs } if *tool_id == id => {
                Some((title, kind, status, diffs))
            }
            _ => None,
        });
        let field = |key: &str| update[key].as_str().map(clean);
        match existing {
            Some((title, kind, status, old_diffs)) => {
                if let Some(t) = field("title") {
                    *title = t;
                }
                if let Some(k) = field("kind") {
                    *kind = k;
                }
                if let Some(s) = field("status") {
                    *status = s;
                }
                if let Some(diffs) = diffs {
                    *old_diffs = diffs;
                }
            }
            None => {
                let tool = ItemKind::Tool {
                    id,
                    title: field("title").unwrap_or_else(|| "tool call".into()),
                    kind: field("kind").unwrap_or_else(|| "other".into()),
                    status: field("status").unwrap_or_else(|| "pending".into()),
                    diffs: diffs.unwrap_or_default(),
                };
                self.push(Some(session), tool);
            }
        }
    }
}

/// A tool call content entry of type `diff`, reduced to its changed lines.
fn diff_of(content: &Value) -> Option<Diff> {
    if content["type"] != "diff" {
        return None;
    }
    let old = content["oldText"].as_str().unwrap_or_default();
    let new = content["newText"].as_str().unwrap_or_default();
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail = old[head..].iter().rev().zip(new[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    let lines = |side: &[&str]| side.iter().map(|l| clean(l)).collect();
    Some(Diff {
        path: clean(content["path"].as_str().unwrap_or("?")),
        removed: lines(&old[head..old.len() - tail]),
        added: lines(&new[head..new.len() - tail]),
    })
}

/// The text of a prompt's content blocks (others named by their type).
fn blocks_text(blocks: &Value) -> String {
    let parts: Vec<String> = blocks
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .map(|b| match b["text"].as_str() {
                    Some(text) => clean(text),
                    None => format!("[{}]", word(b["type"].as_str().unwrap_or("content"))),
                })
                .collect()
        })
        .unwrap_or_default();
    parts.join("\n")
}

/// A JSON-RPC id as the daemon names it: a string as it is, anything else as JSON.
pub(crate) fn key_of(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Untrusted text, capped and with control characters (but newline and tab) made visible.
fn clean(text: &str) -> String {
    let mut out = String::new();
    append_capped(&mut out, text);
    out
}

fn word(text: &str) -> String {
    clean(text).chars().take(64).collect()
}

/// Appends untrusted text: the item and each of its lines capped, control characters replaced.
fn append_capped(to: &mut String, text: &str) {
    let mut line = to.rsplit('\n').next().map_or(0, |l| l.chars().count());
    for c in text.chars() {
        if to.len() >= ITEM_CHARS {
            if !to.ends_with('…') {
                to.push('…');
            }
            return;
        }
        if c == '\n' {
            line = 0;
            to.push(c);
            continue;
        }
        line += 1;
        if line > LINE_CHARS {
            if line == LINE_CHARS + 1 {
                to.push('…');
            }
            continue;
        }
        to.push(if c.is_control() && c != '\t' { '\u{fffd}' } else { c });
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: u64, kind: &str, message: Value) -> Value {
        json!({"seq": seq, "generation": 1, "kind": kind, "message": message})
    }

    fn chunk(kind: &str, text: &str) -> Value {
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s-1",
            "update": {"sessionUpdate": kind, "content": {"type": "text", "text": text}}}})
    }

    #[test]
    fn a_turn_becomes_prompt_joined_text_and_its_end() {
        let mut view = ConvView::default();
        view.apply(&frame(
            1,
            "client",
            json!({"id": 7, "method": "session/prompt", "params": {"sessionId": "s-1", "prompt": [{"type": "text", "text": "hello"}]}}),
        ));
        assert!(view.turn_running("s-1"));
        view.apply(&frame(2, "agent", chunk("agent_thought_chunk", "hmm")));
        view.apply(&frame(3, "agent", chunk("agent_message_chunk", "Rece")));
        view.apply(&frame(4, "agent", chunk("agent_message_chunk", "ived\u{1b}[31m")));
        view.apply(&frame(5, "agent", json!({"id": 7, "result": {"stopReason": "end_turn"}})));
        let kinds: Vec<_> = view.items.iter().map(|i| i.kind.clone()).collect();
        assert_eq!(
            kinds,
            vec![
                ItemKind::User("hello".into()),
                ItemKind::Thought("hmm".into()),
                ItemKind::Agent("Received\u{fffd}[31m".into()),
                ItemKind::TurnEnd("end_turn".into()),
            ]
        );
        assert!(!view.turn_running("s-1"));
    }

    #[test]
    fn tool_calls_update_in_place_and_diffs_keep_only_the_change() {
        let mut view = ConvView::default();
        let update = |u: Value| json!({"method": "session/update", "params": {"sessionId": "s-1", "update": u}});
        view.apply(&frame(
            1,
            "agent",
            update(json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Edit a.rs", "kind": "edit", "status": "pending"})),
        ));
        view.apply(&frame(
            2,
            "agent",
            update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
                "content": [{"type": "diff", "path": "/a.rs", "oldText": "a\nb\nc\n", "newText": "a\nB\nc\n"}]})),
        ));
        assert_eq!(view.items.len(), 1);
        let ItemKind::Tool { status, diffs, .. } = &view.items[0].kind else { panic!("not a tool call") };
        assert_eq!(status, "completed");
        assert_eq!(diffs, &vec![Diff { path: "/a.rs".into(), removed: vec!["b".into()], added: vec!["B".into()] }]);
    }

    #[test]
    fn a_permission_shows_the_answer_tuicd_sent() {
        let mut view = ConvView::default();
        view.apply(&frame(
            1,
            "agent",
            json!({"id": "q-1", "method": "session/request_permission", "params": {"sessionId": "s-1", "toolCall": {"title": "Run echo"}}}),
        ));
        view.apply(&frame(
            2,
            "client",
            json!({"id": "q-1", "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}}),
        ));
        assert_eq!(
            view.items[0].kind,
            ItemKind::Permission { request: "q-1".into(), title: "Run echo".into(), answer: Some("allow".into()) }
        );
    }

    #[test]
    fn the_item_list_and_each_text_stay_bounded() {
        let mut view = ConvView::default();
        for i in 0..(ITEMS_KEPT as u64 + 10) {
            view.apply(&frame(
                i,
                "client",
                json!({"id": i, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}),
            ));
        }
        assert_eq!(view.items.len(), ITEMS_KEPT);
        assert_eq!(view.dropped, 10);
        let mut text = String::new();
        append_capped(&mut text, &"x\n".repeat(ITEM_CHARS));
        assert!(text.len() <= ITEM_CHARS + '…'.len_utf8());
        let mut line = String::new();
        append_capped(&mut line, &"y".repeat(LINE_CHARS));
        append_capped(&mut line, &"y".repeat(10));
        append_capped(&mut line, "\nz");
        assert_eq!(line, format!("{}…\nz", "y".repeat(LINE_CHARS)));
    }
}
