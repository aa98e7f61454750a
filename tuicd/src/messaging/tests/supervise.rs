use super::support::{external, hub, managed, t};
use crate::messaging::{AgentKind, InboxQuery, Lifecycle};

#[test]
fn a_supervisor_reads_waiting_mail_without_taking_it_from_the_agent() {
    let (m, clock, world) = hub();
    let worker = managed(&m, &world, "w", 3, AgentKind::Other, Lifecycle::Working);
    clock.advance_ms(1);
    external(&m, &world, "s", "sender");
    for i in 0..4 {
        m.send(&t("s"), &worker.to_string(), format!("m{i}"), &world).unwrap();
    }
    let peers = m.supervise_peers(&world);
    assert_eq!((peers[0].tuic_session, peers[1].name.as_str()), (worker, "sender"), "oldest registration first");
    assert_eq!(
        (peers[0].unread, peers[0].alias.as_deref(), peers[0].session_id.as_deref()),
        (4, Some("tu-3"), Some("pty-3"))
    );
    assert_eq!(peers[0].transports, [t("w")]);
    assert_eq!(peers[1].unread, 0);

    // Any of the three address forms; the newest `limit`, newest last.
    for address in [worker.to_string(), "pty-3".into(), "tu-3".into()] {
        let mail = m.waiting_mail(&address, 2, &world).expect("known peer");
        let contents: Vec<&str> = mail.messages.iter().map(|x| x.content.as_str()).collect();
        assert_eq!(contents, ["m2", "m3"], "{address}");
        assert_eq!(mail.peer.unread, 4);
    }
    assert!(m.waiting_mail("tu-9", 10, &world).is_none());

    // Peeking moved nothing: the agent still reads all four, and then nothing waits.
    let page = m.inbox(&t("w"), InboxQuery::default()).unwrap();
    assert_eq!(page.messages.len(), 4);
    assert!(m.waiting_mail("tu-3", 10, &world).unwrap().messages.is_empty());
    assert_eq!(m.supervise_peers(&world)[0].unread, 0);
}
