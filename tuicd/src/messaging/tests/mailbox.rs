use super::*;
use crate::messaging::types::LIFECYCLE_ID_PREFIX;
use uuid::Uuid;

fn message(lifecycle: bool) -> AgentMessage {
    let id = if lifecycle { format!("{LIFECYCLE_ID_PREFIX}{}", Uuid::new_v4()) } else { Uuid::new_v4().to_string() };
    AgentMessage { id, from_tuic_session: Uuid::nil(), from_name: "p".into(), content: "x".into(), timestamp: 0 }
}

#[test]
fn an_equal_millisecond_burst_gets_strictly_increasing_cursors() {
    let mut mailbox = Mailbox::default();
    let cursors: Vec<u64> = (0..50).map(|_| mailbox.push(message(false), WakeOwner::InboxOnly, 1_000)).collect();
    assert!(cursors.windows(2).all(|w| w[1] == w[0] + 1), "{cursors:?}");
    assert_eq!(cursors[0], 1_000);
    assert_eq!(mailbox.push(message(false), WakeOwner::InboxOnly, 900), 1_050, "a clock step back never rewinds");
    assert_eq!(mailbox.push(message(false), WakeOwner::InboxOnly, 5_000), 5_000);
}

#[test]
fn a_full_inbox_evicts_the_oldest_peer_message_and_keeps_lifecycle_mail() {
    let mut mailbox = Mailbox::default();
    let first_lifecycle = mailbox.push(message(true), WakeOwner::InboxOnly, 1);
    for _ in 0..INBOX_CAPACITY - 1 {
        mailbox.push(message(false), WakeOwner::InboxOnly, 1);
    }
    assert_eq!(mailbox.len(), INBOX_CAPACITY);
    for _ in 0..10 {
        mailbox.push(message(false), WakeOwner::InboxOnly, 1);
    }
    assert_eq!(mailbox.len(), INBOX_CAPACITY);
    assert_eq!(mailbox.after(0, 1)[0].timestamp, first_lifecycle, "lifecycle mail survived eviction");
    assert_eq!(mailbox.take_missed(), 10);
    assert_eq!(mailbox.take_missed(), 0, "reported once");
}

#[test]
fn evicting_already_read_mail_is_not_missed() {
    let mut mailbox = Mailbox::default();
    for _ in 0..INBOX_CAPACITY {
        mailbox.push(message(false), WakeOwner::InboxOnly, 1);
    }
    mailbox.acknowledge(mailbox.last_cursor());
    mailbox.push(message(false), WakeOwner::InboxOnly, 1);
    assert_eq!(mailbox.take_missed(), 0);
}

#[test]
fn next_since_never_passes_the_last_cursor_nor_falls_behind_the_stored_one() {
    let mut mailbox = Mailbox::default();
    mailbox.push(message(false), WakeOwner::InboxOnly, 10);
    mailbox.push(message(false), WakeOwner::InboxOnly, 20);
    mailbox.acknowledge(10);
    assert_eq!(mailbox.next_since(0, &[]), 10, "empty replay falls back to the stored position");
    assert_eq!(mailbox.next_since(1_000_000, &[]), 20, "a future since is clamped to the last cursor");
    mailbox.acknowledge(5);
    assert_eq!(mailbox.read_cursor(), 10, "acknowledging never rewinds");
}

#[test]
fn releasing_the_last_waiter_hands_back_only_unobserved_waiter_mail() {
    let mut mailbox = Mailbox { active_waiters: 2, ..Mailbox::default() };
    let observed = mailbox.push(message(false), WakeOwner::Waiter, 1);
    mailbox.push(message(false), WakeOwner::Waiter, 1);
    mailbox.push(message(false), WakeOwner::InboxOnly, 1);
    mailbox.acknowledge(observed);
    assert_eq!(mailbox.release_waiter(), 0, "another waiter still holds the lease");
    assert_eq!(mailbox.release_waiter(), 1);
    let taken = mailbox.take_terminal();
    assert_eq!(taken.len(), 1);
    assert!(mailbox.take_terminal().is_empty(), "taken once");
}
