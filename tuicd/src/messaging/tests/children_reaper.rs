use uuid::Uuid;

use super::support::{external, hub, managed, t};
use crate::messaging::{AgentKind, ChildState, DeliveryPath, InboxQuery, Lifecycle, RegisterRequest};

#[test]
fn a_registered_caller_becomes_the_parent_and_gets_state_only_lifecycle_mail() {
    let (m, _, world) = hub();
    let parent = external(&m, &world, "lead", "lead");
    let child = Uuid::new_v4();
    let link = m.record_spawn(Some(&t("lead")), child, Some("builder".into()));
    assert_eq!(link.parent_session_id, Some(parent));
    assert_eq!(link.warning, None);
    assert_eq!(m.parent_of(child), Some(parent));
    let instruction = crate::messaging::child_prompt_instruction(parent);
    assert!(instruction.contains(&format!("agent action=send to={parent}")));
    let peers = m.list_peers(None, &world);
    assert!(peers.iter().any(|p| p.tuic_session == child && p.name == "builder"), "registered with an inbox at once");
    let sent = m.child_lifecycle(child, ChildState::Exited { exit_code: Some(2) }, &world).unwrap();
    assert_eq!(sent.delivery_path, DeliveryPath::InboxOnly, "an external parent has no terminal wake");
    let mail = &m.inbox(&t("lead"), InboxQuery::default()).unwrap().messages[0];
    assert!(mail.is_lifecycle() && mail.id.starts_with("tuic-auto-"));
    assert_eq!(mail.from_name, "tuic");
    let body: serde_json::Value = serde_json::from_str(&mail.content).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"type": "state_change", "state": "exited", "session_id": child.to_string(), "exit_code": 2})
    );
}

#[test]
fn lifecycle_mail_is_never_typed_into_an_ordinary_parent() {
    let (m, _, world) = hub();
    let parent = managed(&m, &world, "p", 1, AgentKind::Other, Lifecycle::Idle);
    let child = Uuid::new_v4();
    m.record_spawn(Some(&t("p")), child, None);
    let sent = m.child_lifecycle(child, ChildState::Completed, &world).unwrap();
    assert_eq!(sent.delivery_path, DeliveryPath::LifecycleSummary);
    assert!(m.take_deliveries(parent, &world).payloads.is_empty());
    assert!(m.claim_wake(parent, &world).unwrap().text.ends_with("is now completed"));
}

#[test]
fn a_pending_parent_is_linked_by_its_later_register_and_gets_earlier_lifecycle_mail() {
    let (m, _, world) = hub();
    let child = Uuid::new_v4();
    world.set_live(&t("caller"), true);
    let link = m.record_spawn(Some(&t("caller")), child, None);
    assert_eq!(link.parent_session_id, None);
    assert!(link.warning.unwrap().contains("register"));
    assert_eq!(m.child_lifecycle(child, ChildState::Idle, &world), None, "kept until the parent registers");
    let outcome = m.register(&t("caller"), RegisterRequest::default(), &world).unwrap();
    assert_eq!(outcome.linked_children, 1);
    assert_eq!(m.parent_of(child), Some(outcome.tuic_session));
    let page = m.inbox(&t("caller"), InboxQuery::default()).unwrap();
    assert_eq!(page.messages.len(), 1);
    assert!(page.messages[0].content.contains("\"idle\""));
}

#[test]
fn the_reaper_keeps_identities_that_own_a_live_pty_or_parent_a_live_session() {
    let (m, _, world) = hub();
    let in_pty = managed(&m, &world, "pty-owner", 1, AgentKind::Other, Lifecycle::Working);
    let parent = external(&m, &world, "parent", "lead");
    let child = Uuid::new_v4();
    m.record_spawn(Some(&t("parent")), child, None);
    world.add_pty(child, 2, AgentKind::Other, Lifecycle::Working);
    let gone = external(&m, &world, "gone", "gone");

    let kept_pty = m.reap_transport(&t("pty-owner"), &world);
    assert_eq!(kept_pty.retained, vec![in_pty]);
    let kept_parent = m.reap_transport(&t("parent"), &world);
    assert_eq!(kept_parent.retained, vec![parent]);
    let evicted = m.reap_transport(&t("gone"), &world);
    assert_eq!(evicted.evicted, vec![gone]);

    // The retained parent is still addressable: its child's handoff is not refused.
    world.set_live(&t("child-bridge"), true);
    m.bind_transport(&t("child-bridge"), child, &world).unwrap();
    assert!(m.send(&t("child-bridge"), &parent.to_string(), "result".into(), &world).is_ok());

    // Once the child's PTY is gone, a sweep evicts what nothing can reach any more.
    world.kill_pty(child);
    world.kill_pty(in_pty);
    let swept = m.sweep_unrouted(&world);
    let mut evicted = swept.evicted.clone();
    evicted.sort();
    let mut expected = vec![in_pty, parent];
    expected.sort();
    assert_eq!(evicted, expected);
    assert!(swept.retained.is_empty());
}

#[test]
fn a_spawn_assigned_name_survives_the_child_auto_binding() {
    let (m, _, world) = hub();
    external(&m, &world, "lead", "lead");
    let child = Uuid::new_v4();
    world.add_pty(child, 5, AgentKind::Other, Lifecycle::Starting);
    m.record_spawn(Some(&t("lead")), child, Some("reviewer".into()));
    world.set_live(&t("child"), true);
    let bound = m.bind_transport(&t("child"), child, &world).unwrap();
    assert_eq!(bound.name, "reviewer");
    assert_eq!(bound.attach, crate::messaging::Attach::Bound);
}

#[test]
fn a_caller_without_an_mcp_session_spawns_a_child_with_an_inbox_but_no_parent() {
    let (m, _, world) = hub();
    let child = Uuid::new_v4();
    let link = m.record_spawn(None, child, Some("orphan".into()));
    assert_eq!(link.parent_session_id, None);
    assert!(link.warning.is_some());
    assert_eq!(m.parent_of(child), None);
    assert!(m.list_peers(None, &world).iter().any(|p| p.tuic_session == child && p.name == "orphan"));
    assert_eq!(m.child_lifecycle(child, ChildState::Idle, &world), None, "no parent, nothing stashed");
}
