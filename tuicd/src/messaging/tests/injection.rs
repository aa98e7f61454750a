use super::*;
use uuid::Uuid;

fn peer(ts: u64) -> AgentMessage {
    AgentMessage {
        id: ts.to_string(),
        from_tuic_session: Uuid::nil(),
        from_name: "w".into(),
        content: "hi".into(),
        timestamp: ts,
    }
}

#[test]
fn a_message_is_framed_as_one_line_without_control_characters() {
    let line = frame_for_terminal("worker-1", "done\nwith auth\r\x1b[2J module");
    assert_eq!(line, "[TUIC message from worker-1] done with auth  [2J module");
    assert!(!line.chars().any(char::is_control));
}

#[test]
fn a_body_over_2_kb_injects_a_pointer_to_the_inbox() {
    let at_limit = "a".repeat(INJECT_INLINE_MAX_BYTES);
    assert!(frame_for_terminal("w", &at_limit).ends_with(&at_limit));
    let over = "a".repeat(INJECT_INLINE_MAX_BYTES + 1);
    assert_eq!(frame_for_terminal("w", &over), "[TUIC] new message from w \u{2014} read it with: agent action=inbox");
}

#[test]
fn one_entry_per_idle_transition_in_one_fifo_with_user_commands() {
    let mut queue = InjectionQueue::new();
    queue.push_command("ls".into());
    queue.push_peer(peer(1));
    queue.push_command("pwd".into());
    assert_eq!(queue.on_idle(true), Some(QueueEntry::Command("ls".into())));
    assert_eq!(queue.on_idle(true), None, "at most one per idle transition");
    queue.on_busy();
    assert_eq!(queue.on_idle(false), None, "a draft in the composer keeps it queued");
    assert_eq!(queue.on_idle(true), Some(QueueEntry::Peer(peer(1))));
    queue.on_busy();
    assert_eq!(queue.on_idle(true), Some(QueueEntry::Command("pwd".into())));
}

#[test]
fn clearing_commands_keeps_peer_messages_in_order_and_observed_mail_is_dropped() {
    let mut queue = InjectionQueue::new();
    queue.push_peer(peer(1));
    queue.push_command("a".into());
    queue.push_peer(peer(2));
    queue.push_peer(peer(3));
    assert_eq!(queue.command_count(), 1);
    queue.clear_commands();
    assert_eq!(queue.command_count(), 0);
    queue.discard_observed(2);
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.on_idle(true), Some(QueueEntry::Peer(peer(3))));
}

#[test]
fn the_queue_is_bounded_and_drops_peer_entries_first() {
    let mut queue = InjectionQueue::new();
    queue.push_command("keep".into());
    for ts in 0..INJECTION_QUEUE_CAPACITY as u64 + 5 {
        queue.push_peer(peer(ts));
    }
    assert_eq!(queue.len(), INJECTION_QUEUE_CAPACITY);
    assert_eq!(queue.on_idle(true), Some(QueueEntry::Command("keep".into())));
}
