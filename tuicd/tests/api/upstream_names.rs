//! Upstream tool names: routed by the (upstream, tool) pair each listed name was kept with, names
//! two pairs would share refused naming both, and names kept within 64 characters with Claude
//! Code's `mcp__tuic__` prefix (shortened with a stable hash, or renamed by `tool_aliases`).

use std::path::Path;

use serde_json::json;

use crate::harness::{DEADLINE, wait_until};
use crate::upstream_util::*;

#[tokio::test]
async fn names_route_by_their_listed_pair_and_names_two_pairs_share_are_refused_naming_both() {
    let daemon = with_upstreams(&[
        everything("b_"),
        fake("c", "named", Some(Path::new("_x"))),
        fake("c_", "named", Some(Path::new("x,y"))),
    ])
    .start()
    .await;
    let session = session(&daemon).await;
    for name in ["b_", "c", "c_"] {
        wait_status(&daemon, name, "ready").await;
    }
    let names = listed_names(&daemon, &session).await;
    assert!(names.contains(&"b___echo".to_owned()) && names.contains(&"c___y".to_owned()), "{names:?}");
    assert!(!names.contains(&"c___x".to_owned()), "neither of the two c___x is listed: {names:?}");
    // `b___echo` is upstream `b_`'s `echo`, which splitting at the first `__` would misread.
    let echoed = call_tool(&daemon, &session, "b___echo", json!({"message": "routed"})).await;
    assert_eq!(echoed["result"]["content"][0]["text"], "Echo: routed", "{echoed}");
    let y = call_tool(&daemon, &session, "c___y", json!({})).await;
    assert_eq!(y["result"]["content"][0]["text"], "y done", "{y}");
    let refused = call_tool(&daemon, &session, "c___x", json!({})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let log = wait_until("the warning naming both", DEADLINE, || async {
        let log = daemon.log();
        log.contains("would both be listed as").then_some(log)
    })
    .await;
    let warning = log.lines().find(|l| l.contains("would both be listed as")).unwrap();
    assert!(
        warning.contains("WARN") && warning.contains(r#""c" tool "_x""#) && warning.contains(r#""c_" tool "x""#),
        "{warning}"
    );
}

#[tokio::test]
async fn long_names_are_shortened_within_claude_codes_64_and_aliases_rename_and_both_route() {
    let long = "ev-with-a-rather-long-name";
    let mut aliased = everything("ev-aliased");
    aliased["tool_aliases"] = json!({"trigger-long-running-operation": "long-op"});
    let daemon = with_upstreams(&[everything(long), aliased]).start().await;
    let session = session(&daemon).await;
    wait_status(&daemon, long, "ready").await;
    wait_status(&daemon, "ev-aliased", "ready").await;
    let names = listed_names(&daemon, &session).await;
    for name in &names {
        assert!(format!("mcp__tuic__{name}").len() <= 64, "{name} fits Claude Code's limit");
    }
    let natural = format!("{long}__trigger-long-running-operation");
    assert!(!names.contains(&natural), "{names:?}");
    let start = &natural[..natural.len().min(40)];
    let shortened = names.iter().filter(|n| n.starts_with(start)).collect::<Vec<_>>();
    assert_eq!(shortened.len(), 1, "{names:?}");
    let shortened = shortened[0].clone();
    let again = listed_names(&daemon, &session).await;
    assert!(again.contains(&shortened), "the same name on every listing");
    let done = call_tool(&daemon, &session, &shortened, json!({"duration": 0.2, "steps": 1})).await;
    assert!(done["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("completed"), "{done}");
    assert!(names.contains(&"ev-aliased__long-op".to_owned()), "{names:?}");
    assert!(!names.contains(&"ev-aliased__trigger-long-running-operation".to_owned()), "{names:?}");
    let aliased = call_tool(&daemon, &session, "ev-aliased__long-op", json!({"duration": 0.2, "steps": 1})).await;
    assert!(aliased["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("completed"), "{aliased}");
    let log = daemon.log();
    let warning = log.lines().find(|l| l.contains(&format!("tool listed as \"{shortened}\""))).expect("a warning");
    assert!(warning.contains("WARN") && warning.contains(&natural), "both names: {warning}");
}
