//! The window: a status bar, the question banner, the sessions overview, the terminals as tabs,
//! the Agents (ACP) view (in place of the terminals while open),
//! the peers and journal, and the dialogs; it answers screenshot requests with its own pixels. Every frame is drawn from the network side's last snapshot.

mod acp;
mod attention;
mod dialogs;
mod notices;
mod overview;
mod peers;
mod terminal;

use std::path::PathBuf;
use std::time::Instant;

use eframe::egui::{self, Color32, Pos2, RichText};

use crate::framelog::FrameLog;
use crate::lock::Recover as _;
use crate::net::{Command, Handle, Snapshot};
use crate::target::{Remembered, Target};

pub(crate) struct Options {
    pub print_geometry: bool,
    pub config_dir: PathBuf,
    pub target: Target,
    /// Sessions to open as tabs once the list arrives (PTY id or alias).
    pub open: Vec<String>,
}

pub(crate) struct TuicApp {
    handle: Handle,
    options: Options,
    tabs: Vec<terminal::Tab>,
    active: usize,
    generation: u64,
    context_set: bool,
    /// The user closed every tab on purpose: do not open the first session again.
    closed_all: bool,
    connect: Option<dialogs::ConnectForm>,
    spawn: Option<dialogs::SpawnForm>,
    settings: Option<dialogs::SettingsForm>,
    peers: peers::PeersView,
    acp: acp::AcpView,
    frame_log: Option<FrameLog>,
    /// The connection state and terminal states last printed under `--print-geometry`.
    printed_states: Vec<String>,
    printed_confirm: String,
    confirm_last_frame: String,
    printed_buttons: String,
    /// A session whose "end" was clicked while a program runs in it: asked first.
    ending: Option<String>,
    printed_ending: String,
    /// Bells and questions: the visual bell, the urgency hint, desktop notifications.
    attention: attention::Attention,
}

impl TuicApp {
    pub(crate) fn new(handle: Handle, options: Options) -> Self {
        Self {
            handle,
            options,
            tabs: Vec::new(),
            active: 0,
            generation: 0,
            context_set: false,
            closed_all: false,
            connect: None,
            spawn: None,
            settings: None,
            peers: peers::PeersView::default(),
            acp: acp::AcpView::default(),
            frame_log: FrameLog::from_env(),
            printed_states: Vec::new(),
            printed_confirm: String::new(),
            confirm_last_frame: String::new(),
            printed_buttons: String::new(),
            ending: None,
            printed_ending: String::new(),
            attention: attention::Attention::default(),
        }
    }

    fn open(&mut self, session_id: &str, snap: &Snapshot) {
        if let Some(i) = self.tabs.iter().position(|t| t.term.session_id == session_id) {
            self.active = i;
            return;
        }
        let (rows, cols) =
            snap.sessions.iter().find(|s| s.session_id == session_id).map(|s| (s.rows, s.cols)).unwrap_or((24, 80));
        self.tabs.push(terminal::Tab::new(self.handle.open_term(session_id, rows, cols)));
        self.active = self.tabs.len() - 1;
    }

    /// Bells rung in any open terminal and questions the bus announced ask for the person.
    fn raise_attention(&mut self, ctx: &egui::Context, snap: &Snapshot, questions: Vec<(String, String)>) {
        let print = self.options.print_geometry;
        let name = |id: &str| snap.sessions.iter().find(|s| s.session_id == id).map(overview::name);
        for tab in &mut self.tabs {
            if let Some(count) = tab.new_bells() {
                let id = tab.term.session_id.clone();
                if print {
                    println!("bell session={id} count={count}");
                }
                let shown = name(&id).unwrap_or_else(|| id.clone());
                self.attention.raise(ctx, &self.handle, (&id, &shown), attention::Reason::Bell, "", print);
            }
        }
        for (id, text) in questions {
            let shown = name(&id).unwrap_or_else(|| id.clone());
            self.attention.raise(ctx, &self.handle, (&id, &shown), attention::Reason::Question, &text, print);
        }
        self.attention.frame(ctx, print);
    }

    /// Under `--print-geometry`, each change of the connection and of the open terminals' states
    /// as one line on stdout, so the Xvfb tests can wait on what the window shows.
    fn print_states(&mut self, snap: &Snapshot) {
        let connection = if snap.online {
            "online"
        } else if snap.auth_failed {
            "unauthorized"
        } else {
            "offline"
        };
        let mut states = vec![format!("connection {connection}")];
        for tab in &self.tabs {
            let status = tab.term.view.locked().status.clone();
            states.push(format!("term session={} status={status:?}", tab.term.session_id));
        }
        for line in &states {
            if !self.printed_states.contains(line) {
                println!("{line}");
            }
        }
        self.printed_states = states;
    }

    fn status_bar(&mut self, ui: &mut egui::Ui, snap: &Snapshot) {
        ui.horizontal(|ui| {
            if snap.online {
                ui.colored_label(Color32::LIGHT_GREEN, "online");
            } else if snap.auth_failed {
                ui.colored_label(Color32::LIGHT_RED, "refused: wrong user or password");
            } else {
                ui.colored_label(Color32::LIGHT_RED, "offline, reconnecting");
            }
            ui.label(RichText::new(&snap.target).monospace().small());
            if let Some(h) = &snap.health {
                ui.separator();
                ui.label(format!(
                    "up {} min · {} session(s) · MCP {}",
                    h.uptime_secs / 60,
                    h.session_count,
                    h.protocol_version
                ));
                if let Some(tcp) = &h.tcp_address {
                    ui.label(format!("· remote {tcp}"));
                }
            }
            if let Some(daemon) = snap.process.iter().find(|p| p.session_id.is_none()) {
                ui.separator();
                ui.label(format!("tuicd {:.0}% CPU · {} MB", daemon.cpu_pct, daemon.rss_kb / 1024));
                let children: f32 = snap.process.iter().filter(|p| p.session_id.is_some()).map(|p| p.cpu_pct).sum();
                ui.label(format!("· sessions {children:.0}% CPU"));
            }
            if let Some(error) = &snap.error {
                ui.separator();
                ui.colored_label(Color32::LIGHT_RED, error);
            }
        });
    }

    fn menu(&mut self, ui: &mut egui::Ui, snap: &Snapshot) {
        ui.horizontal(|ui| {
            if ui.button("Connect…").clicked() {
                let remembered = Remembered::load(&self.options.config_dir);
                self.connect = Some(dialogs::ConnectForm::from(&remembered, &self.options.target));
            }
            if ui.button("New terminal").clicked() {
                self.handle.send(Command::Create(serde_json::json!({})));
            }
            if ui.button("Spawn agent…").clicked() {
                self.handle.send(Command::LoadAgents);
                self.spawn = Some(dialogs::SpawnForm::default());
            }
            if ui.button("Settings…").clicked() {
                self.handle.send(Command::LoadConfig);
                self.settings = Some(dialogs::SettingsForm::default());
            }
            let peers = ui.toggle_value(&mut self.peers.open, "Peers");
            let journal = ui.toggle_value(&mut self.peers.journal_open, format!("Journal ({})", snap.journal.len()));
            let acp = ui
                .toggle_value(&mut self.acp.open, "Agents (ACP)")
                .on_hover_text("ACP agents the daemon drives: their sessions and conversations");
            let line = format!(
                "button peers={:.0},{:.0} journal={:.0},{:.0} acp={:.0},{:.0}",
                peers.rect.center().x,
                peers.rect.center().y,
                journal.rect.center().x,
                journal.rect.center().y,
                acp.rect.center().x,
                acp.rect.center().y
            );
            if self.options.print_geometry && line != self.printed_buttons {
                println!("{line}");
                self.printed_buttons = line;
            }
        });
    }

    fn tab_bar(&mut self, ui: &mut egui::Ui, snap: &Snapshot) {
        let mut close = None;
        ui.horizontal(|ui| {
            for (i, tab) in self.tabs.iter().enumerate() {
                let session = snap.sessions.iter().find(|s| s.session_id == tab.term.session_id);
                let mut label = session.map(overview::name).unwrap_or_else(|| tab.term.session_id.clone());
                if session.and_then(overview::question).is_some() {
                    label.push_str(" ?");
                }
                let mut text = RichText::new(label);
                if self.attention.flashing(&tab.term.session_id) {
                    text = text.background_color(attention::FLASH_COLOUR);
                }
                let mut response = ui.selectable_label(i == self.active, text);
                if let Some(title) = tab.term.view.locked().title.clone() {
                    response = response.on_hover_text(title);
                }
                if response.clicked() {
                    self.active = i;
                }
                if ui.small_button("×").on_hover_text("close the tab (the session keeps running)").clicked() {
                    close = Some(i);
                }
                if i == self.active {
                    let end = ui.small_button("end").on_hover_text("end the session (SIGHUP, then SIGKILL)");
                    if self.options.print_geometry {
                        let line = format!("end-button at={:.0},{:.0}", end.rect.center().x, end.rect.center().y);
                        if line != self.printed_ending {
                            println!("{line}");
                            self.printed_ending = line;
                        }
                    }
                    if end.clicked() {
                        let pid = session.and_then(|s| s.pid);
                        let local = matches!(self.options.target, Target::Socket(_));
                        if local && pid.and_then(program_running) == Some(false) {
                            self.handle.send(Command::Close(tab.term.session_id.clone()));
                        } else {
                            self.ending = Some(tab.term.session_id.clone());
                        }
                    }
                }
            }
        });
        if let Some(i) = close {
            self.tabs.remove(i);
            self.active = self.active.min(self.tabs.len().saturating_sub(1));
            self.closed_all = self.tabs.is_empty();
        }
    }

    /// "end" on a session with a program running: ask first.
    fn ask_end(&mut self, ctx: &egui::Context, snap: &Snapshot) {
        let Some(id) = self.ending.clone() else { return };
        let name = snap.sessions.iter().find(|s| s.session_id == id).map(overview::name).unwrap_or_else(|| id.clone());
        let mut answer = None;
        let mut buttons = (Pos2::ZERO, Pos2::ZERO);
        egui::Modal::new(egui::Id::unique("end-session")).show(ctx, |ui| {
            ui.heading(format!("End {name}?"));
            ui.label("A program is running in it (or this window cannot tell). Ending sends SIGHUP, then SIGKILL.");
            ui.horizontal(|ui| {
                let yes = ui.button("End the session");
                let no = ui.button("Cancel");
                buttons = (yes.rect.center(), no.rect.center());
                if yes.clicked() {
                    answer = Some(true);
                } else if no.clicked() {
                    answer = Some(false);
                }
            });
        });
        if self.options.print_geometry {
            println!(
                "ask end session={id} yes={:.0},{:.0} no={:.0},{:.0}",
                buttons.0.x, buttons.0.y, buttons.1.x, buttons.1.y
            );
        }
        if let Some(yes) = answer {
            if yes {
                self.handle.send(Command::Close(id));
            }
            self.ending = None;
        }
    }

    fn dialogs(&mut self, ctx: &egui::Context, snap: &Snapshot) {
        self.ask_end(ctx, snap);
        if let Some(form) = &mut self.connect {
            let mut open = true;
            if let Some(target) = form.show(ctx, &mut open) {
                if let Err(e) = Remembered::of(&target).save(&self.options.config_dir) {
                    self.handle.snapshot.locked().error = Some(format!("cannot remember the connection: {e}"));
                }
                self.options.target = target.clone();
                self.handle.send(Command::Connect(target));
            }
            if !open {
                self.connect = None;
            }
        }
        if let Some(form) = &mut self.spawn {
            let mut open = true;
            form.show(ctx, &mut open, &self.handle, &snap.agents);
            if !open {
                self.spawn = None;
            }
        }
        if let Some(form) = &mut self.settings {
            let mut open = true;
            form.show(ctx, &mut open, &self.handle, snap.config.as_ref());
            if !open {
                self.settings = None;
            }
        }
        if let Some(session_id) = self.peers.show(ctx, snap, self.options.print_geometry) {
            self.open(&session_id, snap);
        }
        self.handle.watch_peers(self.peers.visible(), self.peers.selected.as_deref());
        notices::toasts(ctx, snap);
        if let Some(confirm) = snap.confirms.first() {
            let shown = notices::confirm(ctx, confirm);
            if let Some(confirmed) = shown.answer {
                self.handle.send(Command::Answer { id: confirm.id.clone(), confirmed });
            }
            let line = format!(
                "confirm id={} yes={:.0},{:.0} no={:.0},{:.0}",
                confirm.id, shown.yes.x, shown.yes.y, shown.no.x, shown.no.y
            );
            // A modal lays itself out over its first frames; only a position two frames agree on
            // is printed, so a test never clicks where the button is no longer.
            let settled = line == self.confirm_last_frame;
            if !settled {
                ctx.request_repaint();
            }
            if self.options.print_geometry && settled && line != self.printed_confirm {
                println!("{line}");
                self.printed_confirm.clone_from(&line);
            }
            self.confirm_last_frame = line;
        }
    }
}

/// Whether a program other than the shell holds the terminal's foreground (the shell's process
/// group is not the terminal's foreground group), from `/proc/PID/stat`; `None` when unknown.
fn program_running(pid: u32) -> Option<bool> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split(' ').collect();
    let pgrp: i64 = fields.get(2)?.parse().ok()?;
    let tpgid: i64 = fields.get(5)?.parse().ok()?;
    Some(tpgid > 0 && tpgid != pgrp)
}

impl eframe::App for TuicApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let started = Instant::now();
        if !self.context_set {
            self.handle.set_context(ui.ctx());
            self.context_set = true;
        }
        let (snap, screenshots, questions) = {
            let mut snap = self.handle.snapshot.locked();
            let screenshots = std::mem::take(&mut snap.screenshots);
            let questions = std::mem::take(&mut snap.questions);
            (snap.clone(), screenshots, questions)
        };
        // egui hands the pixels of the next painted frame to the callback, on this thread.
        for id in screenshots {
            let handle = self.handle.clone();
            ui.ctx().request_screenshot(move |image| handle.send(Command::Screenshot { id, image }));
        }
        if snap.generation != self.generation {
            // A new connection: the old streams belong to another daemon.
            self.generation = snap.generation;
            self.tabs.clear();
            self.closed_all = false;
            self.acp.reset();
        }
        if !self.options.open.is_empty() && !snap.sessions.is_empty() {
            for wanted in std::mem::take(&mut self.options.open) {
                let found = snap.sessions.iter().find(|s| s.session_id == wanted || s.alias == wanted);
                match found.map(|s| s.session_id.clone()) {
                    Some(id) => self.open(id.as_str(), &snap),
                    None => self.handle.snapshot.locked().error = Some(format!("--open {wanted}: no such session")),
                }
            }
            self.active = 0;
        }
        // Show a terminal straight away rather than an empty pane.
        if self.tabs.is_empty()
            && !self.closed_all
            && let Some(first) = snap.sessions.first()
        {
            let id = first.session_id.clone();
            self.open(&id, &snap);
        }
        if self.options.print_geometry {
            self.print_states(&snap);
        }
        let ctx = ui.ctx().clone();
        self.raise_attention(&ctx, &snap, questions);
        egui::Panel::bottom("status").show(ui, |ui| self.status_bar(ui, &snap));
        egui::Panel::top("menu").show(ui, |ui| {
            self.menu(ui, &snap);
            if let Some(id) = overview::banner(ui, &self.handle, &snap.sessions) {
                self.open(&id, &snap);
            }
        });
        egui::Panel::left("sessions").resizable(true).default_size(240.0).min_size(200.0).show(ui, |ui| {
            ui.heading("Sessions");
            let active = self.tabs.get(self.active).map(|t| t.term.session_id.clone());
            egui::ScrollArea::vertical().show(ui, |ui| {
                let attention = &self.attention;
                let flashing = |id: &str| attention.flashing(id);
                if let Some(id) = overview::sessions(ui, &snap.sessions, active.as_deref(), &flashing) {
                    self.open(&id, &snap);
                }
            });
        });
        let mut typed = None;
        let mut painted = None;
        self.handle.watch_acp(self.acp.open);
        egui::CentralPanel::default().show(ui, |ui| {
            if self.acp.open {
                self.acp.show(ui, &snap, &self.handle, self.options.print_geometry);
                return;
            }
            if self.tabs.is_empty() {
                ui.centered_and_justified(|ui| ui.weak("no terminal open: pick a session or create one"));
                return;
            }
            self.tab_bar(ui, &snap);
            let Some(tab) = self.tabs.get_mut(self.active) else { return };
            if let Some(session) = snap.sessions.iter().find(|s| s.session_id == tab.term.session_id)
                && overview::question(session).is_some()
            {
                ui.horizontal(|ui| overview::quick_replies(ui, &self.handle, session));
            }
            let view = tab.term.view.locked().clone();
            let flash = self.attention.flashing(&tab.term.session_id);
            let shown = terminal::show(ui, tab, &view, self.options.print_geometry, flash);
            typed = shown.sent_at_cursor.zip(shown.sent_at);
            painted = Some(shown.painted_cursor);
        });
        self.dialogs(&ctx, &snap);
        if let Some(log) = &mut self.frame_log {
            if let Some((cursor, at)) = typed {
                log.key_sent(cursor, at);
            }
            if let Some(cursor) = painted {
                log.painted(cursor);
            }
            log.frame(started, frame.info().cpu_usage);
        }
    }
}
