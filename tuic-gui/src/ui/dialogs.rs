//! The connection, spawn-an-agent and settings dialogs. Each edits a form and queues one
//! [`Command`]; nothing here waits on the network.

use std::path::PathBuf;

use eframe::egui;
use serde_json::{Value, json};

use crate::net::{Command, Handle};
use crate::target::{Remembered, Remote, Target};

#[derive(Default)]
pub(crate) struct ConnectForm {
    remote: bool,
    socket: String,
    url: String,
    user: String,
    password: String,
    ca_cert: String,
}

impl ConnectForm {
    pub(crate) fn from(remembered: &Remembered, target: &Target) -> Self {
        let mut form = Self {
            remote: matches!(target, Target::Remote(_)),
            socket: remembered.socket.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
            url: remembered.url.clone().unwrap_or_else(|| "http://127.0.0.1:9877".into()),
            user: remembered.user.clone().unwrap_or_default(),
            ..Self::default()
        };
        form.ca_cert = remembered.ca_cert.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        if let Target::Socket(path) = target {
            form.socket = path.display().to_string();
        }
        form
    }

    /// The dialog; answers the target to connect to when the user presses Connect.
    pub(crate) fn show(&mut self, ctx: &egui::Context, open: &mut bool) -> Option<Target> {
        let mut chosen = None;
        egui::Window::new("Connect to tuicd").open(open).collapsible(false).show(ctx, |ui| {
            ui.horizontal(|ui| {
                ui.radio_value(&mut self.remote, false, "This machine (socket)");
                ui.radio_value(&mut self.remote, true, "Remote (TCP)");
            });
            egui::Grid::new("connect").num_columns(2).show(ui, |ui| {
                if self.remote {
                    ui.label("Address");
                    ui.text_edit_singleline(&mut self.url).on_hover_text("http://host:port or https://host:port");
                    ui.end_row();
                    ui.label("User");
                    ui.text_edit_singleline(&mut self.user);
                    ui.end_row();
                    ui.label("Password or token");
                    ui.add(egui::TextEdit::singleline(&mut self.password).password(true)).on_hover_text(
                        "the remote password, or a token from `tuicd token create` (tuic_...); never written to disk",
                    );
                    ui.end_row();
                    ui.label("CA certificate");
                    ui.text_edit_singleline(&mut self.ca_cert).on_hover_text("PEM file for https; empty: system roots");
                    ui.end_row();
                } else {
                    ui.label("Socket");
                    ui.text_edit_singleline(&mut self.socket);
                    ui.end_row();
                }
            });
            let problem = self.problem();
            if let Some(problem) = &problem {
                ui.colored_label(egui::Color32::LIGHT_RED, problem);
            }
            if ui.add_enabled(problem.is_none(), egui::Button::new("Connect")).clicked() {
                chosen = Some(self.target());
            }
        });
        if chosen.is_some() {
            *open = false;
        }
        chosen
    }

    fn problem(&self) -> Option<String> {
        if !self.remote {
            return self.socket.trim().is_empty().then(|| "the socket path is empty".into());
        }
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            return Some("the address must start with http:// or https://".into());
        }
        if self.user.trim().is_empty() {
            return Some("the user is empty".into());
        }
        None
    }

    fn target(&self) -> Target {
        if !self.remote {
            return Target::Socket(PathBuf::from(self.socket.trim()));
        }
        let ca_cert = self.ca_cert.trim();
        Target::Remote(Remote {
            url: self.url.trim().to_owned(),
            user: self.user.trim().to_owned(),
            password: self.password.clone(),
            ca_cert: (!ca_cert.is_empty()).then(|| PathBuf::from(ca_cert)),
        })
    }
}

#[derive(Default)]
pub(crate) struct SpawnForm {
    agent: usize,
    prompt: String,
    cwd: String,
}

impl SpawnForm {
    /// Answers true when the dialog is done (spawned).
    pub(crate) fn show(&mut self, ctx: &egui::Context, open: &mut bool, handle: &Handle, agents: &[Value]) {
        let mut spawned = false;
        egui::Window::new("Spawn an agent").open(open).collapsible(false).show(ctx, |ui| {
            if agents.is_empty() {
                ui.label("No agent CLI found on the daemon's PATH (GET /agents/detect).");
                return;
            }
            let label = |a: &Value| a["display_name"].as_str().or_else(|| a["name"].as_str()).unwrap_or("?").to_owned();
            self.agent = self.agent.min(agents.len() - 1);
            egui::ComboBox::from_label("Agent").selected_text(label(&agents[self.agent])).show_ui(ui, |ui| {
                for (i, agent) in agents.iter().enumerate() {
                    ui.selectable_value(&mut self.agent, i, label(agent));
                }
            });
            ui.label("Prompt");
            ui.add(egui::TextEdit::multiline(&mut self.prompt).desired_rows(3));
            ui.horizontal(|ui| {
                ui.label("Directory");
                ui.text_edit_singleline(&mut self.cwd).on_hover_text("absolute; empty: the daemon's $HOME");
            });
            if ui.button("Spawn").clicked() {
                let agent = &agents[self.agent];
                let mut body = json!({
                    "shell": agent["path"],
                    "agent_type": agent["agent_type"],
                    "display_name": label(agent),
                });
                if !self.prompt.trim().is_empty() {
                    body["args"] = json!([self.prompt.trim()]);
                }
                if !self.cwd.trim().is_empty() {
                    body["cwd"] = json!(self.cwd.trim());
                }
                handle.send(Command::Create(body));
                spawned = true;
            }
        });
        if spawned {
            *open = false;
        }
    }
}

/// The main settings, edited as a copy of `GET /config` and saved with one `PUT /config`.
#[derive(Default)]
pub(crate) struct SettingsForm {
    loaded: bool,
    remote_access: bool,
    port: u16,
    collapse_tools: bool,
    disabled_tools: String,
    max_sessions: usize,
    password: String,
}

impl SettingsForm {
    pub(crate) fn show(&mut self, ctx: &egui::Context, open: &mut bool, handle: &Handle, config: Option<&Value>) {
        egui::Window::new("Settings").open(open).collapsible(false).show(ctx, |ui| {
            let Some(config) = config else {
                ui.label("loading…");
                return;
            };
            if !self.loaded {
                self.load(config);
            }
            egui::Grid::new("settings").num_columns(2).show(ui, |ui| {
                ui.label("Remote access");
                ui.checkbox(&mut self.remote_access, "TCP listener on");
                ui.end_row();
                ui.label("Port");
                ui.add(egui::DragValue::new(&mut self.port).range(1..=65535));
                ui.end_row();
                ui.label("Collapse tools");
                ui.checkbox(&mut self.collapse_tools, "");
                ui.end_row();
                ui.label("Disabled tools");
                ui.text_edit_singleline(&mut self.disabled_tools).on_hover_text("comma-separated tool names");
                ui.end_row();
                ui.label("Max sessions");
                ui.add(egui::DragValue::new(&mut self.max_sessions).range(1..=1000));
                ui.end_row();
            });
            if ui.button("Save").clicked() {
                handle.send(Command::SaveConfig(self.patch()));
            }
            ui.separator();
            ui.horizontal(|ui| {
                ui.label("New remote password");
                ui.add(egui::TextEdit::singleline(&mut self.password).password(true));
                if ui.add_enabled(!self.password.is_empty(), egui::Button::new("Set")).clicked() {
                    handle.send(Command::SetPassword(std::mem::take(&mut self.password)));
                }
            });
            ui.weak("The daemon stores only its bcrypt hash.");
        });
        if !*open {
            self.loaded = false;
        }
    }

    fn load(&mut self, config: &Value) {
        self.remote_access = config["services"]["server"]["enabled"].as_bool().unwrap_or(false);
        self.port = config["services"]["server"]["port"].as_u64().and_then(|p| u16::try_from(p).ok()).unwrap_or(9877);
        self.collapse_tools = config["collapse_tools"].as_bool().unwrap_or(false);
        let tools = config["disabled_native_tools"].as_array().cloned().unwrap_or_default();
        self.disabled_tools = tools.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ");
        self.max_sessions = config["max_sessions"].as_u64().unwrap_or(50) as usize;
        self.loaded = true;
    }

    fn patch(&self) -> Value {
        let tools: Vec<&str> = self.disabled_tools.split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
        json!({
            "collapse_tools": self.collapse_tools,
            "disabled_native_tools": tools,
            "max_sessions": self.max_sessions,
            "services": {"server": {"enabled": self.remote_access, "port": self.port}},
        })
    }
}
