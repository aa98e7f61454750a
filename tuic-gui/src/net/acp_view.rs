//! One ACP connection's conversation as the window shows it: the stream's frames folded into a
//! bounded list of items (prompts, the agent's joined text, thoughts, tool calls with diffs,
//! plans, questions, turn ends). Pure: `acp.rs` feeds it frames from the network.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use super::acp::{ITEM_CHARS, ITEMS_KEPT, LINE_CHARS, RUNNING_KEPT};

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

    pub(super) fn push(&mut self, session: Option<String>, kind: ItemKind) {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

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
