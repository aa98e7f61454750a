//! The Peers view: every messaging peer with its agent, the terminal it runs in (a click opens
//! that terminal) and how much mail waits for it; the selected peer's waiting mail (shown, never
//! marked read); and the progress journal. Drawn from the snapshot the network side polls while
//! the view is open.

use std::time::{SystemTime, UNIX_EPOCH};

use eframe::egui::{self, Color32, RichText};
use proto::peers::PeerInfo;

use crate::net::Snapshot;

const WAITING: Color32 = Color32::from_rgb(240, 190, 60);

#[derive(Default)]
pub(crate) struct PeersView {
    pub open: bool,
    pub journal_open: bool,
    /// The selected peer's `tuic_session`.
    pub selected: Option<String>,
    /// Lines last printed under `--print-geometry`.
    printed: Vec<String>,
    /// Every line the previous frame drew.
    last_frame: Vec<String>,
}

impl PeersView {
    /// Whether the network side should poll the peers and journal.
    pub(crate) fn visible(&self) -> bool {
        self.open || self.journal_open
    }

    /// Draws the open windows; answers the session to open when a peer's terminal was clicked.
    pub(crate) fn show(&mut self, ctx: &egui::Context, snap: &Snapshot, print_geometry: bool) -> Option<String> {
        let mut lines = Vec::new();
        let mut open_session = None;
        let mut open = self.open;
        egui::Window::new("Peers").open(&mut open).default_width(520.0).show(ctx, |ui| {
            open_session = self.peers(ui, snap, &mut lines);
            self.inbox(ui, snap, &mut lines);
        });
        self.open = open;
        let mut journal_open = self.journal_open;
        egui::Window::new("Progress journal").open(&mut journal_open).default_width(480.0).show(ctx, |ui| {
            journal(ui, snap, &mut lines);
        });
        self.journal_open = journal_open;
        if print_geometry {
            // A window lays itself out over its first frames: a line is printed once two frames in
            // a row agree on it, so a test never clicks where a row is no longer.
            let stable: Vec<String> = lines.iter().filter(|l| self.last_frame.contains(l)).cloned().collect();
            for line in stable.iter().filter(|l| !self.printed.contains(l)) {
                println!("{line}");
            }
            if stable.len() < lines.len() {
                ctx.request_repaint();
            }
            self.printed = stable;
            self.last_frame = lines;
        }
        open_session
    }

    fn peers(&mut self, ui: &mut egui::Ui, snap: &Snapshot, lines: &mut Vec<String>) -> Option<String> {
        ui.weak("Agents registered for messaging. Mail is shown as it waits; reading it here marks nothing read.");
        if snap.peers.is_empty() {
            ui.label("no peers registered");
            return None;
        }
        let mut open_session = None;
        egui::Grid::new("peers").striped(true).num_columns(5).show(ui, |ui| {
            for heading in ["Peer", "Agent", "Terminal", "Waiting", "Seen"] {
                ui.label(RichText::new(heading).strong());
            }
            ui.end_row();
            for peer in &snap.peers {
                let selected = self.selected.as_deref() == Some(peer.tuic_session.as_str());
                let mut name = RichText::new(&peer.name).strong();
                if peer.orchestrator {
                    name = name.italics();
                }
                let row = ui.selectable_label(selected, name).on_hover_text(&peer.tuic_session);
                if row.clicked() {
                    self.selected = if selected { None } else { Some(peer.tuic_session.clone()) };
                }
                ui.label(agent(peer));
                let link = match (&peer.session_id, &peer.alias) {
                    (Some(session_id), alias) => {
                        let link = ui.link(alias.as_deref().unwrap_or(session_id)).on_hover_text("open this terminal");
                        if link.clicked() {
                            open_session = Some(session_id.clone());
                        }
                        Some(link.rect.center())
                    }
                    (None, _) => {
                        ui.weak("none");
                        None
                    }
                };
                let waiting = RichText::new(peer.inbox_count.to_string());
                ui.label(if peer.inbox_count > 0 { waiting.strong().color(WAITING) } else { waiting });
                ui.weak(seen(peer));
                ui.end_row();
                let link = link.map_or("-".to_owned(), |p| format!("{:.0},{:.0}", p.x, p.y));
                lines.push(format!(
                    "peer name={} session={} agent={} inbox={} row={:.0},{:.0} link={link}",
                    word(&peer.name),
                    peer.alias.as_deref().unwrap_or("-"),
                    word(peer.agent_type.as_deref().unwrap_or("-")),
                    peer.inbox_count,
                    row.rect.center().x,
                    row.rect.center().y,
                ));
            }
        });
        open_session
    }

    fn inbox(&mut self, ui: &mut egui::Ui, snap: &Snapshot, lines: &mut Vec<String>) {
        let Some(selected) = self.selected.clone() else { return };
        let Some(peer) = snap.peers.iter().find(|p| p.tuic_session == selected) else {
            // Unregistered since it was selected.
            self.selected = None;
            return;
        };
        ui.separator();
        ui.label(RichText::new(format!("Waiting for {}", peer.name)).strong());
        match &snap.inbox {
            Some(Ok(inbox)) if inbox.peer.tuic_session == selected => {
                if inbox.messages.is_empty() {
                    ui.weak("nothing waits: the agent has read its mail");
                }
                egui::ScrollArea::vertical().max_height(220.0).stick_to_bottom(true).show(ui, |ui| {
                    for message in &inbox.messages {
                        ui.label(
                            RichText::new(format!("{} · {}", message.from_name, ago(message.timestamp))).small().weak(),
                        );
                        ui.label(&message.content);
                    }
                });
                let newest = inbox.messages.last().map_or("-".to_owned(), |m| word(&m.content));
                lines.push(format!(
                    "inbox peer={} messages={} newest={newest}",
                    word(&peer.name),
                    inbox.messages.len()
                ));
            }
            Some(Err(why)) => {
                ui.weak(why);
            }
            _ => {
                ui.weak("loading…");
            }
        }
    }
}

fn journal(ui: &mut egui::Ui, snap: &Snapshot, lines: &mut Vec<String>) {
    if snap.journal.is_empty() {
        ui.label("no progress recorded");
    }
    egui::ScrollArea::vertical().stick_to_bottom(true).show(ui, |ui| {
        for entry in &snap.journal {
            let field = |k: &str| entry[k].as_str().unwrap_or_default().to_owned();
            ui.label(format!("[{}] {} {}: {}", field("type"), field("project"), field("agent"), field("text")));
        }
    });
    let last = snap.journal.back().and_then(|e| e["text"].as_str()).map_or("-".to_owned(), word);
    lines.push(format!("journal entries={} last={last}", snap.journal.len()));
}

/// The agent in the peer's terminal and its state, else the MCP client it connected with.
fn agent(peer: &PeerInfo) -> String {
    match (&peer.agent_type, &peer.agent_state, &peer.client) {
        (Some(agent), Some(state), _) => format!("{agent} · {}", state.replace('_', " ")),
        (Some(agent), None, _) => agent.clone(),
        (None, _, Some(client)) => format!("client {client}"),
        (None, _, None) => "—".into(),
    }
}

fn seen(peer: &PeerInfo) -> String {
    match peer.last_seen_ms {
        _ if peer.connected => "connected".into(),
        Some(ms) => format!("seen {}", ago(ms)),
        None => "never connected".into(),
    }
}

/// A Unix-ms time as "12 s ago", "5 min ago", "3 h ago".
fn ago(ms: u64) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let secs = now.saturating_sub(ms) / 1000;
    match secs {
        0..60 => format!("{secs} s ago"),
        60..3600 => format!("{} min ago", secs / 60),
        _ => format!("{} h ago", secs / 3600),
    }
}

/// One whitespace-free word for the test lines.
fn word(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join("_")
}
