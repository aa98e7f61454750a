//! The Agents (ACP) view: the daemon's ACP connections (state, generation, sessions), starting an
//! agent and a session, and one session's conversation as it streams: prompts, the agent's text
//! and thoughts, tool calls with their diffs, plans, turn ends, and the agent's questions
//! answered in place. Agent text is untrusted: labels only (plain text), long lines already cut.

use std::collections::HashMap;

use eframe::egui::{self, Color32, RichText};
use serde_json::{Map, Value, json};

use crate::lock::Recover as _;
use crate::net::acp::{AcpCommand, ConvView, Conversation, Diff, ItemKind, StreamStatus};
use crate::net::{Command, Handle, Snapshot};

const WAITING: Color32 = Color32::from_rgb(240, 190, 60);
const REMOVED: Color32 = Color32::from_rgb(230, 110, 110);
const ADDED: Color32 = Color32::from_rgb(120, 210, 120);
/// Diff lines shown per side; the rest is counted.
const DIFF_LINES: usize = 8;
/// Items described under `--print-geometry` (the newest of the shown session).
const PRINTED_ITEMS: usize = 20;

#[derive(Default)]
pub(crate) struct AcpView {
    pub open: bool,
    /// The selected connection and session.
    connection: Option<String>,
    session: Option<String>,
    conversation: Option<Conversation>,
    input: String,
    /// Elicitation forms being filled, by request id: property → text (or "true"/"false").
    forms: HashMap<String, HashMap<String, String>>,
    form_error: Option<String>,
    /// Lines last printed under `--print-geometry`, and every line the previous frame drew.
    printed: Vec<String>,
    last_frame: Vec<String>,
}

/// A connection snapshot's sessions as (id, attached, turn running).
fn sessions_of(connection: &Value) -> Vec<(String, bool, bool)> {
    connection["sessions"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|s| {
                    Some((
                        s["session_id"].as_str()?.to_owned(),
                        s["attached"].as_bool().unwrap_or(false),
                        s["turn_running"].as_bool().unwrap_or(false),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn text(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or("-").to_owned()
}

/// One token for a `--print-geometry` line.
fn word(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join("_");
    joined.chars().take(200).collect()
}

fn at(rect: egui::Rect) -> String {
    format!("{:.0},{:.0}", rect.center().x, rect.center().y)
}

impl AcpView {
    /// A new daemon connection: the streams belong to the old one.
    pub(crate) fn reset(&mut self) {
        self.conversation = None;
        self.connection = None;
        self.session = None;
    }

    /// Fills `ui` (the central panel) with the view.
    pub(crate) fn show(&mut self, ui: &mut egui::Ui, snap: &Snapshot, handle: &Handle, print_geometry: bool) {
        self.choose(snap, handle);
        let mut lines = Vec::new();
        egui::Panel::left("acp-connections").resizable(true).default_size(280.0).min_size(220.0).show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("acp-list")
                .show(ui, |ui| self.connections(ui, snap, handle, &mut lines));
        });
        egui::CentralPanel::default().show(ui, |ui| self.conversation(ui, snap, handle, &mut lines));
        if print_geometry {
            // A panel lays itself out over its first frames: a line is printed once two frames in
            // a row agree on it, so a test never clicks where a button is no longer.
            let stable: Vec<String> = lines.iter().filter(|l| self.last_frame.contains(l)).cloned().collect();
            for line in stable.iter().filter(|l| !self.printed.contains(l)) {
                println!("{line}");
            }
            if stable.len() < lines.len() {
                ui.ctx().request_repaint();
            }
            self.printed = stable;
            self.last_frame = lines;
        }
    }

    /// Keeps the selection valid, takes what the last action created, and follows the selected
    /// connection's stream.
    fn choose(&mut self, snap: &Snapshot, handle: &Handle) {
        if let Some((connection, session)) = handle.snapshot.locked().acp.created.take() {
            self.connection = Some(connection);
            self.session = session;
        }
        if let Some(connections) = &snap.acp.connections {
            let known = |id: &str| connections.iter().any(|c| c["id"] == id);
            if self.connection.as_deref().is_some_and(|id| !known(id)) {
                self.connection = None;
                self.session = None;
            }
            if self.connection.is_none() {
                self.connection = connections.first().and_then(|c| c["id"].as_str()).map(str::to_owned);
            }
            if self.session.is_none()
                && let Some(connection) = connections.iter().find(|c| c["id"].as_str() == self.connection.as_deref())
            {
                self.session = sessions_of(connection).into_iter().find(|s| s.1).map(|s| s.0);
            }
        }
        match &self.connection {
            None => self.conversation = None,
            Some(id) if self.conversation.as_ref().is_none_or(|c| c.connection != *id) => {
                self.conversation = Some(handle.open_acp(id));
            }
            Some(_) => {}
        }
    }

    fn connections(&mut self, ui: &mut egui::Ui, snap: &Snapshot, handle: &Handle, lines: &mut Vec<String>) {
        ui.heading("Agents (ACP)");
        let start = ui.button("Start agent").on_hover_text("launch the agent set as ego_executable in the settings");
        if start.clicked() {
            handle.send(Command::Acp(AcpCommand::Launch));
        }
        lines.push(format!("acp start={}", at(start.rect)));
        if let Some(error) = &snap.acp.error {
            ui.colored_label(Color32::LIGHT_RED, error);
            lines.push(format!("acp error text={}", word(error)));
        }
        ui.separator();
        let Some(connections) = &snap.acp.connections else {
            ui.weak("loading…");
            return;
        };
        if connections.is_empty() {
            ui.weak("no agent running");
        }
        for connection in connections {
            let id = text(connection, "id");
            let selected = self.connection.as_deref() == Some(id.as_str());
            let state = text(connection, "state");
            let generation = connection["generation"].as_u64().unwrap_or(0);
            let pending = connection["interactions_pending"].as_u64().unwrap_or(0);
            let sessions = sessions_of(connection);
            let name = connection["agent_info"]["name"].as_str().unwrap_or("agent");
            let mut label = RichText::new(format!("{id} · {name}")).strong();
            if pending > 0 {
                label = label.color(WAITING);
            }
            let row = ui.selectable_label(selected, label);
            if row.clicked() && !selected {
                self.connection = Some(id.clone());
                self.session = None;
            }
            let mut status = format!("{state} · generation {generation} · {} session(s)", sessions.len());
            if let Some(reason) = connection["settled_reason"].as_str() {
                status.push_str(&format!(" · {reason}"));
            }
            if pending > 0 {
                status.push_str(&format!(" · {pending} waiting"));
            }
            ui.weak(status);
            let mut line = format!(
                "acp connection id={id} state={state} generation={generation} sessions={} pending={pending} row={}",
                sessions.len(),
                at(row.rect)
            );
            if selected {
                ui.horizontal(|ui| {
                    let new = ui.add_enabled(state == "ready", egui::Button::new("New session"));
                    if new.clicked() {
                        handle.send(Command::Acp(AcpCommand::NewSession { connection: id.clone() }));
                    }
                    let reconnect = ui.button("Reconnect").on_hover_text("restart the agent (a new generation)");
                    if reconnect.clicked() {
                        handle.send(Command::Acp(AcpCommand::Reconnect { connection: id.clone() }));
                    }
                    if ui.button("Disconnect").on_hover_text("stop the agent and forget it").clicked() {
                        handle.send(Command::Acp(AcpCommand::Disconnect { connection: id.clone() }));
                    }
                    line.push_str(&format!(" new_session={} reconnect={}", at(new.rect), at(reconnect.rect)));
                });
                for (session, attached, running) in &sessions {
                    let chosen = self.session.as_deref() == Some(session.as_str());
                    let mut name = session.clone();
                    if !attached {
                        name.push_str(" (detached)");
                    }
                    if *running {
                        name.push_str(" · running");
                    }
                    let (row, load) = ui
                        .indent(("acp-session", session), |ui| {
                            ui.horizontal(|ui| {
                                let row = ui.selectable_label(chosen, name);
                                let load = (!attached).then(|| {
                                    ui.small_button("Load").on_hover_text("session/load: attach it to this generation")
                                });
                                (row, load)
                            })
                            .inner
                        })
                        .inner;
                    if row.clicked() {
                        self.session = Some(session.clone());
                    }
                    let mut line =
                        format!("acp session connection={id} id={session} attached={attached} row={}", at(row.rect));
                    if let Some(load) = load {
                        if load.clicked() {
                            handle.send(Command::Acp(AcpCommand::Session {
                                connection: id.clone(),
                                session: session.clone(),
                                action: "load",
                            }));
                        }
                        line.push_str(&format!(" load={}", at(load.rect)));
                    }
                    lines.push(line);
                }
            }
            lines.push(line);
            ui.add_space(6.0);
        }
    }

    fn conversation(&mut self, ui: &mut egui::Ui, snap: &Snapshot, handle: &Handle, lines: &mut Vec<String>) {
        let (Some(connection), Some(conversation)) = (self.connection.clone(), self.conversation.clone()) else {
            ui.centered_and_justified(|ui| ui.weak("no ACP agent: press Start agent (the daemon runs ego_executable)"));
            return;
        };
        let view = conversation.view.locked();
        let pending: Vec<Value> = snap.acp.interactions.get(&connection).cloned().unwrap_or_default();
        let session_running = self.session.as_ref().is_some_and(|s| {
            view.turn_running(s)
                || snap
                    .acp
                    .connections
                    .iter()
                    .flatten()
                    .filter(|c| c["id"] == connection.as_str())
                    .any(|c| sessions_of(c).iter().any(|(id, _, running)| id == s && *running))
        });
        let status = match &view.status {
            Some(StreamStatus::Live) | None => "live".to_owned(),
            Some(StreamStatus::Connecting) => "connecting".to_owned(),
            Some(StreamStatus::Offline(why)) => format!("offline ({why}), reopening"),
            Some(StreamStatus::Gone(why)) => format!("closed: {why}"),
        };
        lines.push(format!(
            "acp stream connection={connection} status={} seq={}",
            word(&status),
            view.last_seq.map_or("-".into(), |s| s.to_string())
        ));
        ui.horizontal(|ui| {
            ui.label(
                RichText::new(format!("{connection} · {}", self.session.as_deref().unwrap_or("no session"))).strong(),
            );
            ui.weak(format!(
                "stream {status} · {} · generation {} · frame {}",
                if view.state.is_empty() { "-" } else { &view.state },
                view.generation,
                view.last_seq.unwrap_or(0)
            ));
            if view.incomplete || view.dropped > 0 {
                ui.colored_label(WAITING, "history incomplete")
                    .on_hover_text("older items were dropped, or the daemon no longer had them");
            }
        });
        ui.separator();
        // The input row at the bottom, the conversation above it.
        let Some(session) = self.session.clone() else {
            ui.weak("no session: press New session");
            return;
        };
        egui::Panel::bottom("acp-input").show(ui, |ui| {
            if let Some(error) = &self.form_error {
                ui.colored_label(Color32::LIGHT_RED, error);
            }
            ui.horizontal(|ui| {
                let edit = ui.add(
                    egui::TextEdit::singleline(&mut self.input)
                        .hint_text("message the agent")
                        .desired_width((ui.available_width() - 160.0).max(120.0)),
                );
                let entered = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                let send = ui.add_enabled(!self.input.trim().is_empty(), egui::Button::new("Send"));
                let mut line =
                    format!("acp input={} send={} chars={}", at(edit.rect), at(send.rect), self.input.chars().count());
                if (send.clicked() || entered) && !self.input.trim().is_empty() {
                    let text = std::mem::take(&mut self.input);
                    handle.send(Command::Acp(AcpCommand::Prompt {
                        connection: connection.clone(),
                        session: session.clone(),
                        text: text.trim().to_owned(),
                    }));
                    if entered {
                        edit.request_focus();
                    }
                }
                if session_running {
                    let cancel = ui.button("Cancel").on_hover_text("session/cancel: stop the running turn");
                    if cancel.clicked() {
                        handle.send(Command::Acp(AcpCommand::Cancel {
                            connection: connection.clone(),
                            session: session.clone(),
                        }));
                    }
                    line.push_str(&format!(" cancel={}", at(cancel.rect)));
                    ui.spinner();
                }
                lines.push(line);
            });
        });
        egui::ScrollArea::vertical()
            .id_salt("acp-conversation")
            .stick_to_bottom(true)
            .auto_shrink([false, false])
            .show(ui, |ui| self.items(ui, &view, &connection, &session, &pending, handle, lines));
    }

    #[allow(clippy::too_many_arguments)]
    fn items(
        &mut self,
        ui: &mut egui::Ui,
        view: &ConvView,
        connection: &str,
        session: &str,
        pending: &[Value],
        handle: &Handle,
        lines: &mut Vec<String>,
    ) {
        if view.dropped > 0 {
            ui.weak(format!("{} older item(s) no longer kept", view.dropped));
        }
        let shown: Vec<_> = view.items.iter().filter(|i| i.session.as_deref().is_none_or(|s| s == session)).collect();
        let first_printed = shown.len().saturating_sub(PRINTED_ITEMS);
        let mut answered_in_place = Vec::new();
        for (n, item) in shown.iter().enumerate() {
            let described = match &item.kind {
                ItemKind::User(text) => {
                    ui.add_space(6.0);
                    ui.label(RichText::new("you").strong().color(Color32::LIGHT_BLUE));
                    ui.label(text);
                    format!("kind=user text={}", word(text))
                }
                ItemKind::Agent(text) => {
                    ui.label(text);
                    format!("kind=agent text={}", word(text))
                }
                ItemKind::Thought(text) => {
                    ui.label(RichText::new(text).weak().italics());
                    format!("kind=thought text={}", word(text))
                }
                ItemKind::Tool { title, kind, status, diffs, .. } => {
                    ui.horizontal_wrapped(|ui| {
                        ui.label(RichText::new(format!("tool · {kind}")).monospace().weak());
                        ui.label(RichText::new(title).strong());
                        ui.label(RichText::new(status).color(status_colour(status)));
                    });
                    for diff in diffs {
                        show_diff(ui, diff);
                    }
                    format!("kind=tool title={} status={} diffs={}", word(title), word(status), diffs.len())
                }
                ItemKind::Plan(entries) => {
                    ui.label(RichText::new("plan").strong());
                    for (content, status) in entries {
                        ui.horizontal_wrapped(|ui| {
                            ui.label(RichText::new(format!("[{status}]")).monospace().color(status_colour(status)));
                            ui.label(content);
                        });
                    }
                    format!("kind=plan entries={}", entries.len())
                }
                ItemKind::Permission { request, title, answer } => {
                    let waiting = pending.iter().find(|p| p["request_id"] == request.as_str());
                    ui.label(RichText::new(format!("permission asked: {title}")).color(WAITING));
                    match (waiting, answer) {
                        (Some(question), _) => {
                            answered_in_place.push(request.clone());
                            self.permission_buttons(ui, connection, question, handle, lines);
                        }
                        (None, Some(answer)) => {
                            ui.weak(format!("answered: {answer}"));
                        }
                        (None, None) => {
                            ui.weak("no longer waiting");
                        }
                    }
                    format!("kind=permission request={request} answer={}", answer.as_deref().unwrap_or("-"))
                }
                ItemKind::Elicitation { request, message, answer } => {
                    let waiting = pending.iter().find(|p| p["request_id"] == request.as_str());
                    ui.label(RichText::new(format!("question: {message}")).color(WAITING));
                    match (waiting, answer) {
                        (Some(question), _) => {
                            answered_in_place.push(request.clone());
                            self.elicitation_form(ui, connection, question, handle, lines);
                        }
                        (None, Some(answer)) => {
                            ui.weak(format!("answered: {answer}"));
                        }
                        (None, None) => {
                            ui.weak("no longer waiting");
                        }
                    }
                    format!("kind=elicitation request={request} answer={}", answer.as_deref().unwrap_or("-"))
                }
                ItemKind::TurnEnd(reason) => {
                    ui.weak(format!("— turn ended: {reason}"));
                    ui.separator();
                    format!("kind=turn_end reason={}", word(reason))
                }
                ItemKind::Notice(notice) => {
                    ui.colored_label(WAITING, notice);
                    format!("kind=notice text={}", word(notice))
                }
            };
            if n >= first_printed {
                lines.push(format!("acp item session={session} n={n} {described}"));
            }
        }
        // Questions of this session whose request is not among the kept items (trimmed, or from
        // before the stream's history): answered here.
        for question in pending {
            let request = question["request_id"].as_str().unwrap_or_default();
            if question["session_id"] != session || answered_in_place.iter().any(|r| r == request) {
                continue;
            }
            ui.separator();
            if question["kind"] == "permission" {
                let title = question["tool_call"]["title"].as_str().unwrap_or("a tool call");
                ui.label(RichText::new(format!("permission asked: {title}")).color(WAITING));
                self.permission_buttons(ui, connection, question, handle, lines);
            } else {
                let message = question["message"].as_str().unwrap_or("a question");
                ui.label(RichText::new(format!("question: {message}")).color(WAITING));
                self.elicitation_form(ui, connection, question, handle, lines);
            }
        }
    }

    fn permission_buttons(
        &mut self,
        ui: &mut egui::Ui,
        connection: &str,
        question: &Value,
        handle: &Handle,
        lines: &mut Vec<String>,
    ) {
        let request = question["request_id"].as_str().unwrap_or_default().to_owned();
        ui.horizontal_wrapped(|ui| {
            for option in question["options"].as_array().into_iter().flatten() {
                let Some(id) = option["optionId"].as_str() else { continue };
                let name = option["name"].as_str().unwrap_or(id);
                let button = ui.button(name).on_hover_text(option["kind"].as_str().unwrap_or(""));
                if button.clicked() {
                    handle.send(Command::Acp(AcpCommand::Permission {
                        connection: connection.to_owned(),
                        request: request.clone(),
                        option: id.to_owned(),
                    }));
                }
                lines.push(format!("acp permission request={request} option={} at={}", word(id), at(button.rect)));
            }
        });
    }

    fn elicitation_form(
        &mut self,
        ui: &mut egui::Ui,
        connection: &str,
        question: &Value,
        handle: &Handle,
        lines: &mut Vec<String>,
    ) {
        let request = question["request_id"].as_str().unwrap_or_default().to_owned();
        let empty = Map::new();
        let properties = question["requested_schema"]["properties"].as_object().unwrap_or(&empty);
        if let Some(url) = question["url"].as_str() {
            ui.label(RichText::new(url).monospace());
        }
        let form = self.forms.entry(request.clone()).or_default();
        egui::Grid::new(("acp-elicitation", &request)).num_columns(2).show(ui, |ui| {
            for (name, schema) in properties {
                ui.label(schema["title"].as_str().unwrap_or(name));
                let value = form.entry(name.clone()).or_default();
                let field = match schema["type"].as_str() {
                    Some("boolean") => {
                        let mut on = value == "true";
                        let response = ui.checkbox(&mut on, "");
                        *value = on.to_string();
                        Some(response)
                    }
                    Some("string" | "number" | "integer") => Some(ui.text_edit_singleline(value)),
                    _ => {
                        ui.weak("(not supported here; left out)");
                        None
                    }
                };
                if let Some(field) = field {
                    lines.push(format!("acp elicitation request={request} field={} at={}", word(name), at(field.rect)));
                }
                ui.end_row();
            }
        });
        ui.horizontal(|ui| {
            let accept = ui.button("Accept");
            let decline = ui.button("Decline");
            let cancel = ui.button("Cancel");
            lines.push(format!(
                "acp elicitation request={request} accept={} decline={}",
                at(accept.rect),
                at(decline.rect)
            ));
            let body = if accept.clicked() {
                match content_of(properties, form) {
                    Ok(content) => Some(json!({"action": "accept", "content": content})),
                    Err(why) => {
                        self.form_error = Some(why);
                        None
                    }
                }
            } else if decline.clicked() {
                Some(json!({"action": "decline"}))
            } else if cancel.clicked() {
                Some(json!({"action": "cancel"}))
            } else {
                None
            };
            if let Some(body) = body {
                self.form_error = None;
                handle.send(Command::Acp(AcpCommand::Elicitation {
                    connection: connection.to_owned(),
                    request: request.clone(),
                    body,
                }));
            }
        });
    }
}

/// The form's values typed as the schema says (empty optional fields left out).
fn content_of(properties: &Map<String, Value>, form: &HashMap<String, String>) -> Result<Value, String> {
    let mut content = Map::new();
    for (name, schema) in properties {
        let raw = form.get(name).map(|v| v.trim()).unwrap_or_default();
        let value = match schema["type"].as_str() {
            Some("boolean") => json!(raw == "true"),
            Some(_) if raw.is_empty() => continue,
            Some("string") => json!(raw),
            Some("integer") => json!(raw.parse::<i64>().map_err(|_| format!("{name}: not a whole number"))?),
            Some("number") => json!(raw.parse::<f64>().map_err(|_| format!("{name}: not a number"))?),
            _ => continue,
        };
        content.insert(name.clone(), value);
    }
    Ok(Value::Object(content))
}

fn status_colour(status: &str) -> Color32 {
    match status {
        "completed" => ADDED,
        "failed" => REMOVED,
        "in_progress" => WAITING,
        _ => Color32::GRAY,
    }
}

fn show_diff(ui: &mut egui::Ui, diff: &Diff) {
    ui.indent(("diff", &diff.path), |ui| {
        ui.label(
            RichText::new(format!("{}  (-{} +{})", diff.path, diff.removed.len(), diff.added.len()))
                .monospace()
                .strong(),
        );
        for (sign, side, colour) in [("-", &diff.removed, REMOVED), ("+", &diff.added, ADDED)] {
            for line in side.iter().take(DIFF_LINES) {
                ui.label(RichText::new(format!("{sign} {line}")).monospace().color(colour));
            }
            if side.len() > DIFF_LINES {
                ui.weak(format!("  … {} more line(s)", side.len() - DIFF_LINES));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_is_typed_as_its_schema_says() {
        let schema = json!({"name": {"type": "string"}, "age": {"type": "integer"}, "ok": {"type": "boolean"}, "x": {"type": "number"}});
        let properties = schema.as_object().unwrap();
        let form: HashMap<String, String> =
            [("name", "Ada"), ("age", "36"), ("ok", "true")].iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        assert_eq!(content_of(properties, &form).unwrap(), json!({"name": "Ada", "age": 36, "ok": true}));
        let bad: HashMap<String, String> = [("age".to_owned(), "old".to_owned())].into_iter().collect();
        assert!(content_of(properties, &bad).unwrap_err().contains("age"));
    }
}
