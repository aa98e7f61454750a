//! The `progress` tool, the journal behind it (intents from markers, restart survival) and
//! `repo action=progress_list`.

use serde_json::{Value, json};

use crate::agents::fake_agent;
use crate::harness::*;
use crate::mcp_client::*;

/// Spawns the fake agent; returns (session_id, tuic_session, name).
async fn spawn(daemon: &Daemon, extra: Value) -> (String, String, String) {
    let mut args = json!({"action": "spawn", "binary_path": fake_agent(), "agent_type": "claude",
        "prompt": "build the parser", "cwd": daemon.dir.path()});
    merge(&mut args, extra);
    let spawned = ok(daemon, "agent", args).await;
    let s = |k: &str| spawned[k].as_str().unwrap().to_owned();
    (s("session_id"), s("tuic_session"), s("name"))
}

async fn report(daemon: &Daemon, tuic: &str, args: Value) -> (bool, Value) {
    call_as(daemon, "progress", args, &[("x-tuic-session", tuic)]).await
}

async fn list(daemon: &Daemon, filter: Value) -> Vec<Value> {
    let mut args = json!({"action": "progress_list"});
    merge(&mut args, filter);
    ok(daemon, "repo", args).await.as_array().unwrap().clone()
}

#[tokio::test]
async fn agent_progress_is_journaled_with_intents_and_survives_a_restart() {
    let daemon = Daemon::start().await;
    let (_, tuic, name) = spawn(&daemon, json!({"name": "parser-bot"})).await;
    assert_eq!(name, "parser-bot");
    // The fake agent's `intent:` marker becomes an intent entry, written by tuicd.
    let intents = wait_until("the intent entry", DEADLINE, || async {
        let entries = list(&daemon, json!({"agent": "parser-bot"})).await;
        let intents: Vec<Value> = entries.into_iter().filter(|e| e["type"] == json!("intent")).collect();
        (!intents.is_empty()).then_some(intents)
    })
    .await;
    assert_eq!(intents[0]["text"], json!("Working on build the parser"));
    let project = intents[0]["project"].as_str().unwrap().to_owned();

    let events = daemon.client.get(Daemon::url("/events?types=progress-recorded")).send().await.unwrap();
    let (is_error, done) = report(&daemon, &tuic, json!({"type": "done", "text": "parser builds", "step": "1"})).await;
    assert!(!is_error, "{done}");
    let recorded = read_events(events, |e| e.iter().any(|(_, _, d)| d["type"] == json!("done"))).await;
    let recorded = recorded.into_iter().find(|(_, _, d)| d["type"] == json!("done")).unwrap().2;
    assert_eq!((recorded["text"].clone(), recorded["id"].clone()), (json!("parser builds"), done["id"].clone()));
    assert_eq!((done["agent"].clone(), done["project"].clone()), (json!("parser-bot"), json!(project)));
    let (is_error, refused) = report(&daemon, &tuic, json!({"type": "intent", "text": "sneaky"})).await;
    assert!(is_error && refused["error"].as_str().unwrap().contains("recorded by tuicd"), "{refused}");
    let (is_error, refused) = report(&daemon, &tuic, json!({"type": "finished", "text": "x"})).await;
    assert!(is_error && refused["error"].as_str().unwrap().contains("unknown type 'finished'"), "{refused}");
    let (is_error, refused) = report(&daemon, &tuic, json!({"type": "done"})).await;
    assert!(is_error && refused["error"].as_str().unwrap().contains("text"), "{refused}");
    let (is_error, refused) = call(&daemon, "progress", json!({"type": "done", "text": "who am i"})).await;
    assert!(is_error && refused["error"].as_str().unwrap().contains("x-tuic-session"), "{refused}");

    let entries = list(&daemon, json!({"project": project})).await;
    let kinds: Vec<&str> = entries.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"intent") && kinds.contains(&"done") && !kinds.contains(&"finished"), "{kinds:?}");
    let done_ts = entries.iter().find(|e| e["type"] == json!("done")).unwrap()["ts"].as_u64().unwrap();
    assert!(list(&daemon, json!({"since": done_ts + 1})).await.iter().all(|e| e["type"] != json!("done")));
    assert!(list(&daemon, json!({"agent": "nobody"})).await.is_empty());
    let error = fails(&daemon, "repo", json!({"action": "progress_list", "since": "yesterday"})).await;
    assert!(error.contains("since"), "{error}");

    // Append-only file in the config dir: a restarted daemon reads it back.
    let dir = daemon.into_dir().await;
    let daemon = Daemon::builder().dir(dir).start().await;
    let after = list(&daemon, json!({"agent": "parser-bot"})).await;
    assert!(after.iter().any(|e| e["text"] == json!("parser builds") && e["step"] == json!("1")), "{after:?}");
}

#[tokio::test]
async fn agent_progress_can_be_disabled_per_agent_and_globally() {
    let daemon = Daemon::start().await;
    let (_, tuic, _) = spawn(&daemon, json!({"progress_tracking": false})).await;
    let (is_error, refused) = report(&daemon, &tuic, json!({"type": "blocked", "text": "stuck"})).await;
    assert!(is_error, "{refused}");
    assert_eq!(refused["reason"], json!("progress_tracking_disabled"));
    assert!(list(&daemon, json!({})).await.iter().all(|e| e["text"] != json!("stuck")), "nothing was written");

    daemon.put("/config", json!({"progress_tracking": false})).await;
    let listed = rpc(&daemon, "tools/list", json!({}), &[]).await;
    let names: Vec<&str> =
        listed.body["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"progress"), "{names:?}");
    let refused =
        rpc(&daemon, "tools/call", json!({"name": "progress", "arguments": {"type": "done", "text": "x"}}), &[]).await;
    assert!(refused.body["error"]["message"].as_str().unwrap().contains("progress_tracking"), "{}", refused.body);
}
