//! The supervisor's overview: every session with its agent's state, a badge for a pending
//! question, the question banner shown over every view, and the quick replies.

use eframe::egui::{self, Color32, RichText};
use proto::session::SessionInfo;
use serde_json::Value;

use crate::net::{Command, Handle};

const QUESTION: Color32 = Color32::from_rgb(240, 190, 60);

/// A session's name as people see it.
pub(crate) fn name(session: &SessionInfo) -> String {
    let label = session.display_name.clone().unwrap_or_else(|| session.alias.clone());
    match agent_type(session) {
        Some(agent) => format!("{label} · {agent}"),
        None => label,
    }
}

fn agent_type(session: &SessionInfo) -> Option<String> {
    session.agent_type.clone().or_else(|| state_str(session, "agent_type"))
}

fn state_str(session: &SessionInfo, key: &str) -> Option<String> {
    session.state.as_ref().and_then(|s| s[key].as_str()).map(String::from)
}

/// The session's open question, when its agent waits for the user.
pub(crate) fn question(session: &SessionInfo) -> Option<String> {
    let state = session.state.as_ref()?;
    if !state["awaiting_input"].as_bool().unwrap_or(false) && state["choice_prompt"].is_null() {
        return None;
    }
    let text = state["question_text"]
        .as_str()
        .or_else(|| state["choice_prompt"]["title"].as_str())
        .unwrap_or("waiting for input");
    Some(text.to_owned())
}

/// The session list (a row flashes while `flashing` says so: its visual bell); answers the
/// session the user picked.
pub(crate) fn sessions(
    ui: &mut egui::Ui,
    sessions: &[SessionInfo],
    active: Option<&str>,
    flashing: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let mut picked = None;
    if sessions.is_empty() {
        ui.weak("no sessions");
    }
    for session in sessions {
        let selected = active == Some(session.session_id.as_str());
        ui.horizontal(|ui| {
            if question(session).is_some() {
                ui.label(RichText::new("?").strong().color(Color32::BLACK).background_color(QUESTION));
            }
            let mut text = RichText::new(name(session)).strong();
            if flashing(&session.session_id) {
                text = text.background_color(super::attention::FLASH_COLOUR);
            }
            if ui.selectable_label(selected, text).clicked() {
                picked = Some(session.session_id.clone());
            }
        });
        let mut facts = Vec::new();
        if let Some(state) = state_str(session, "agent_state") {
            facts.push(state.replace('_', " "));
        } else if let Some(shell) = &session.shell_state {
            facts.push(format!("{shell:?}").to_lowercase());
        }
        if let Some(work) = session.state.as_ref().map(|s| &s["background_work"]).filter(|w| !w.is_null()) {
            facts.push(background(work));
        }
        if !facts.is_empty() {
            ui.weak(facts.join(" · "));
        }
        if let Some(intent) = state_str(session, "intent_title").or_else(|| state_str(session, "agent_intent")) {
            ui.label(RichText::new(intent).italics().small());
        }
        ui.add_space(4.0);
    }
    picked
}

fn background(work: &Value) -> String {
    match work {
        Value::String(s) => format!("background: {s}"),
        Value::Bool(true) => "background work".into(),
        Value::Array(items) => format!("background: {} job(s)", items.len()),
        other => format!("background: {other}"),
    }
}

/// The banner over every view: each pending question with its quick replies.
pub(crate) fn banner(ui: &mut egui::Ui, handle: &Handle, sessions: &[SessionInfo]) -> Option<String> {
    let mut open = None;
    for session in sessions {
        let Some(text) = question(session) else { continue };
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(format!("{} asks:", name(session))).strong().color(QUESTION));
            if ui.link(text).clicked() {
                open = Some(session.session_id.clone());
            }
            quick_replies(ui, handle, session);
        });
    }
    open
}

/// Yes / No / Enter / Ctrl-C, then the numbered choices the agent engine detected.
pub(crate) fn quick_replies(ui: &mut egui::Ui, handle: &Handle, session: &SessionInfo) {
    let write = |data: &str| Command::Write { session_id: session.session_id.clone(), data: data.to_owned() };
    for (label, data) in [("Yes", "y\r"), ("No", "n\r"), ("Enter", "\r"), ("Ctrl-C", "\u{3}")] {
        if ui.small_button(label).clicked() {
            handle.send(write(data));
        }
    }
    let options = session.state.as_ref().and_then(|s| s["choice_prompt"]["options"].as_array().cloned());
    for option in options.unwrap_or_default() {
        let key = option["key"].as_str().unwrap_or_default();
        let label = format!("{key}. {}", option["label"].as_str().unwrap_or_default());
        let mut text = RichText::new(label);
        if option["destructive"].as_bool().unwrap_or(false) {
            text = text.color(Color32::LIGHT_RED);
        }
        // `send` is what the program needs (the digit and Enter for a line read); agents' own
        // choices carry only `key`.
        let send = option["send"].as_str().unwrap_or(key);
        if !key.is_empty() && ui.small_button(text).clicked() {
            handle.send(write(send));
        }
    }
}
