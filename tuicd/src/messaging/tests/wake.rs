use super::*;
use crate::messaging::types::{AgentMessage, LIFECYCLE_ID_PREFIX};
use uuid::Uuid;

fn peer(ts: u64) -> AgentMessage {
    AgentMessage {
        id: Uuid::new_v4().to_string(),
        from_tuic_session: Uuid::nil(),
        from_name: "worker".into(),
        content: "SECRET payload".into(),
        timestamp: ts,
    }
}

fn lifecycle(ts: u64, child: &str, state: &str, exit: Option<i32>) -> AgentMessage {
    let mut body = serde_json::json!({"type": "state_change", "state": state, "session_id": child});
    if let Some(code) = exit {
        body["exit_code"] = code.into();
    }
    AgentMessage {
        id: format!("{LIFECYCLE_ID_PREFIX}{}", Uuid::new_v4()),
        from_tuic_session: Uuid::nil(),
        from_name: "tuic".into(),
        content: body.to_string(),
        timestamp: ts,
    }
}

const CHILD: &str = "8c261794-0000-4000-8000-000000000000";

#[test]
fn a_generic_notice_carries_no_payload() {
    let mut wake = WakeState::default();
    wake.on_mail(1);
    let notice = wake.claim(0, true, &[peer(1)]).unwrap();
    assert_eq!(notice.text, ORCHESTRATOR_WAKE_TEXT);
    assert!(!notice.text.contains("SECRET"));
    assert_eq!(notice.acknowledges_through, None);
}

#[test]
fn an_all_lifecycle_window_is_summarised_and_acknowledged() {
    let window = [lifecycle(1, CHILD, "idle", None), lifecycle(2, CHILD, "exited", Some(0))];
    let mut wake = WakeState::default();
    wake.on_mail(2);
    let notice = wake.claim(0, true, &window).unwrap();
    assert_eq!(notice.text, "[TUIC] child agent 8c261794 is now idle; child agent 8c261794 exited (exit 0)");
    assert_eq!(notice.acknowledges_through, Some(2));
    assert_eq!(wake.report(0, notice.attempt, WakeResult::Confirmed), ReportEffect::Acknowledge(2));
    assert_eq!(wake.state(0), WakeGroupState::Open);
    assert_eq!(wake.window_through(), None);
}

#[test]
fn one_peer_message_in_the_window_falls_back_to_the_generic_notice() {
    let window = [lifecycle(1, CHILD, "idle", None), peer(2), lifecycle(3, CHILD, "completed", None)];
    assert_eq!(lifecycle_summary(&window), None);
    let mut wake = WakeState::default();
    wake.on_mail(3);
    assert_eq!(wake.claim(0, true, &window).unwrap().text, ORCHESTRATOR_WAKE_TEXT);
}

#[test]
fn a_summary_over_240_characters_falls_back() {
    let window: Vec<_> = (1..=8).map(|i| lifecycle(i, CHILD, "completed", None)).collect();
    let joined = lifecycle_summary(&window[..2]).unwrap();
    assert!(joined.chars().count() <= 240);
    assert_eq!(lifecycle_summary(&window), None, "8 phrases exceed 240 chars");
}

#[test]
fn mail_coalescing_while_a_summary_is_typed_earns_its_own_notice() {
    let mut wake = WakeState::default();
    wake.on_mail(1);
    let notice = wake.claim(0, true, &[lifecycle(1, CHILD, "idle", None)]).unwrap();
    wake.on_mail(2);
    assert_eq!(wake.state(0), WakeGroupState::Pending, "a notice in flight covers new mail");
    assert_eq!(wake.report(0, notice.attempt, WakeResult::Confirmed), ReportEffect::Acknowledge(1));
    assert_eq!(wake.state(0), WakeGroupState::Open);
    let next = wake.claim(0, true, &[peer(2)]).unwrap();
    assert_eq!(next.text, ORCHESTRATOR_WAKE_TEXT);
}

#[test]
fn a_confirmed_generic_notice_covers_later_mail_until_acknowledged() {
    let mut wake = WakeState::default();
    wake.on_mail(1);
    let notice = wake.claim(0, true, &[peer(1)]).unwrap();
    assert_eq!(wake.report(0, notice.attempt, WakeResult::Confirmed), ReportEffect::None);
    wake.on_mail(2);
    assert_eq!(wake.state(0), WakeGroupState::Pending);
    assert_eq!(wake.claim(0, true, &[peer(1), peer(2)]), None, "one pending wake covers later mail");
    wake.acknowledge(1);
    assert_eq!(wake.state(0), WakeGroupState::Open, "mail past the acknowledged cursor opens a new group");
    assert!(wake.claim(0, true, &[peer(2)]).is_some());
    wake.acknowledge(2);
    assert_eq!(wake.window_through(), None);
}

#[test]
fn an_uncertain_notice_expires_after_five_seconds_and_is_retried_once() {
    let mut wake = WakeState::default();
    wake.on_mail(1);
    let first = wake.claim(1_000, true, &[peer(1)]).unwrap();
    wake.report(1_000, first.attempt, WakeResult::Uncertain);
    assert_eq!(wake.claim(5_999, true, &[peer(1)]), None, "still in flight before 5 s");
    let second = wake.claim(6_000, true, &[peer(1)]).expect("one retry after expiry");
    wake.report(6_000, second.attempt, WakeResult::Uncertain);
    assert_eq!(wake.state(11_000), WakeGroupState::Exhausted, "a second uncertain result spends the budget");
    assert_eq!(wake.claim(11_000, true, &[peer(1)]), None);
    wake.on_mail(2);
    assert_eq!(wake.claim(12_000, true, &[peer(1), peer(2)]), None, "new mail stays inbox-only");
    wake.busy_to_idle_edge();
    assert!(wake.claim(13_000, true, &[peer(1), peer(2)]).is_some(), "a new busy-to-idle edge re-arms");
}

#[test]
fn an_unstarted_attempt_exhausts_the_budget_without_a_retry_loop() {
    let mut wake = WakeState::default();
    wake.on_mail(1);
    let notice = wake.claim(0, true, &[peer(1)]).unwrap();
    wake.report(0, notice.attempt, WakeResult::NotStarted);
    assert_eq!(wake.state(60_000), WakeGroupState::Exhausted);
    assert_eq!(wake.claim(60_000, true, &[peer(1)]), None);
    wake.busy_to_idle_edge();
    assert!(wake.claim(60_000, true, &[peer(1)]).is_some());
}

#[test]
fn the_re_arm_cannot_take_a_notice_already_in_flight() {
    let mut wake = WakeState::default();
    wake.on_mail(1);
    let notice = wake.claim(0, true, &[peer(1)]).unwrap();
    wake.busy_to_idle_edge();
    assert_eq!(wake.claim(0, true, &[peer(1)]), None, "the in-flight attempt keeps its slot");
    wake.report(0, notice.attempt, WakeResult::Uncertain);
    let retry = wake.claim(5_000, true, &[peer(1)]).unwrap();
    wake.report(5_000, retry.attempt, WakeResult::Uncertain);
    assert_eq!(
        wake.state(10_000),
        WakeGroupState::Exhausted,
        "the in-flight attempt counted against the re-armed budget"
    );
}

#[test]
fn no_notice_while_not_ready_and_stale_reports_change_nothing() {
    let mut wake = WakeState::default();
    wake.on_mail(1);
    assert_eq!(wake.claim(0, false, &[peer(1)]), None, "working / awaiting input fail closed");
    let notice = wake.claim(0, true, &[peer(1)]).unwrap();
    assert_eq!(wake.report(0, notice.attempt + 7, WakeResult::NotStarted), ReportEffect::None);
    assert_eq!(wake.state(0), WakeGroupState::Pending);
}
