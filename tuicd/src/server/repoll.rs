//! Serves a connection future that wakes itself without a trip through the scheduler.
//!
//! hyper's HTTP/1 dispatcher hands a request body to the handler through a channel whose sender
//! keeps the connection task's waker; when the handler takes the body, the channel wakes that
//! waker, which is the task being polled right now. Tokio answers a wake during a poll by
//! re-queueing the task after the poll and unparking an idle worker to take it: a futex wake, a
//! thread that spins up to find nothing, and another poll from the back of the queue, on every
//! request with a body (two futex calls per `POST /mcp`, none per `GET /health`).
//!
//! [`Repoll`] gives the inner future its own waker. A wake that arrives while the inner future is
//! being polled is remembered and answered by polling it again at once (at most
//! [`CONNECTION_INLINE_REPOLLS`] times per poll, then it yields to the scheduler as before); a
//! wake at any other time goes to the task's waker unchanged.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

use crate::limits::CONNECTION_INLINE_REPOLLS;

/// Not being polled: a wake goes to the task.
const IDLE: u8 = 0;
/// Being polled: a wake is remembered.
const POLLING: u8 = 1;
/// Being polled, and woken since the poll began: poll again.
const WOKEN: u8 = 2;

struct Relay {
    state: AtomicU8,
    task: AtomicWaker,
}

impl Wake for Relay {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        match self.state.compare_exchange(POLLING, WOKEN, Ordering::AcqRel, Ordering::Acquire) {
            // Remembered: the poll loop polls again after the current poll returns.
            Ok(_) | Err(WOKEN) => {}
            // Not inside a poll (or the loop just finished): the task must run again.
            Err(_) => self.task.wake(),
        }
    }
}

/// A future polled with its own waker; see the module documentation.
pub(super) struct Repoll<F> {
    inner: F,
    relay: Arc<Relay>,
    waker: Waker,
}

impl<F> Repoll<F> {
    pub(super) fn new(inner: F) -> Self {
        let relay = Arc::new(Relay { state: AtomicU8::new(IDLE), task: AtomicWaker::new() });
        let waker = Waker::from(relay.clone());
        Self { inner, relay, waker }
    }
}

impl<F: Future + Unpin> Future for Repoll<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        this.relay.task.register(cx.waker());
        let mut inner_cx = Context::from_waker(&this.waker);
        for _ in 0..CONNECTION_INLINE_REPOLLS {
            this.relay.state.store(POLLING, Ordering::Release);
            if let Poll::Ready(output) = Pin::new(&mut this.inner).poll(&mut inner_cx) {
                this.relay.state.store(IDLE, Ordering::Release);
                return Poll::Ready(output);
            }
            if this.relay.state.compare_exchange(POLLING, IDLE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return Poll::Pending;
            }
        }
        // Still waking itself: let the scheduler run other tasks first.
        this.relay.state.store(IDLE, Ordering::Release);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts the wakes that reach the task.
    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Wakes itself `self_wakes` times while being polled, then is ready.
    struct SelfWaking {
        self_wakes: usize,
        polls: usize,
    }

    impl Future for SelfWaking {
        type Output = usize;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            self.polls += 1;
            if self.polls > self.self_wakes {
                return Poll::Ready(self.polls);
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[test]
    fn a_wake_during_the_poll_polls_again_without_waking_the_task() {
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        let waker = Waker::from(counter.clone());
        let mut cx = Context::from_waker(&waker);
        let mut future = Repoll::new(SelfWaking { self_wakes: 3, polls: 0 });
        assert_eq!(Pin::new(&mut future).poll(&mut cx), Poll::Ready(4));
        assert_eq!(counter.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn endless_self_wakes_yield_to_the_scheduler() {
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        let waker = Waker::from(counter.clone());
        let mut cx = Context::from_waker(&waker);
        let mut future = Repoll::new(SelfWaking { self_wakes: usize::MAX, polls: 0 });
        assert_eq!(Pin::new(&mut future).poll(&mut cx), Poll::Pending);
        assert_eq!(future.inner.polls, CONNECTION_INLINE_REPOLLS);
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_wake_between_polls_reaches_the_task() {
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        let waker = Waker::from(counter.clone());
        let mut cx = Context::from_waker(&waker);
        let mut future = Repoll::new(std::future::pending::<()>());
        assert_eq!(Pin::new(&mut future).poll(&mut cx), Poll::Pending);
        future.waker.wake_by_ref();
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
    }
}
