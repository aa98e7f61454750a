//! The health checker: every `UPSTREAM_HEALTH_INTERVAL` each upstream's supervisor gets a tick;
//! a ready upstream answers a `tools/list`, one that is down is tried again. [`Breaker`] is the
//! rule those ticks feed: `UPSTREAM_BREAKER_FAILURES` consecutive failures open the circuit,
//! retried after a backoff from `UPSTREAM_BACKOFF_START` doubling to `UPSTREAM_BACKOFF_MAX`;
//! after `UPSTREAM_MAX_RETRIES` retries the upstream is `failed` (still tried on each tick).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::registry::Upstreams;
use crate::limits::{UPSTREAM_BACKOFF_MAX, UPSTREAM_BACKOFF_START, UPSTREAM_BREAKER_FAILURES, UPSTREAM_MAX_RETRIES};

/// Ticks every upstream at its registry's interval until `shutdown` flips.
pub(crate) fn spawn(upstreams: Arc<Upstreams>, mut shutdown: watch::Receiver<bool>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(upstreams.health_interval());
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tokio::select! {
                _ = shutdown.wait_for(|stopping| *stopping) => {
                    upstreams.stop_all();
                    return;
                }
                _ = tick.tick() => upstreams.tick(),
            }
        }
    });
}

/// What a failure means for the upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Below the threshold: still considered up (or still connecting).
    Tolerated,
    /// The circuit is open: try again after this long.
    RetryAfter(Duration),
    /// Out of retries: `failed`, tried again only on health ticks.
    Failed,
}

/// Consecutive failures and the retry schedule of one upstream.
#[derive(Debug, Clone, Default)]
pub(crate) struct Breaker {
    failures: u32,
    retries: u32,
    attempts: u64,
}

impl Breaker {
    pub(crate) fn success(&mut self) {
        self.failures = 0;
        self.retries = 0;
        self.attempts += 1;
    }

    pub(crate) fn failure(&mut self) -> Verdict {
        self.attempts += 1;
        self.failures += 1;
        if self.failures < UPSTREAM_BREAKER_FAILURES {
            return Verdict::Tolerated;
        }
        if self.retries >= UPSTREAM_MAX_RETRIES {
            return Verdict::Failed;
        }
        let delay = UPSTREAM_BACKOFF_START.saturating_mul(1 << self.retries.min(16)).min(UPSTREAM_BACKOFF_MAX);
        self.retries += 1;
        Verdict::RetryAfter(delay)
    }

    /// Whether the circuit is open (the last failures reached the threshold).
    pub(crate) fn open(&self) -> bool {
        self.failures >= UPSTREAM_BREAKER_FAILURES
    }

    /// Whether any attempt has ended yet (success or failure).
    pub(crate) fn tried(&self) -> bool {
        self.attempts > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_failures_open_the_circuit_with_doubling_backoff_then_failed() {
        let mut breaker = Breaker::default();
        assert_eq!(breaker.failure(), Verdict::Tolerated);
        assert_eq!(breaker.failure(), Verdict::Tolerated);
        let mut delays = Vec::new();
        loop {
            match breaker.failure() {
                Verdict::RetryAfter(d) => delays.push(d.as_secs()),
                Verdict::Failed => break,
                Verdict::Tolerated => panic!("tolerated after the threshold"),
            }
        }
        assert_eq!(delays, vec![1, 2, 4, 8, 16]);
        assert!(breaker.open());
        breaker.success();
        assert!(!breaker.open());
        assert_eq!(breaker.failure(), Verdict::Tolerated);
    }

    #[test]
    fn backoff_is_capped() {
        let mut breaker = Breaker { failures: 10, retries: 0, attempts: 0 };
        let mut last = Duration::ZERO;
        for _ in 0..UPSTREAM_MAX_RETRIES {
            if let Verdict::RetryAfter(d) = breaker.failure() {
                last = d;
            }
        }
        assert!(last <= UPSTREAM_BACKOFF_MAX);
    }
}
