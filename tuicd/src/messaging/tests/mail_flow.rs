use super::support::{external, hub, managed, t};
use crate::limits::MAX_MESSAGE_BYTES;
use crate::messaging::wake::ORCHESTRATOR_WAKE_TEXT;
use crate::messaging::{
    AgentKind, ChildState, DeliveryPath, InboxQuery, Lifecycle, MessagingError, RegisterRequest, WakeResult,
};

#[test]
fn send_accepts_the_three_address_forms() {
    let (m, _, world) = hub();
    let worker = managed(&m, &world, "w", 4, AgentKind::Other, Lifecycle::Working);
    external(&m, &world, "s", "sender");
    for to in [worker.to_string(), "pty-4".to_string(), "tu-4".to_string()] {
        let sent = m.send(&t("s"), &to, format!("via {to}"), &world).unwrap();
        assert_eq!(sent.recipient, worker);
    }
    assert_eq!(m.inbox(&t("w"), InboxQuery::default()).unwrap().messages.len(), 3);
}

#[test]
fn send_refuses_oversized_empty_unknown_and_unregistered() {
    let (m, _, world) = hub();
    let to = external(&m, &world, "r", "r").to_string();
    external(&m, &world, "s", "s");
    assert!(m.send(&t("s"), &to, "a".repeat(MAX_MESSAGE_BYTES), &world).is_ok(), "exactly 64 KB is accepted");
    let err = m.send(&t("s"), &to, "a".repeat(MAX_MESSAGE_BYTES + 1), &world).unwrap_err();
    assert_eq!(err, MessagingError::MessageTooLarge { size: MAX_MESSAGE_BYTES + 1, limit: MAX_MESSAGE_BYTES });
    assert!(err.to_string().contains("65537 bytes; the limit is 65536 bytes"));
    assert_eq!(m.send(&t("s"), &to, "  ".into(), &world), Err(MessagingError::EmptyMessage));
    assert_eq!(m.send(&t("s"), "nobody", "x".into(), &world), Err(MessagingError::UnknownRecipient("nobody".into())));
    assert_eq!(m.send(&t("stranger"), &to, "x".into(), &world), Err(MessagingError::NotRegistered));
    assert_eq!(m.inbox(&t("r"), InboxQuery::default()).unwrap().messages.len(), 1, "refusals stored nothing");
}

#[test]
fn since_is_optional_explicit_since_overrides_and_since_zero_replays_without_rewinding() {
    let (m, clock, world) = hub();
    let to = external(&m, &world, "r", "r").to_string();
    external(&m, &world, "s", "s");
    for i in 0..3 {
        m.send(&t("s"), &to, format!("m{i}"), &world).unwrap(); // one clock millisecond: a burst
    }
    let first = m.inbox(&t("r"), InboxQuery::default()).unwrap();
    assert_eq!(first.messages.len(), 3);
    assert_eq!(first.next_since, first.messages[2].timestamp);
    let empty = m.inbox(&t("r"), InboxQuery::default()).unwrap();
    assert!(empty.messages.is_empty());
    assert_eq!(empty.next_since, first.next_since, "next_since on an empty answer is the stored position");
    let replay = m.inbox(&t("r"), InboxQuery { since: Some(0), limit: None }).unwrap();
    assert_eq!(replay.messages.len(), 3);
    clock.advance_ms(5);
    m.send(&t("s"), &to, "m3".into(), &world).unwrap();
    let resumed = m.inbox(&t("r"), InboxQuery::default()).unwrap();
    assert_eq!(resumed.messages.len(), 1, "the replay did not rewind the stored cursor");
    assert_eq!(resumed.messages[0].content, "m3");
    let explicit = m.inbox(&t("r"), InboxQuery { since: Some(first.messages[0].timestamp), limit: Some(2) }).unwrap();
    let contents: Vec<_> = explicit.messages.iter().map(|x| x.content.as_str()).collect();
    assert_eq!(contents, ["m1", "m2"], "explicit since overrides, limit pages");
    assert_eq!(m.inbox(&t("r"), InboxQuery::default()).unwrap().messages.len(), 0, "still nothing new");
}

#[test]
fn fifo_eviction_is_reported_once_as_missed_count() {
    let (m, _, world) = hub();
    let to = external(&m, &world, "r", "r").to_string();
    external(&m, &world, "s", "s");
    for i in 0..105 {
        m.send(&t("s"), &to, format!("m{i}"), &world).unwrap();
    }
    let page = m.inbox(&t("r"), InboxQuery { since: None, limit: Some(100) }).unwrap();
    assert_eq!(page.missed_count, Some(5));
    assert_eq!(page.messages[0].content, "m5");
    assert_eq!(m.inbox(&t("r"), InboxQuery::default()).unwrap().missed_count, None);
}

#[test]
fn ordinary_recipients_route_by_agent_and_lifecycle() {
    let (m, _, world) = hub();
    external(&m, &world, "s", "s");
    let idle = managed(&m, &world, "i", 1, AgentKind::Other, Lifecycle::Idle);
    let working_cc = managed(&m, &world, "c", 2, AgentKind::ClaudeCode, Lifecycle::Working);
    world.set_facts(working_cc, |f| f.channel_stream = true);
    let gone = managed(&m, &world, "g", 3, AgentKind::Other, Lifecycle::Idle);
    world.kill_pty(gone);
    let ext = external(&m, &world, "e", "e");
    let path = |to: uuid::Uuid| m.send(&t("s"), &to.to_string(), "x".into(), &world).unwrap().delivery_path;
    assert_eq!(path(idle), DeliveryPath::TerminalOrQueued);
    assert_eq!(path(working_cc), DeliveryPath::SseChannel);
    assert_eq!(path(gone), DeliveryPath::InboxOnly);
    assert_eq!(path(ext), DeliveryPath::InboxOnly);
    let mut pending = m.pending_deliveries();
    pending.sort();
    let mut expected = vec![idle, working_cc];
    expected.sort();
    assert_eq!(pending, expected);
    assert_eq!(m.take_deliveries(idle, &world).payloads.len(), 1);
    assert!(m.take_deliveries(idle, &world).payloads.is_empty(), "taken exactly once");
}

#[test]
fn an_orchestrator_is_never_typed_into() {
    let (m, _, world) = hub();
    external(&m, &world, "s", "worker-1");
    let lead = managed(&m, &world, "lead", 1, AgentKind::ClaudeCode, Lifecycle::Idle);
    world.set_facts(lead, |f| f.channel_stream = true);
    m.register(&t("lead"), RegisterRequest { orchestrator: Some(true), ..Default::default() }, &world).unwrap();
    let first = m.send(&t("s"), &lead.to_string(), "SECRET result".into(), &world).unwrap();
    assert_eq!(first.delivery_path, DeliveryPath::WakeNotification);
    assert_eq!(m.pending_deliveries(), vec![lead]);
    let taken = m.take_deliveries(lead, &world);
    assert!(taken.payloads.is_empty(), "no payload reaches its terminal or channel");
    assert!(taken.wake_pending, "the delivery loop is told to claim a notice instead");
    let notice = m.claim_wake(lead, &world).unwrap();
    assert_eq!(notice.text, ORCHESTRATOR_WAKE_TEXT);
    let second = m.send(&t("s"), &lead.to_string(), "SECRET 2".into(), &world).unwrap();
    assert_eq!(second.delivery_path, DeliveryPath::CoalescedWake);
    m.report_wake(lead, notice.attempt, WakeResult::Confirmed);
    assert_eq!(m.claim_wake(lead, &world), None, "one notice covers the unread group");
    assert_eq!(m.inbox(&t("lead"), InboxQuery::default()).unwrap().messages.len(), 2);
    world.set_facts(lead, |f| f.lifecycle = Lifecycle::Working);
    let busy = m.send(&t("s"), &lead.to_string(), "while busy".into(), &world).unwrap();
    assert_eq!(busy.delivery_path, DeliveryPath::InboxOnly, "a busy orchestrator is never queued or steered");
    assert_eq!(m.claim_wake(lead, &world), None);
    world.set_facts(lead, |f| f.lifecycle = Lifecycle::Idle);
    m.busy_to_idle_edge(lead);
    assert_eq!(m.claim_wake(lead, &world).unwrap().text, ORCHESTRATOR_WAKE_TEXT, "re-evaluated at the next idle");
}

#[test]
fn a_lifecycle_summary_falls_back_when_a_peer_message_is_in_the_window() {
    let (m, _, world) = hub();
    let lead = managed(&m, &world, "lead", 1, AgentKind::Other, Lifecycle::Working);
    m.register(&t("lead"), RegisterRequest { orchestrator: Some(true), ..Default::default() }, &world).unwrap();
    let child = uuid::Uuid::new_v4();
    m.record_spawn(Some(&t("lead")), child, Some("child".into()));
    world.add_pty(child, 2, AgentKind::Other, Lifecycle::Idle);
    m.child_lifecycle(child, ChildState::Idle, &world).unwrap();
    world.set_facts(lead, |f| f.lifecycle = Lifecycle::Idle);
    let summary = m.claim_wake(lead, &world).unwrap();
    let short = &child.to_string()[..8];
    assert_eq!(summary.text, format!("[TUIC] child agent {short} is now idle"));
    m.report_wake(lead, summary.attempt, WakeResult::Confirmed);
    assert!(
        m.inbox(&t("lead"), InboxQuery::default()).unwrap().messages.is_empty(),
        "the summary acknowledged its window"
    );

    // Next window: lifecycle mail plus one peer message -> the generic notice.
    world.set_facts(lead, |f| f.lifecycle = Lifecycle::Working);
    let summarised = m.child_lifecycle(child, ChildState::Exited { exit_code: Some(0) }, &world).unwrap();
    assert_eq!(summarised.delivery_path, DeliveryPath::InboxOnly, "working fails closed");
    external(&m, &world, "peer", "peer");
    m.send(&t("peer"), &lead.to_string(), "peer text".into(), &world).unwrap();
    world.set_facts(lead, |f| f.lifecycle = Lifecycle::Completed);
    let notice = m.claim_wake(lead, &world).unwrap();
    assert_eq!(notice.text, ORCHESTRATOR_WAKE_TEXT);
    assert_eq!(notice.acknowledges_through, None);
    m.report_wake(lead, notice.attempt, WakeResult::Confirmed);
    assert_eq!(m.inbox(&t("lead"), InboxQuery::default()).unwrap().messages.len(), 2, "nothing was buried");
}

#[test]
fn the_send_response_serialises_with_wire_names() {
    let (m, _, world) = hub();
    let to = external(&m, &world, "r", "r").to_string();
    external(&m, &world, "s", "s");
    let json = serde_json::to_value(m.send(&t("s"), &to, "x".into(), &world).unwrap()).unwrap();
    assert_eq!(json["delivery_path"], "inbox_only");
    assert_eq!(json["delivered"], false);
}

#[test]
fn an_uncertain_orchestrator_notice_expires_on_the_injected_clock_and_is_retried_once() {
    let (m, clock, world) = hub();
    external(&m, &world, "s", "s");
    let lead = managed(&m, &world, "lead", 1, AgentKind::Other, Lifecycle::Idle);
    m.register(&t("lead"), RegisterRequest { orchestrator: Some(true), ..Default::default() }, &world).unwrap();
    m.send(&t("s"), &lead.to_string(), "x".into(), &world).unwrap();
    let first = m.claim_wake(lead, &world).unwrap();
    m.report_wake(lead, first.attempt, WakeResult::Uncertain);
    clock.advance_ms(4_999);
    assert_eq!(m.claim_wake(lead, &world), None);
    assert_eq!(
        m.send(&t("s"), &lead.to_string(), "y".into(), &world).unwrap().delivery_path,
        DeliveryPath::CoalescedWake
    );
    clock.advance_ms(1);
    let retry = m.claim_wake(lead, &world).expect("expired after 5 s: one retry");
    m.report_wake(lead, retry.attempt, WakeResult::Uncertain);
    clock.advance_ms(5_000);
    assert_eq!(m.claim_wake(lead, &world), None, "budget exhausted");
    assert_eq!(m.send(&t("s"), &lead.to_string(), "z".into(), &world).unwrap().delivery_path, DeliveryPath::InboxOnly);
    m.busy_to_idle_edge(lead);
    assert!(m.claim_wake(lead, &world).is_some(), "re-armed by a new busy-to-idle edge");
    let page = m.inbox(&t("lead"), InboxQuery::default()).unwrap();
    assert_eq!(page.messages.len(), 3, "every message still in the authoritative inbox");
}
