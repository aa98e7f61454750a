//! The end-of-task marker, per turn epoch, with stale markers kept from completing a new turn.
//!
//! Agents show old markers again: a marker stays in view after the next submit, and renderers
//! repaint their whole transcript (Claude Code on resize, full-screen TUIs on scroll), which puts
//! old marker text back into both the screen and the byte stream. So every marker seen during a
//! turn, with the most copies seen at once, becomes stale when the next turn opens; stale counts
//! are never lowered when a copy scrolls away. Then:
//!
//! - an OSC 7770 `suggest=` is never repainted (it is not screen text), so it always counts;
//! - a plain-text marker in the byte stream counts unless an earlier turn had the same items;
//! - a screen marker counts when more copies of it are in view than were stale.
//!
//! The price: an agent that ends a turn with exactly the suggestions of an earlier turn, after
//! the earlier copy scrolled out of view, stays `idle` instead of `completed` unless it uses the
//! OSC marker. A wrong `completed` would be worse: it tells an orchestrator a task is done.

/// Distinct markers remembered per turn and as stale, oldest dropped first: far more than a
/// screen can show.
const MARKER_MEMORY: usize = 64;

#[derive(Debug, Default)]
pub(super) struct Completion {
    completed_epoch: Option<u64>,
    suggestions: Vec<String>,
    /// Markers seen in the current turn, with the most copies in view at once.
    this_turn: Vec<(Vec<String>, usize)>,
    stale: Vec<(Vec<String>, usize)>,
}

impl Completion {
    pub(super) fn is_completed(&self, epoch: u64) -> bool {
        self.completed_epoch == Some(epoch)
    }

    /// The suggestions of the marker that completed `epoch`.
    pub(super) fn suggestions(&self, epoch: u64) -> Option<&[String]> {
        self.is_completed(epoch).then_some(self.suggestions.as_slice())
    }

    /// An OSC 7770 `suggest=` marker; returns it when it completes `epoch` now.
    pub(super) fn on_explicit_marker(&mut self, items: Vec<String>, epoch: u64) -> Option<Vec<String>> {
        remember(&mut self.this_turn, &items, 1);
        self.complete(items, epoch)
    }

    /// A plain-text marker in the byte stream; returns it when it completes `epoch` now.
    pub(super) fn on_stream_text_marker(&mut self, items: Vec<String>, epoch: u64) -> Option<Vec<String>> {
        remember(&mut self.this_turn, &items, 1);
        if count_of(&self.stale, &items) > 0 {
            return None;
        }
        self.complete(items, epoch)
    }

    /// The markers on the latest screen, top to bottom; returns one when it completes `epoch`.
    pub(super) fn on_screen_markers(&mut self, markers: Vec<Vec<String>>, epoch: u64) -> Option<Vec<String>> {
        let mut visible: Vec<(Vec<String>, usize)> = Vec::new();
        for items in markers {
            let count = count_of(&visible, &items) + 1;
            remember(&mut visible, &items, count);
        }
        for (items, count) in &visible {
            remember(&mut self.this_turn, items, *count);
        }
        let fresh = visible.into_iter().rev().find(|(items, count)| *count > count_of(&self.stale, items));
        fresh.and_then(|(items, _)| self.complete(items, epoch))
    }

    /// A new turn: every marker of the finished turn is stale from now on.
    pub(super) fn begin_turn(&mut self) {
        for (items, count) in std::mem::take(&mut self.this_turn) {
            remember(&mut self.stale, &items, count);
        }
    }

    fn complete(&mut self, items: Vec<String>, epoch: u64) -> Option<Vec<String>> {
        if self.is_completed(epoch) {
            return None;
        }
        self.completed_epoch = Some(epoch);
        self.suggestions = items.clone();
        Some(items)
    }
}

/// Raises the remembered count of `items` to at least `count`.
fn remember(counts: &mut Vec<(Vec<String>, usize)>, items: &[String], count: usize) {
    match counts.iter_mut().find(|(seen, _)| seen == items) {
        Some((_, seen)) => *seen = (*seen).max(count),
        None => {
            if counts.len() == MARKER_MEMORY {
                counts.remove(0);
            }
            counts.push((items.to_vec(), count));
        }
    }
}

fn count_of(counts: &[(Vec<String>, usize)], items: &[String]) -> usize {
    counts.iter().find(|(seen, _)| seen == items).map_or(0, |(_, count)| *count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_marker_still_in_view_does_not_complete_the_next_turn() {
        let mut completion = Completion::default();
        assert_eq!(completion.on_screen_markers(vec![m(&["a", "b"])], 0), Some(m(&["a", "b"])));
        completion.begin_turn();
        assert_eq!(completion.on_screen_markers(vec![m(&["a", "b"])], 1), None);
        assert!(!completion.is_completed(1));
        // The agent prints the very same suggestions again for the new turn.
        assert_eq!(completion.on_screen_markers(vec![m(&["a", "b"]), m(&["a", "b"])], 1), Some(m(&["a", "b"])));
    }

    #[test]
    fn a_stream_marker_drawn_only_after_the_next_submit_is_stale() {
        let mut completion = Completion::default();
        assert!(completion.on_stream_text_marker(m(&["x", "y"]), 0).is_some());
        completion.begin_turn();
        assert_eq!(completion.on_screen_markers(vec![m(&["x", "y"])], 1), None);
    }

    #[test]
    fn a_stale_marker_redrawn_after_scrolling_away_stays_stale() {
        let mut completion = Completion::default();
        completion.on_screen_markers(vec![m(&["a", "b"])], 0);
        completion.begin_turn();
        assert_eq!(completion.on_screen_markers(vec![], 1), None);
        assert_eq!(completion.on_screen_markers(vec![m(&["a", "b"])], 1), None);
        assert_eq!(completion.on_stream_text_marker(m(&["a", "b"]), 1), None, "a repaint in the byte stream");
        assert_eq!(completion.on_explicit_marker(m(&["a", "b"]), 1), Some(m(&["a", "b"])));
    }

    #[test]
    fn a_marker_that_scrolled_away_before_the_submit_is_still_stale() {
        let mut completion = Completion::default();
        assert!(completion.on_screen_markers(vec![m(&["a", "b"])], 0).is_some());
        completion.on_screen_markers(vec![], 0);
        completion.begin_turn();
        assert_eq!(completion.on_screen_markers(vec![m(&["a", "b"])], 1), None, "a repaint after a resize");
        assert_eq!(completion.on_stream_text_marker(m(&["c", "d"]), 1), Some(m(&["c", "d"])));
    }

    #[test]
    fn one_marker_completes_a_turn_once() {
        let mut completion = Completion::default();
        assert!(completion.on_stream_text_marker(m(&["a", "b"]), 3).is_some());
        assert!(completion.on_explicit_marker(m(&["c", "d"]), 3).is_none());
        assert_eq!(completion.suggestions(3), Some(&m(&["a", "b"])[..]));
        assert_eq!(completion.suggestions(4), None);
    }
}
