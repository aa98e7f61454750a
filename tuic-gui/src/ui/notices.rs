//! What the daemon asks of the person: confirms as a modal naming who asks and what, and toasts.

use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, RichText};

use crate::net::{Confirm, Snapshot};

/// How long a toast stays.
const TOAST_SHOWN: Duration = Duration::from_secs(6);

/// What the confirm modal did this frame: the person's answer, if any, and where its buttons are
/// (printed under `--print-geometry` so the Xvfb test can click them).
pub(crate) struct ConfirmShown {
    pub answer: Option<bool>,
    pub yes: egui::Pos2,
    pub no: egui::Pos2,
}

/// The oldest pending confirm as a modal naming who asks and what.
pub(crate) fn confirm(ctx: &egui::Context, confirm: &Confirm) -> ConfirmShown {
    let left = confirm.expires_at.saturating_duration_since(Instant::now()).as_secs();
    let shown = egui::Modal::new(egui::Id::unique(("confirm", &confirm.id))).show(ctx, |ui| {
        ui.set_max_width(420.0);
        ui.heading(if confirm.title.is_empty() { "Confirm" } else { &confirm.title });
        ui.label(RichText::new(format!("{} asks ({})", confirm.requester, what(&confirm.kind))).strong());
        ui.add_space(6.0);
        // The whole message, however long (the daemon sends all of what will run, up to its
        // bound): it scrolls, and the buttons stay in reach below it.
        egui::ScrollArea::vertical().max_height(320.0).auto_shrink([false, true]).show(ui, |ui| {
            ui.label(RichText::new(&confirm.message).monospace());
        });
        ui.add_space(6.0);
        ui.weak(format!("expires in {left} s"));
        ui.horizontal(|ui| {
            let yes = ui.button(RichText::new("  Confirm  ").strong());
            let no = ui.button("  Decline  ");
            let answer = if yes.clicked() {
                Some(true)
            } else if no.clicked() {
                Some(false)
            } else {
                None
            };
            ConfirmShown { answer, yes: yes.rect.center(), no: no.rect.center() }
        })
        .inner
    });
    ctx.request_repaint_after(Duration::from_secs(1));
    shown.inner
}

/// What a confirm gates, in words.
fn what(kind: &str) -> &str {
    match kind {
        "ui_confirm" => "a confirmation",
        "github_write" => "a write to GitHub",
        "worktree_force_remove" => "force-removing a worktree",
        "ai_terminal" => "an AI terminal action",
        "oauth_consent" => "OAuth consent",
        "config_security" => "a change to security settings",
        other => other,
    }
}

pub(crate) fn toasts(ctx: &egui::Context, snap: &Snapshot) {
    let now = Instant::now();
    let shown: Vec<_> = snap.toasts.iter().filter(|t| now.duration_since(t.at) < TOAST_SHOWN).collect();
    if shown.is_empty() {
        return;
    }
    egui::Area::new(egui::Id::unique("toasts")).anchor(egui::Align2::RIGHT_BOTTOM, [-12.0, -36.0]).show(ctx, |ui| {
        for toast in shown {
            let colour = match toast.level.as_str() {
                "error" => Color32::LIGHT_RED,
                "warn" | "warning" => Color32::from_rgb(240, 190, 60),
                _ => Color32::LIGHT_BLUE,
            };
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_max_width(320.0);
                ui.label(RichText::new(&toast.title).strong().color(colour));
                if !toast.message.is_empty() {
                    ui.label(&toast.message);
                }
            });
        }
    });
    ctx.request_repaint_after(Duration::from_millis(500));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(ctx: &egui::Context, events: Vec<egui::Event>, pending: &Confirm) -> ConfirmShown {
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1000.0, 700.0))),
            events,
            ..Default::default()
        };
        let mut shown = None;
        let mut output = ctx.run_ui(input, |ui| shown = Some(confirm(ui.ctx(), pending)));
        // No renderer here: the font atlas updates are dropped on purpose.
        output.textures_delta.clear();
        shown.expect("the modal ran")
    }

    #[test]
    fn clicking_confirm_or_decline_answers_the_modal() {
        let pending = Confirm {
            id: "confirm-1".into(),
            title: "Deploy?".into(),
            message: "push to staging".into(),
            requester: "agent tu-2 (claude-code)".into(),
            kind: "ui_confirm".into(),
            expires_at: Instant::now() + Duration::from_secs(300),
        };
        for (button, expected) in [(true, true), (false, false)] {
            let ctx = egui::Context::default();
            // The modal settles its size over the first frames.
            let mut laid_out = frame(&ctx, vec![], &pending);
            for _ in 0..3 {
                laid_out = frame(&ctx, vec![], &pending);
                assert_eq!(laid_out.answer, None, "nothing is answered before a click");
            }
            let at = if button { laid_out.yes } else { laid_out.no };
            let press = |pressed| egui::Event::PointerButton {
                pos: at,
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: egui::Modifiers::NONE,
            };
            let _ = frame(&ctx, vec![egui::Event::PointerMoved(at), press(true)], &pending);
            let released = frame(&ctx, vec![press(false)], &pending);
            assert_eq!(released.answer, Some(expected));
        }
    }
}
