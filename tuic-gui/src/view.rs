//! The window: a side panel of sessions, the selected session's text, an input line.

use eframe::egui;

use crate::client::{Command, Handle, Recover};

pub(crate) struct TuicApp {
    handle: Handle,
    input: String,
    context_set: bool,
}

impl TuicApp {
    pub(crate) fn new(handle: Handle) -> Self {
        Self { handle, input: String::new(), context_set: false }
    }
}

impl eframe::App for TuicApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        if !self.context_set {
            self.handle.set_context(ui.ctx());
            self.context_set = true;
        }
        let snap = self.handle.snapshot.locked().clone();
        egui::Panel::top("status").show(ui, |ui| {
            ui.horizontal(|ui| {
                match &snap.health {
                    Some(h) => ui.label(format!(
                        "tuicd up {} s · {} session(s) · MCP {}",
                        h.uptime_secs, h.session_count, h.protocol_version
                    )),
                    None => ui.colored_label(egui::Color32::LIGHT_RED, "tuicd not reachable"),
                };
                ui.separator();
                ui.label(egui::RichText::new(&snap.socket).monospace().small());
            });
            if let Some(error) = &snap.error {
                ui.colored_label(egui::Color32::LIGHT_RED, error);
            }
        });
        egui::Panel::left("sessions").resizable(true).default_size(240.0).show(ui, |ui| {
            ui.heading("Terminals");
            if ui.button("New terminal").clicked() {
                self.handle.send(Command::Create);
            }
            ui.separator();
            if snap.sessions.is_empty() {
                ui.weak("no sessions");
            }
            for session in &snap.sessions {
                let id = session["session_id"].as_str().unwrap_or_default().to_owned();
                let name = session["display_name"]
                    .as_str()
                    .or_else(|| session["alias"].as_str())
                    .or_else(|| session["cwd"].as_str())
                    .unwrap_or(&id)
                    .to_owned();
                let selected = snap.selected.as_deref() == Some(id.as_str());
                if ui.selectable_label(selected, name).clicked() {
                    self.handle.send(Command::Select(id));
                }
            }
        });
        egui::CentralPanel::default().show(ui, |ui| {
            let Some(selected) = snap.selected.clone() else {
                ui.centered_and_justified(|ui| ui.weak("select a terminal"));
                return;
            };
            egui::Panel::bottom("input").show(ui, |ui| {
                let response = ui.add(
                    egui::TextEdit::singleline(&mut self.input)
                        .hint_text("type a line, Enter sends it")
                        .desired_width(f32::INFINITY)
                        .font(egui::TextStyle::Monospace),
                );
                if response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                    let data = format!("{}\r", std::mem::take(&mut self.input));
                    self.handle.send(Command::Write { session_id: selected.clone(), data });
                    response.request_focus();
                }
            });
            egui::ScrollArea::both().stick_to_bottom(true).show(ui, |ui| {
                ui.add(egui::Label::new(egui::RichText::new(&snap.screen_text).monospace()).extend());
            });
        });
    }
}
