//! The screen model's parse budget: a token bucket of CPU time.
//!
//! vt100 with the log capture parses ~16 MB/s of full 80-column lines on this class of machine
//! (the plain-lines fast path ~146 MB/s), while a PTY floods at ~60 MB/s: a parser that simply kept
//! up would take more than a core away from the child, the kernel's tty work and the reader, and
//! slow the flood itself. The budget lets the parser run freely for interactive output
//! and bursts (up to [`SCREEN_PARSE_BURST`] of parsing), and holds it to
//! 1/[`SCREEN_PARSE_SHARE`] of wall time while output keeps coming; the follower then skips ahead
//! once it is more than [`SCREEN_MAX_BACKLOG`](crate::limits::SCREEN_MAX_BACKLOG) behind.

use std::time::{Duration, Instant};

use crate::limits::{SCREEN_PARSE_BURST, SCREEN_PARSE_SHARE};

#[derive(Debug)]
pub(super) struct ParseBudget {
    /// Parse time still allowed now, in nanoseconds; negative while in debt.
    allowance: i128,
    last: Instant,
}

impl ParseBudget {
    pub(super) fn new(now: Instant) -> Self {
        Self { allowance: SCREEN_PARSE_BURST.as_nanos() as i128, last: now }
    }

    /// Records a parse that took `spent` and ended at `now`; returns how long to rest before the
    /// next one (zero while within the budget).
    pub(super) fn spend(&mut self, spent: Duration, now: Instant) -> Duration {
        let earned = now.saturating_duration_since(self.last).as_nanos() as i128 / i128::from(SCREEN_PARSE_SHARE);
        self.last = now;
        self.allowance =
            (self.allowance + earned).min(SCREEN_PARSE_BURST.as_nanos() as i128) - spent.as_nanos() as i128;
        if self.allowance >= 0 {
            Duration::ZERO
        } else {
            // Resting earns exactly the debt back.
            let rest = (-self.allowance).saturating_mul(i128::from(SCREEN_PARSE_SHARE));
            Duration::from_nanos(u64::try_from(rest).unwrap_or(u64::MAX))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn interactive_output_never_rests() {
        let start = Instant::now();
        let mut budget = ParseBudget::new(start);
        // A keystroke echo every 10 ms, 20 µs of parsing each.
        for i in 1..=1000u32 {
            assert_eq!(budget.spend(Duration::from_micros(20), start + MS * 10 * i), Duration::ZERO);
        }
    }

    #[test]
    fn a_burst_within_the_allowance_runs_at_once() {
        let start = Instant::now();
        let mut budget = ParseBudget::new(start);
        let half = SCREEN_PARSE_BURST / 2;
        assert_eq!(budget.spend(half, start + half), Duration::ZERO);
    }

    #[test]
    fn sustained_parsing_is_held_to_its_share() {
        let start = Instant::now();
        let mut budget = ParseBudget::new(start);
        let mut now = start;
        let mut parsed = Duration::ZERO;
        // Parse 3 ms batches back to back, resting whenever told, for 10 s of wall time.
        while now < start + Duration::from_secs(10) {
            now += 3 * MS;
            parsed += 3 * MS;
            now += budget.spend(3 * MS, now);
        }
        let share = parsed.as_secs_f64() / (now - start).as_secs_f64();
        let target = 1.0 / f64::from(SCREEN_PARSE_SHARE);
        // The burst allowance is spent once at the start; after that exactly the share.
        let burst = SCREEN_PARSE_BURST.as_secs_f64() / 10.0;
        assert!((share - target).abs() <= burst + 0.001, "share {share}, target {target}");
    }

    #[test]
    fn resting_pays_the_debt_exactly() {
        let start = Instant::now();
        let mut budget = ParseBudget::new(start);
        let spent = SCREEN_PARSE_BURST + 2 * MS;
        let rest = budget.spend(spent, start + spent);
        // The allowance was full, so the parse's own time earned nothing: 2 ms of debt, earned
        // back at the share.
        assert_eq!(rest, 2 * MS * SCREEN_PARSE_SHARE);
        // Resting clears the debt and no more: the next parse rests for its own cost.
        let after = start + spent + rest;
        assert_eq!(budget.spend(Duration::ZERO, after), Duration::ZERO);
        assert_eq!(budget.spend(MS, after), MS * SCREEN_PARSE_SHARE);
    }
}
