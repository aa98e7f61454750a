//! The seed's races, run for real on threads.

use std::collections::HashSet;
use std::sync::Barrier;

use uuid::Uuid;

use super::support::{external, hub, t};
use crate::messaging::{AgentKind, InboxQuery, Lifecycle, MessagingError, RegisterRequest};

/// A message aimed at an identity being retired either arrives before the retire (and is carried
/// over) or after it (and is refused); none is buffered under the deleted address, none twice.
#[test]
fn a_send_racing_a_retire_is_carried_over_or_refused_never_stranded() {
    for _ in 0..20 {
        let (m, _, world) = hub();
        let invented = external(&m, &world, "agent", "worker");
        external(&m, &world, "peer", "peer");
        let real = Uuid::new_v4();
        world.add_pty(real, 1, AgentKind::Other, Lifecycle::Working);
        let barrier = Barrier::new(2);
        let (accepted, refused) = std::thread::scope(|scope| {
            let sender = scope.spawn(|| {
                barrier.wait();
                let (mut accepted, mut refused) = (Vec::new(), 0);
                for i in 0..60 {
                    match m.send(&t("peer"), &invented.to_string(), format!("m{i}"), &world) {
                        Ok(sent) => {
                            assert_eq!(refused, 0, "nothing is accepted after the retire");
                            accepted.push(sent.message_id);
                        }
                        Err(MessagingError::UnknownRecipient(_)) => refused += 1,
                        Err(other) => panic!("{other}"),
                    }
                }
                (accepted, refused)
            });
            barrier.wait();
            let repair = RegisterRequest { tuic_session: Some(real), ..Default::default() };
            let outcome = m.register(&t("agent"), repair, &world).unwrap();
            assert_eq!(outcome.superseded_identity, Some(invented));
            sender.join().unwrap()
        });
        assert_eq!(accepted.len() + refused, 60);
        let page = m.inbox(&t("agent"), InboxQuery { since: None, limit: Some(100) }).unwrap();
        let received: Vec<_> = page.messages.iter().map(|msg| msg.id.clone()).collect();
        assert_eq!(received, accepted, "every accepted message carried over once, in order");
        assert_eq!(received.iter().collect::<HashSet<_>>().len(), received.len());
    }
}
