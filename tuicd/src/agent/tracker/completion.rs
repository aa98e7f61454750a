//! The end-of-task marker, per turn epoch, with stale markers kept from completing a new turn.
//!
//! A marker from the byte stream is new by construction. A marker on the screen may be an old
//! one still in view, so at each new turn the markers in view are counted as stale, and a screen
//! marker completes the turn only when more copies of it are in view than were stale. A stale
//! count is never lowered when its copy scrolls away: agents redraw their whole transcript (Claude
//! Code on resize), and a redrawn old marker must not complete the new turn; an identical marker
//! printed for the new turn is still caught from the byte stream. A stream marker the screen has not shown yet when the
//! turn changes is counted stale too, so a late redraw of it cannot complete the next turn.

/// Stream markers remembered until the screen shows them; a renderer that never draws them
/// (output scrolled past in one read) must not grow this.
const UNSEEN_CAPACITY: usize = 8;
/// Distinct stale markers remembered, oldest dropped first: far more than a screen can show.
const STALE_CAPACITY: usize = 64;

#[derive(Debug, Default)]
pub struct Completion {
    completed_epoch: Option<u64>,
    suggestions: Vec<String>,
    /// Marker texts in view on the last screen, with their counts.
    visible: Vec<(Vec<String>, usize)>,
    stale: Vec<(Vec<String>, usize)>,
    unseen: Vec<Vec<String>>,
}

impl Completion {
    pub fn is_completed(&self, epoch: u64) -> bool {
        self.completed_epoch == Some(epoch)
    }

    /// The suggestions of the marker that completed `epoch`.
    pub fn suggestions(&self, epoch: u64) -> Option<&[String]> {
        self.is_completed(epoch).then_some(self.suggestions.as_slice())
    }

    /// A marker from the byte stream; returns it when it completes `epoch` now.
    pub fn on_stream_marker(&mut self, items: Vec<String>, epoch: u64) -> Option<Vec<String>> {
        if self.unseen.len() == UNSEEN_CAPACITY {
            self.unseen.remove(0);
        }
        self.unseen.push(items.clone());
        self.complete(items, epoch)
    }

    /// The markers on the latest screen, top to bottom; returns one when it completes `epoch`.
    pub fn on_screen_markers(&mut self, markers: Vec<Vec<String>>, epoch: u64) -> Option<Vec<String>> {
        let mut visible: Vec<(Vec<String>, usize)> = Vec::new();
        for items in markers {
            match visible.iter_mut().find(|(seen, _)| *seen == items) {
                Some((_, count)) => *count += 1,
                None => visible.push((items, 1)),
            }
        }
        self.unseen.retain(|items| !visible.iter().any(|(seen, _)| seen == items));
        let fresh =
            visible.iter().rev().find(|(items, count)| *count > count_of(&self.stale, items)).map(|(i, _)| i.clone());
        self.visible = visible;
        fresh.and_then(|items| self.complete(items, epoch))
    }

    /// A new turn: whatever is in view, or written but not yet drawn, is stale from now on.
    pub fn begin_turn(&mut self) {
        for (items, count) in self.visible.clone() {
            match self.stale.iter_mut().find(|(seen, _)| *seen == items) {
                Some((_, stale)) => *stale = (*stale).max(count),
                None => self.stale.push((items, count)),
            }
        }
        for items in self.unseen.drain(..) {
            match self.stale.iter_mut().find(|(seen, _)| *seen == items) {
                Some((_, stale)) => *stale += 1,
                None => self.stale.push((items, 1)),
            }
        }
        let excess = self.stale.len().saturating_sub(STALE_CAPACITY);
        self.stale.drain(..excess);
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
        assert!(completion.on_stream_marker(m(&["x", "y"]), 0).is_some());
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
        assert_eq!(completion.on_stream_marker(m(&["a", "b"]), 1), Some(m(&["a", "b"])));
    }

    #[test]
    fn one_marker_completes_a_turn_once() {
        let mut completion = Completion::default();
        assert!(completion.on_stream_marker(m(&["a", "b"]), 3).is_some());
        assert!(completion.on_stream_marker(m(&["c", "d"]), 3).is_none());
        assert_eq!(completion.suggestions(3), Some(&m(&["a", "b"])[..]));
        assert_eq!(completion.suggestions(4), None);
    }
}
