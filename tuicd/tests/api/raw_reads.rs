//! Raw output reads by cursor with a `limit` smaller than the next UTF-8 character: REST and MCP
//! both return that whole character, so a delta-polling client always advances.

use serde_json::{Value, json};

use crate::harness::*;
use crate::mcp_client::ok;
use crate::session_util::create_id;

/// A live session whose whole output is a 4-byte character then `ok` (6 bytes).
async fn emoji_session(daemon: &Daemon) -> String {
    let args = json!(["-c", "printf '\\360\\237\\230\\200ok'; exec sleep 60"]);
    let id = create_id(daemon, json!({"args": args})).await;
    wait_until("the 6 bytes of output", DEADLINE, || async {
        let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
        (info["total_written"] == json!(6)).then_some(())
    })
    .await;
    id
}

fn read(answer: &Value) -> (&str, u64) {
    (answer["data"].as_str().unwrap(), answer["cursor"].as_u64().unwrap())
}

#[tokio::test]
async fn a_rest_raw_delta_with_a_limit_inside_a_character_returns_that_character_whole() {
    let daemon = Daemon::start().await;
    let id = emoji_session(&daemon).await;
    let (_, first) = daemon.get(&format!("/sessions/{id}/output?since_cursor=0&limit=3")).await;
    assert_eq!(read(&first), ("😀", 4), "{first}");
    let (_, second) = daemon.get(&format!("/sessions/{id}/output?since_cursor=4&limit=3")).await;
    assert_eq!(read(&second), ("ok", 6), "{second}");
    let (_, whole) = daemon.get(&format!("/sessions/{id}/output?since_cursor=0&limit=5")).await;
    assert_eq!(read(&whole), ("😀o", 5), "a limit past the character is kept: {whole}");
}

#[tokio::test]
async fn an_mcp_raw_delta_with_a_limit_inside_a_character_returns_that_character_whole() {
    let daemon = Daemon::start().await;
    let id = emoji_session(&daemon).await;
    let args = |cursor: u64| json!({"action": "output", "session_id": id, "format": "raw", "limit": 2, "since_cursor": cursor});
    let first = ok(&daemon, "session", args(0)).await;
    assert_eq!(read(&first), ("😀", 4), "{first}");
    let second = ok(&daemon, "session", args(4)).await;
    assert_eq!(read(&second), ("ok", 6), "{second}");
}
