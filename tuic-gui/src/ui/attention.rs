//! A bell or a question asks for the person: the session's terminal (or its tab, or its row in
//! the overview) flashes for [`FLASH`], and while the window is not focused it also sets the
//! window's urgency hint and sends a desktop notification, at most one per session per
//! [`NOTIFY_GAP`]. The urgency hint is cleared when the window gets the focus back.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use eframe::egui::{self, UserAttentionType, ViewportCommand};

use crate::net::Handle;
use crate::net::notify::Notification;

/// How long the visual bell shows. A repaint is asked for its end only: nothing is drawn in
/// between, so an idle window stays idle.
pub(crate) const FLASH: Duration = Duration::from_millis(150);
/// A flashing tab's or session row's background.
pub(crate) const FLASH_COLOUR: egui::Color32 = egui::Color32::from_rgb(200, 160, 40);
/// The shortest gap between two desktop notifications of one session (a bell storm sends one).
const NOTIFY_GAP: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    Bell,
    Question,
}

impl Reason {
    fn word(self) -> &'static str {
        match self {
            Reason::Bell => "bell",
            Reason::Question => "question",
        }
    }
}

#[derive(Default)]
pub(crate) struct Attention {
    /// Session -> when its flash ends. Entries go once they end.
    flashes: HashMap<String, Instant>,
    /// Session -> its last desktop notification. Entries go once older than the gap.
    notified: HashMap<String, Instant>,
    /// The window's urgency hint is set.
    urgent: bool,
    /// The window's focus as last printed under `--print-geometry`.
    printed_focus: Option<bool>,
}

impl Attention {
    /// `session_id` rang its bell or asked `text` (shown as `name`).
    pub(crate) fn raise(
        &mut self,
        ctx: &egui::Context,
        handle: &Handle,
        (session_id, name): (&str, &str),
        reason: Reason,
        text: &str,
        print: bool,
    ) {
        let now = Instant::now();
        self.flashes.insert(session_id.to_owned(), now + FLASH);
        ctx.request_repaint_after(FLASH);
        let focused = ctx.input(|i| i.focused);
        let mut notified = false;
        if !focused {
            let kind = match reason {
                Reason::Bell => UserAttentionType::Informational,
                Reason::Question => UserAttentionType::Critical,
            };
            ctx.send_viewport_cmd(ViewportCommand::RequestUserAttention(kind));
            self.urgent = true;
            if self.notified.get(session_id).is_none_or(|at| now.duration_since(*at) >= NOTIFY_GAP) {
                self.notified.insert(session_id.to_owned(), now);
                let (summary, body) = match reason {
                    Reason::Bell => (format!("{name}: bell"), "a bell rang".to_owned()),
                    Reason::Question => (format!("{name} asks"), text.to_owned()),
                };
                let critical = reason == Reason::Question;
                handle.notify(Notification { session_id: session_id.to_owned(), summary, body, critical });
                notified = true;
            }
        }
        if print {
            println!("attention session={session_id} reason={} focused={focused} notified={notified}", reason.word());
        }
    }

    /// Whether `session_id`'s visual bell shows now.
    pub(crate) fn flashing(&self, session_id: &str) -> bool {
        self.flashes.get(session_id).is_some_and(|until| Instant::now() < *until)
    }

    /// Once per frame: drops ended flashes and old notification times, asks for a repaint at the
    /// end of each flash still showing (egui keeps one pending repaint time per frame), and clears
    /// the urgency hint once the window has the focus. Under `print`, each change of the focus as
    /// a line, so the tests know what the window believes.
    pub(crate) fn frame(&mut self, ctx: &egui::Context, print: bool) {
        let now = Instant::now();
        self.flashes.retain(|_, until| *until > now);
        if let Some(next) = self.flashes.values().min() {
            ctx.request_repaint_after(next.duration_since(now));
        }
        self.notified.retain(|_, at| now.duration_since(*at) < NOTIFY_GAP);
        let focused = ctx.input(|i| i.focused);
        if print && self.printed_focus != Some(focused) {
            println!("window focused={focused}");
            self.printed_focus = Some(focused);
        }
        if self.urgent && focused {
            ctx.send_viewport_cmd(ViewportCommand::RequestUserAttention(UserAttentionType::Reset));
            self.urgent = false;
        }
    }
}
