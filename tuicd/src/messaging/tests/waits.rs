use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};
use std::time::Duration;

use super::support::{external, hub, managed, t};
use crate::messaging::wait::effective_wait;
use crate::messaging::{AgentKind, DeliveryPath, InboxQuery, Lifecycle};

#[test]
fn wait_defaults_to_60_s_and_a_request_at_the_cap_runs_295_s() {
    assert_eq!(effective_wait(None), Duration::from_secs(60));
    assert_eq!(effective_wait(Some(1_500)), Duration::from_millis(1_500));
    assert_eq!(effective_wait(Some(299_999)), Duration::from_millis(295_000));
    assert_eq!(effective_wait(Some(300_000)), Duration::from_millis(295_000));
    assert_eq!(effective_wait(Some(u64::MAX)), Duration::from_millis(295_000));
}

#[tokio::test]
async fn a_timed_out_wait_still_reports_next_since() {
    let (m, _, world) = hub();
    let to = external(&m, &world, "r", "r").to_string();
    external(&m, &world, "s", "s");
    m.send(&t("s"), &to, "old".into(), &world).unwrap();
    let read = m.inbox(&t("r"), InboxQuery::default()).unwrap().next_since;
    let outcome = m.wait(&t("r"), None, Some(10)).await.unwrap();
    assert!(outcome.timed_out && !outcome.met);
    assert_eq!(outcome.new_messages, 0);
    assert_eq!(outcome.next_since, read, "not 0: a timed-out waiter resumes where it was");
}

#[tokio::test]
async fn a_wait_sleeps_until_mail_arrives_and_owns_its_wake_up() {
    let (m, _, world) = hub();
    let worker = managed(&m, &world, "w", 1, AgentKind::Other, Lifecycle::Idle);
    external(&m, &world, "s", "s");
    let w = t("w");
    let mut wait = pin!(m.wait(&w, None, Some(60_000)));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(wait.as_mut().poll(&mut cx).is_pending(), "subscribed and sleeping");
    let sent = m.send(&t("s"), &worker.to_string(), "hi".into(), &world).unwrap();
    assert_eq!(sent.delivery_path, DeliveryPath::Waiter, "an idle terminal is not typed into while a wait is active");
    let outcome = wait.await.unwrap();
    assert!(outcome.met);
    assert_eq!(outcome.messages[0].content, "hi");
    assert_eq!(outcome.next_since, sent.timestamp);
    assert!(m.take_deliveries(worker, &world).payloads.is_empty(), "no duplicate terminal turn");
    assert!(m.inbox(&t("w"), InboxQuery::default()).unwrap().messages.is_empty(), "the wait acknowledged it");
}

#[tokio::test]
async fn a_cancelled_wait_hands_its_mail_back_to_terminal_delivery() {
    let (m, _, world) = hub();
    let worker = managed(&m, &world, "w", 1, AgentKind::Other, Lifecycle::Idle);
    external(&m, &world, "s", "s");
    {
        let w = t("w");
        let mut wait = Box::pin(m.wait(&w, None, Some(60_000)));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(wait.as_mut().poll(&mut cx).is_pending());
        let sent = m.send(&t("s"), &worker.to_string(), "hi".into(), &world).unwrap();
        assert_eq!(sent.delivery_path, DeliveryPath::Waiter);
        assert!(m.take_deliveries(worker, &world).payloads.is_empty(), "the waiter owns it while it lives");
    } // the client cancelled: the future is dropped unobserved
    assert_eq!(m.pending_deliveries(), vec![worker]);
    let handed = m.take_deliveries(worker, &world).payloads;
    assert_eq!(handed.len(), 1, "handed back, not stranded");
    let later = m.send(&t("s"), &worker.to_string(), "next".into(), &world).unwrap();
    assert_eq!(later.delivery_path, DeliveryPath::TerminalOrQueued, "the lease was released");
}

#[tokio::test]
async fn a_wait_with_since_zero_replays_without_rewinding() {
    let (m, _, world) = hub();
    let to = external(&m, &world, "r", "r").to_string();
    external(&m, &world, "s", "s");
    m.send(&t("s"), &to, "a".into(), &world).unwrap();
    assert_eq!(m.wait(&t("r"), None, Some(1)).await.unwrap().new_messages, 1);
    let replay = m.wait(&t("r"), Some(0), Some(1)).await.unwrap();
    assert_eq!(replay.new_messages, 1, "since=0 replays");
    assert!(m.wait(&t("r"), None, Some(1)).await.unwrap().timed_out, "the stored cursor did not rewind");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sibling_waiters_never_both_return_the_same_message() {
    let (m, _, world) = hub();
    let id = managed(&m, &world, "a", 1, AgentKind::Other, Lifecycle::Working);
    world.set_live(&t("b"), true);
    m.bind_transport(&t("b"), id, &world).unwrap();
    external(&m, &world, "s", "s");
    let (wa, wb) = (m.clone(), m.clone());
    let a = tokio::spawn(async move { wa.wait(&t("a"), None, Some(200)).await.unwrap() });
    let b = tokio::spawn(async move { wb.wait(&t("b"), None, Some(200)).await.unwrap() });
    tokio::task::yield_now().await;
    m.send(&t("s"), &id.to_string(), "once".into(), &world).unwrap();
    let (a, b) = (a.await.unwrap(), b.await.unwrap());
    assert_eq!(a.new_messages + b.new_messages, 1, "a: {a:?} b: {b:?}");
}

/// A message sent right at the deadline is returned by the wait or owned by the terminal route,
/// never both and never neither. Repeated so the send lands on both sides of the boundary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_timing_out_at_the_boundary_never_misses_nor_duplicates_a_message() {
    let (m, _, world) = hub();
    let worker = managed(&m, &world, "w", 1, AgentKind::Other, Lifecycle::Idle);
    external(&m, &world, "s", "s");
    let (mut by_wait, mut by_terminal) = (0, 0);
    for round in 0..200u64 {
        let waiter = m.clone();
        let wait = tokio::spawn(async move { waiter.wait(&t("w"), None, Some(2)).await.unwrap() });
        // Spin until roughly the deadline, varying the offset so both orders occur.
        let until = tokio::time::Instant::now() + Duration::from_micros(1_500 + (round % 10) * 100);
        while tokio::time::Instant::now() < until {
            tokio::task::yield_now().await;
        }
        let sent = m.send(&t("s"), &worker.to_string(), format!("r{round}"), &world).unwrap();
        let outcome = wait.await.unwrap();
        let waited = outcome.messages.iter().any(|msg| msg.id == sent.message_id);
        let typed = m.take_deliveries(worker, &world).payloads.iter().any(|msg| msg.id == sent.message_id);
        assert!(waited ^ typed, "round {round}: waited={waited} typed={typed} path={:?}", sent.delivery_path);
        if waited {
            by_wait += 1
        } else {
            by_terminal += 1
        }
        m.inbox(&t("w"), InboxQuery::default()).unwrap();
    }
    assert_eq!(by_wait + by_terminal, 200);
    eprintln!("boundary rounds: {by_wait} returned by the wait, {by_terminal} handed to the terminal route");
}

/// Three children finishing within milliseconds: the wait that wakes on the first mail answers
/// with all three, not one per call.
#[tokio::test]
async fn a_burst_of_mail_comes_back_in_one_wait() {
    let (m, _, world) = hub();
    let to = external(&m, &world, "r", "r").to_string();
    external(&m, &world, "s", "s");
    let r = t("r");
    let mut wait = pin!(m.wait(&r, None, Some(60_000)));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(wait.as_mut().poll(&mut cx).is_pending(), "subscribed and sleeping");
    m.send(&t("s"), &to, "first".into(), &world).unwrap();
    assert!(wait.as_mut().poll(&mut cx).is_pending(), "woken by the first, gathering the burst");
    m.send(&t("s"), &to, "second".into(), &world).unwrap();
    m.send(&t("s"), &to, "third".into(), &world).unwrap();
    let outcome = wait.await.unwrap();
    let contents: Vec<&str> = outcome.messages.iter().map(|msg| msg.content.as_str()).collect();
    assert_eq!(contents, ["first", "second", "third"]);
    assert_eq!(outcome.new_messages, 3);
}
