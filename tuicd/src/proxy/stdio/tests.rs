use super::read::answer_of;
use super::*;

#[test]
fn tilde_expands_to_home_only_at_the_start() {
    let home = std::env::var("HOME").expect("HOME is set in tests");
    assert_eq!(expand_tilde("~"), home);
    assert_eq!(expand_tilde("~/bin/x"), format!("{home}/bin/x"));
    assert_eq!(expand_tilde("~other/x"), "~other/x");
    assert_eq!(expand_tilde("/a/~/b"), "/a/~/b");
}

#[test]
fn responses_become_results_or_named_errors() {
    assert_eq!(answer_of(json!({"id": 1, "result": {"a": 1}})), Ok(json!({"a": 1})));
    let error = answer_of(json!({"id": 1, "error": {"code": -32602, "message": "bad"}})).expect_err("an error");
    assert_eq!(error, UpstreamError::Rpc { code: -32602, message: "bad".into(), data: None });
}

#[test]
fn the_environment_keeps_only_the_allowlist() {
    let env = allowed_env();
    assert!(env.iter().all(|(k, _)| ENV_ALLOWLIST.contains(&k.as_str()) || k.starts_with("LC_")));
}

/// A pending map with `n` requests that take related messages, each with its receiver.
fn pending_with(n: u64) -> (Pending, Vec<mpsc::Receiver<Value>>) {
    let pending: Pending = Arc::default();
    let mut receivers = Vec::new();
    for id in 0..n {
        let (related, rx) = mpsc::channel(4);
        pending.locked().insert(id, Waiting { answer: oneshot::channel().0, related: Some(related) });
        receivers.push(rx);
    }
    (pending, receivers)
}

fn dispatch(pending: &Pending, message: Value) -> (Option<Value>, Option<Value>) {
    let (writer, mut written) = mpsc::channel(4);
    let (notifications, mut queued) = mpsc::channel(4);
    let line = format!("{message}\n");
    super::read::dispatch_line("up", line.as_bytes(), pending, &writer, &notifications, &mut 0);
    let written = match written.try_recv() {
        Ok(Outgoing::Line(line)) => Some(serde_json::from_slice(&line).expect("JSON")),
        _ => None,
    };
    (written, queued.try_recv().ok())
}

#[test]
fn a_log_or_request_goes_to_the_one_call_in_flight_and_to_nobody_when_several_are() {
    let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x"}});
    let ask = json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"});
    let (one, mut receivers) = pending_with(1);
    assert_eq!(dispatch(&one, log.clone()), (None, None));
    assert_eq!(receivers[0].try_recv().expect("the one call's log"), log);
    assert_eq!(dispatch(&one, ask.clone()), (None, None));
    assert_eq!(receivers[0].try_recv().expect("the one call's request"), ask);

    let (two, mut receivers) = pending_with(2);
    assert_eq!(dispatch(&two, log), (None, None), "dropped, not sent to every call");
    assert!(receivers.iter_mut().all(|r| r.try_recv().is_err()));
    let (refusal, _) = dispatch(&two, ask.clone());
    let message = refusal.expect("answered at once")["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("roots/list") && message.contains("2 tool calls are in flight"), "{message}");
    let (none, _) = pending_with(0);
    let (refusal, _) = dispatch(&none, ask);
    assert!(refusal.unwrap()["error"]["message"].as_str().unwrap().contains("no tool call is in flight"));
    let ping = dispatch(&none, json!({"jsonrpc": "2.0", "id": 8, "method": "ping"})).0.expect("a pong");
    assert_eq!((ping["id"].clone(), ping["result"].clone()), (json!(8), json!({})));
}
