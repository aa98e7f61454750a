//! Inter-agent messaging through MCP, identity and mail: register, list_peers, send, inbox, wait,
//! repair and `replaces`, the reaper keeping addressable identities, and every bad input.
//! (Terminal delivery, orchestrators, channel push and spawned children: `peers_delivery`.)

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;
use crate::mcp_client::*;

/// One MCP client (a bridge): its protocol session and, inside a terminal, its `x-tuic-session`.
pub(crate) struct Peer<'a> {
    pub daemon: &'a Daemon,
    pub session: String,
    pub tuic_session: Option<String>,
}

impl<'a> Peer<'a> {
    /// Initializes a headerless (external) client.
    pub(crate) async fn external(daemon: &'a Daemon) -> Self {
        Self::connect(daemon, None, json!({})).await
    }

    /// Initializes a bridge running inside the terminal whose `TUIC_SESSION` is `tuic_session`.
    pub(crate) async fn in_terminal(daemon: &'a Daemon, tuic_session: &str) -> Self {
        Self::connect(daemon, Some(tuic_session), json!({})).await
    }

    pub(crate) async fn connect(daemon: &'a Daemon, tuic_session: Option<&str>, capabilities: Value) -> Self {
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "peer-test", "version": "1"}});
        let headers: Vec<(&str, &str)> = tuic_session.iter().map(|t| ("x-tuic-session", *t)).collect();
        let reply = rpc(daemon, "initialize", params, &headers).await;
        let session = reply.session().expect("initialize mints mcp-session-id");
        Self { daemon, session, tuic_session: tuic_session.map(str::to_owned) }
    }

    /// Calls the `agent` tool; returns `(isError, result)`.
    pub(crate) async fn agent(&self, args: Value) -> (bool, Value) {
        let mut headers = vec![("mcp-session-id", self.session.as_str())];
        if let Some(t) = &self.tuic_session {
            headers.push(("x-tuic-session", t.as_str()));
        }
        call_as(self.daemon, "agent", args, &headers).await
    }

    pub(crate) async fn ok(&self, args: Value) -> Value {
        let (is_error, value) = self.agent(args.clone()).await;
        assert!(!is_error, "agent {args} failed: {value}");
        value
    }

    pub(crate) async fn fails(&self, args: Value) -> String {
        let (is_error, value) = self.agent(args.clone()).await;
        assert!(is_error, "agent {args} should have failed: {value}");
        value["error"].as_str().unwrap().to_owned()
    }

    pub(crate) async fn register(&self, extra: Value) -> Value {
        let mut args = json!({"action": "register"});
        merge(&mut args, extra);
        self.ok(args).await
    }

    pub(crate) async fn send(&self, to: &str, message: &str) -> Value {
        self.ok(json!({"action": "send", "to": to, "message": message})).await
    }

    pub(crate) async fn inbox(&self, since: Option<u64>) -> Value {
        let mut args = json!({"action": "inbox"});
        if let Some(since) = since {
            args["since"] = json!(since);
        }
        self.ok(args).await
    }

    pub(crate) async fn wait(&self, timeout_ms: u64) -> Value {
        self.ok(json!({"action": "wait", "timeout_ms": timeout_ms})).await
    }

    pub(crate) async fn list_peers(&self) -> Vec<Value> {
        self.ok(json!({"action": "list_peers"})).await["peers"].as_array().unwrap().clone()
    }
}

pub(crate) fn contents(page: &Value) -> Vec<String> {
    page["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap().to_owned()).collect()
}

/// Creates a plain shell session over REST; returns (session_id, tuic_session, alias).
pub(crate) async fn shell_session(daemon: &Daemon) -> (String, String, String) {
    let (status, created) = daemon.post("/sessions", json!({"shell": "/bin/sh", "cwd": daemon.dir.path()})).await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{created}");
    let field = |k: &str| created[k].as_str().unwrap().to_owned();
    (field("session_id"), field("tuic_session"), field("alias"))
}

#[tokio::test]
async fn peers_register_send_inbox_and_wait_keep_a_server_side_cursor() {
    let daemon = Daemon::start().await;
    let (a, b) = (Peer::external(&daemon).await, Peer::external(&daemon).await);
    let ra = a.register(json!({"name": "alice", "project": "p1"})).await;
    let rb = b.register(json!({"name": "bob"})).await;
    assert_eq!((ra["ok"].clone(), ra["identity_generated"].clone()), (json!(true), json!(true)), "{ra}");
    assert_eq!((ra["terminal"].clone(), ra["mail_wake"].clone()), (json!(false), json!("none")));
    let (a_id, b_id) = (ra["tuic_session"].as_str().unwrap().to_owned(), rb["tuic_session"].as_str().unwrap());
    // A second register keeps the generated identity (stable per connection).
    assert_eq!(a.register(json!({})).await["tuic_session"], json!(a_id));

    let peers = a.list_peers().await;
    let names: Vec<&str> = peers.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["alice", "bob"], "oldest first: {peers:?}");
    assert_eq!(peers[0]["project"], json!("p1"));
    assert!(peers[1].get("project").is_none() && peers[1].get("session_id").is_none(), "{peers:?}");
    let only_p1 = a.ok(json!({"action": "list_peers", "project": "p1"})).await;
    assert_eq!(only_p1["peers"].as_array().unwrap().len(), 1);

    // No terminal and no waiter: inbox only, with a warning saying so.
    let sent = a.send(b_id, "first").await;
    assert_eq!(sent["delivery_path"], json!("inbox_only"), "{sent}");
    assert_eq!((sent["delivered"].clone(), sent["accepted"].clone()), (json!(false), json!(true)));
    assert!(sent["warning"].as_str().unwrap().contains("NO managed terminal"), "{sent}");
    assert!(sent.get("recipient_state").is_none(), "external peers have no recipient_state");
    a.send(b_id, "second").await;

    let page = b.inbox(None).await;
    assert_eq!(contents(&page), ["first", "second"]);
    assert_eq!(page["count"], json!(2));
    assert_eq!(page["messages"][0]["from_name"], json!("alice"));
    assert_eq!(page["messages"][0]["from_tuic_session"], json!(a_id));
    let next = page["next_since"].as_u64().unwrap();
    assert_eq!(next, page["messages"][1]["timestamp"].as_u64().unwrap());
    // The stored cursor moved: nothing new. since=0 replays, and does not rewind the cursor.
    assert!(contents(&b.inbox(None).await).is_empty());
    assert_eq!(contents(&b.inbox(Some(0)).await), ["first", "second"]);
    let after_replay = b.inbox(None).await;
    assert!(contents(&after_replay).is_empty());
    assert_eq!(after_replay["next_since"], json!(next), "next_since is present on an empty page too");

    // A wait that times out still reports next_since.
    let timed_out = b.wait(50).await;
    assert_eq!((timed_out["met"].clone(), timed_out["timed_out"].clone()), (json!(false), json!(true)));
    assert_eq!(timed_out["next_since"], json!(next));

    // A waiting recipient owns the wake-up: the send says so and the wait returns the message.
    // A send that beats the wait's arrival is inbox-only and the wait returns it at once; either
    // way each message is observed exactly once.
    let mut woken_path = false;
    for attempt in 0..20 {
        let text = format!("ping {attempt}");
        let (woken, sent) = tokio::join!(b.wait(15_000), async { a.send(b_id, &text).await });
        assert_eq!((woken["met"].clone(), woken["new_messages"].clone()), (json!(true), json!(1)), "{woken}");
        assert_eq!(contents(&woken), std::slice::from_ref(&text));
        assert!(contents(&b.inbox(None).await).is_empty(), "the wait acknowledged what it returned");
        if sent["delivery_path"] == json!("waiter_and_inbox") {
            assert_eq!(sent["delivered"], json!(true));
            woken_path = true;
            break;
        }
        assert_eq!(sent["delivery_path"], json!("inbox_only"), "{sent}");
    }
    assert!(woken_path, "no send ever found the wait active");
}

#[tokio::test]
async fn peers_refuse_bad_input_with_errors_naming_it_and_change_nothing() {
    let daemon = Daemon::start().await;
    let a = Peer::external(&daemon).await;
    let b = Peer::external(&daemon).await;
    // Not registered yet: send and inbox name what to do.
    let e = a.fails(json!({"action": "send", "to": "x", "message": "hi"})).await;
    assert!(e.contains("no peer identity") && e.contains("register"), "{e}");
    let b_id = b.register(json!({"name": "bob"})).await["tuic_session"].as_str().unwrap().to_owned();
    a.register(json!({"name": "alice"})).await;

    let e = a.fails(json!({"action": "send", "to": "9d7c0000-0000-4000-8000-000000000000", "message": "x"})).await;
    assert!(e.contains("Recipient '9d7c0000-0000-4000-8000-000000000000' is not registered"), "{e}");
    let e = a.fails(json!({"action": "send", "to": "tu-404", "message": "x"})).await;
    assert!(e.contains("'tu-404' is not registered"), "{e}");
    let big = "x".repeat(64 * 1024 + 1);
    let e = a.fails(json!({"action": "send", "to": b_id, "message": big})).await;
    assert!(e.contains("65537 bytes; the limit is 65536"), "{e}");
    let e = a.fails(json!({"action": "send", "to": b_id, "message": "  "})).await;
    assert!(e.contains("must not be empty"), "{e}");
    let e = a.fails(json!({"action": "send", "to": b_id})).await;
    assert!(e.contains("message"), "missing field named: {e}");
    let e = a.fails(json!({"action": "inbox", "since": "yesterday"})).await;
    assert!(e.contains("since"), "wrong type named: {e}");
    let e = a.fails(json!({"action": "register", "tuic_session": "not-a-uuid"})).await;
    assert!(e.contains("tuic_session 'not-a-uuid' is not a UUID"), "{e}");
    let e = a.fails(json!({"action": "register", "replaces": "nope"})).await;
    assert!(e.contains("replaces 'nope' is not a UUID"), "{e}");
    let e = a.fails(json!({"action": "register", "name": " "})).await;
    assert!(e.contains("name must not be empty"), "{e}");
    let e = a.fails(json!({"action": "register", "colour": "red"})).await;
    assert!(e.contains("colour"), "unknown field named: {e}");
    let e = a.fails(json!({"action": "shout"})).await;
    assert!(e.contains("register") && e.contains("wait"), "valid actions listed: {e}");
    // Two identities without a terminal: a second, different UUID is refused.
    let e = a.fails(json!({"action": "register", "tuic_session": "9d7c0000-0000-4000-8000-000000000001"})).await;
    assert!(e.contains("already bound to a different peer identity"), "{e}");
    // Without an MCP session the messaging actions say to initialize first.
    let (is_error, v) = call(&daemon, "agent", json!({"action": "inbox"})).await;
    assert!(is_error && v["error"].as_str().unwrap().contains("call initialize first"), "{v}");

    // Nothing changed: bob's inbox is empty, the peer list holds exactly the two.
    assert!(contents(&b.inbox(Some(0)).await).is_empty());
    assert_eq!(a.list_peers().await.len(), 2);
}

#[tokio::test]
async fn peers_terminal_identity_binds_at_initialize_joins_siblings_and_repairs() {
    let daemon = Daemon::start().await;
    let (pty_id, tuic, alias) = shell_session(&daemon).await;
    let bridge = Peer::in_terminal(&daemon, &tuic).await;
    // Auto-bound at initialize: no register needed, reachable by all three addresses.
    let peers = bridge.list_peers().await;
    assert_eq!(peers.len(), 1, "{peers:?}");
    assert_eq!((peers[0]["tuic_session"].clone(), peers[0]["session_id"].clone()), (json!(tuic), json!(pty_id)));
    assert_eq!(peers[0]["alias"], json!(alias));
    let sender = Peer::external(&daemon).await;
    sender.register(json!({"name": "sender"})).await;
    for to in [&tuic, &pty_id, &alias] {
        let sent = sender.send(to, &format!("via {to}")).await;
        assert_eq!(sent["recipient_has_terminal"], json!(false), "a plain shell is not a managed agent: {sent}");
    }
    // A second bridge in the same PTY joins the identity instead of being locked out.
    let sibling = Peer::in_terminal(&daemon, &tuic).await;
    let renamed = sibling.register(json!({"name": "codex-2"})).await;
    assert_eq!(renamed["tuic_session"], json!(tuic), "{renamed}");
    assert_eq!(renamed["terminal"], json!(true));
    let page = bridge.inbox(None).await;
    assert_eq!(contents(&page).len(), 3, "both bridges read one inbox: {page}");
    assert_eq!(bridge.list_peers().await[0]["name"], json!("codex-2"));

    // Repair: a client in another terminal first registered an invented UUID and got mail there.
    let (_, real, _) = shell_session(&daemon).await;
    let lost = Peer::external(&daemon).await;
    let invented = "5e1f0000-0000-4000-8000-0000000000aa";
    lost.register(json!({"tuic_session": invented, "name": "lost"})).await;
    sender.send(invented, "kept across the repair").await;
    let events =
        daemon.client.get(Daemon::url("/events?types=peer-registered,peer-unregistered")).send().await.unwrap();
    let repaired = lost.register(json!({"tuic_session": real})).await;
    assert_eq!(repaired["superseded_identity"], json!(invented), "{repaired}");
    // /events tells the retire and the registration.
    let told = read_events(events, |e| e.len() >= 2).await;
    let kinds: Vec<(&str, &Value)> = told.iter().map(|(_, k, d)| (k.as_str(), &d["tuic_session"])).collect();
    assert_eq!(kinds, [("peer-unregistered", &json!(invented)), ("peer-registered", &json!(real))], "{told:?}");
    assert_eq!(repaired["mail_migrated"], json!(1));
    assert_eq!(contents(&lost.inbox(None).await), ["kept across the repair"]);
    let e = sender.fails(json!({"action": "send", "to": invented, "message": "late"})).await;
    assert!(e.contains("is not registered"), "the retired address refuses: {e}");
    assert!(lost.list_peers().await.iter().all(|p| p["tuic_session"] != json!(invented)));
    // The reverse, wandering off a terminal onto an invented identity, is refused naming the real one.
    let e = lost.fails(json!({"action": "register", "tuic_session": invented})).await;
    assert!(e.contains(&format!("register with tuic_session={real}")), "{e}");
}

#[tokio::test]
async fn peers_replaces_moves_unread_mail_once_the_old_connection_is_gone() {
    let daemon = Daemon::start().await;
    let sender = Peer::external(&daemon).await;
    sender.register(json!({"name": "sender"})).await;
    let old = Peer::external(&daemon).await;
    let old_id = old.register(json!({"name": "worker"})).await["tuic_session"].as_str().unwrap().to_owned();
    sender.send(&old_id, "before the reconnect").await;
    // The worker reconnects as a new MCP session and names the identity it replaces. While the
    // old connection was active within the 6 s owner grace, its mail stays put and says why.
    let new = Peer::external(&daemon).await;
    let stranded = new.register(json!({"name": "worker", "replaces": old_id})).await;
    assert_eq!(stranded["mail_stranded"], json!(1), "{stranded}");
    assert!(stranded["identity_warning"].as_str().unwrap().contains("still reachable"), "{stranded}");
    assert!(stranded.get("superseded_identity").is_none());
    // Once the old connection has gone quiet past the grace, the same register moves the mail.
    let moved = wait_until("the old connection's grace passes", Duration::from_secs(30), || async {
        let r = new.register(json!({"replaces": old_id})).await;
        r.get("superseded_identity").is_some().then_some(r)
    })
    .await;
    assert_eq!((moved["superseded_identity"].clone(), moved["mail_migrated"].clone()), (json!(old_id), json!(1)));
    assert_eq!(contents(&new.inbox(None).await), ["before the reconnect"]);
    let e = sender.fails(json!({"action": "send", "to": old_id, "message": "late"})).await;
    assert!(e.contains("is not registered"), "{e}");
}

#[tokio::test]
async fn peers_reaper_keeps_identities_that_own_a_live_terminal_or_parent_a_live_child() {
    let daemon = Daemon::builder().env("TUIC_MCP_SESSION_TTL_MS", "300").start().await;
    let sender = Peer::external(&daemon).await;
    sender.register(json!({"name": "sender"})).await;
    // A terminal-backed identity survives its transport's reap; a headerless one does not.
    let (_, tuic, _) = shell_session(&daemon).await;
    let in_pty = Peer::in_terminal(&daemon, &tuic).await;
    in_pty.ok(json!({"action": "list_peers"})).await;
    let gone = Peer::external(&daemon).await;
    let gone_id = gone.register(json!({"name": "ephemeral"})).await["tuic_session"].as_str().unwrap().to_owned();
    // A headerless parent of a live spawned child is kept too: the child must be able to report.
    let parent = Peer::external(&daemon).await;
    let parent_id = parent.register(json!({"name": "parent"})).await["tuic_session"].as_str().unwrap().to_owned();
    let child = parent
        .ok(json!({"action": "spawn", "binary_path": crate::agents::fake_agent(), "agent_type": "claude",
            "prompt": "first task", "cwd": daemon.dir.path()}))
        .await;
    assert_eq!(child["parent_session_id"], json!(parent_id));
    // The sender keeps its own session alive while the others idle past the 300 ms TTL.
    wait_until("the reaper evicts the headerless identity", DEADLINE, || async {
        let peers = sender.list_peers().await;
        let ids: Vec<&str> = peers.iter().map(|p| p["tuic_session"].as_str().unwrap()).collect();
        (!ids.contains(&gone_id.as_str())).then(|| {
            assert!(ids.contains(&tuic.as_str()), "{peers:?}");
            assert!(ids.contains(&parent_id.as_str()), "the parent of a live child was evicted: {peers:?}");
        })
    })
    .await;
    let sent = sender.send(&tuic, "still addressable").await;
    assert_eq!(sent["ok"], json!(true));
    // The reaper did pass over the parent (its transport went) and said it kept it.
    wait_until("the reaper logs the retained parent", DEADLINE, || async {
        let log = daemon.log();
        log.lines().any(|l| l.contains("reaper kept identities") && l.contains(&parent_id)).then_some(())
    })
    .await;
    assert!(sender.list_peers().await.iter().any(|p| p["tuic_session"] == json!(parent_id)));
    let kid = Peer::in_terminal(&daemon, child["tuic_session"].as_str().unwrap()).await;
    assert_eq!(kid.send(&parent_id, "result for a parent that went quiet").await["ok"], json!(true));
    assert!(daemon.log().contains("reaper kept identities that are still addressable"));
    // The terminal's bridge comes back (its session id was reaped) and reads the mail it missed.
    let back = Peer::in_terminal(&daemon, &tuic).await;
    assert_eq!(contents(&back.inbox(None).await), ["still addressable"]);
}

#[tokio::test]
async fn peers_a_wait_timing_out_as_mail_arrives_neither_loses_nor_duplicates_it() {
    let daemon = Daemon::start().await;
    let (a, b) = (Peer::external(&daemon).await, Peer::external(&daemon).await);
    a.register(json!({"name": "a"})).await;
    let b_id = b.register(json!({"name": "b"})).await["tuic_session"].as_str().unwrap().to_owned();
    let sent: Vec<String> = (0..30).map(|i| format!("m{i}")).collect();
    let mut observed = Vec::new();
    for (i, text) in sent.iter().enumerate() {
        // Timeouts of 1..25 ms land on every side of the send's arrival.
        let timeout = 1 + (i as u64 * 7) % 25;
        let (woken, routed) = tokio::join!(b.wait(timeout), a.send(&b_id, text));
        let path = routed["delivery_path"].as_str().unwrap().to_owned();
        assert!(path == "waiter_and_inbox" || path == "inbox_only", "{routed}");
        observed.extend(contents(&woken));
    }
    observed.extend(contents(&b.inbox(None).await));
    assert_eq!(observed, sent, "each message observed exactly once, in order");
}

#[tokio::test]
async fn peers_a_send_racing_a_retire_either_moves_with_the_mail_or_is_refused() {
    let daemon = Daemon::start().await;
    let sender = Peer::external(&daemon).await;
    sender.register(json!({"name": "sender"})).await;
    for i in 0..5 {
        let (_, real, _) = shell_session(&daemon).await;
        let lost = Peer::external(&daemon).await;
        let invented = format!("5e1f0000-0000-4000-8000-0000000001{i:02}");
        lost.register(json!({"tuic_session": invented})).await;
        let send = sender.agent(json!({"action": "send", "to": invented, "message": format!("race {i}")}));
        let ((is_error, outcome), repaired) = tokio::join!(send, lost.register(json!({"tuic_session": real})));
        assert_eq!(repaired["superseded_identity"], json!(invented), "{repaired}");
        let inbox = contents(&lost.inbox(Some(0)).await);
        if is_error {
            assert!(outcome["error"].as_str().unwrap().contains("is not registered"), "{outcome}");
            assert!(inbox.is_empty(), "a refused send left mail behind: {inbox:?}");
        } else {
            assert_eq!(repaired["mail_migrated"], json!(1), "{repaired}");
            assert_eq!(inbox, [format!("race {i}")], "an accepted send must follow the repair");
        }
    }
}
