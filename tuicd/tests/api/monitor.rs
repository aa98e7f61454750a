//! `/stats`, `/metrics`, `/process/*`, `/diagnostics/capture` and the session events on `/events`.

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{DEADLINE, Daemon, read_events, wait_until};
use crate::session_util::{create_id, wait_exited, wait_text, write};

#[tokio::test]
async fn stats_and_metrics_count_sessions() {
    let daemon = Daemon::builder().config(json!({"max_sessions": 3})).start().await;
    let id = create_id(&daemon, json!({})).await;
    let (_, stats) = daemon.get("/stats").await;
    assert_eq!(stats, json!({"active_sessions": 1, "max_sessions": 3, "available_slots": 2}));
    write(&daemon, &id, "echo counted\n").await;
    wait_text(&daemon, &id, "counted").await;
    let (_, metrics) = daemon.get("/metrics").await;
    assert_eq!(metrics["total_spawned"], 1);
    assert!(metrics["bytes_emitted"].as_u64().unwrap() > 0);
    assert!(metrics["bytes_written"].as_u64().unwrap() >= 13);
}

#[tokio::test]
async fn process_stats_list_tuicd_then_each_session_tree() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    write(&daemon, &id, "sleep 30 &\n").await;
    let rows = wait_until("the session's tree has two processes", DEADLINE, || async {
        let (_, rows) = daemon.get("/process/stats").await;
        let tree = rows.as_array()?.iter().find(|r| r["session_id"] == id.as_str())?.clone();
        (tree["processes"].as_u64()? >= 2).then_some(rows)
    })
    .await;
    assert_eq!(rows[0]["name"], "tuicd");
    assert_eq!(rows[0]["pid"], daemon.pid());
    assert!(rows[0]["rss_kb"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn the_monitor_page_is_gzipped_and_sse_is_not() {
    let daemon = Daemon::start().await;
    let page =
        daemon.client.get(Daemon::url("/process/monitor")).header("accept-encoding", "gzip").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()["content-encoding"], "gzip");
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let plain = daemon.client.get(Daemon::url("/process/monitor")).send().await.unwrap().text().await.unwrap();
    assert!(plain.len() > 860 && plain.contains("/process/stats"));
    let sse = daemon.client.get(Daemon::url("/events")).header("accept-encoding", "gzip").send().await.unwrap();
    assert!(sse.headers().get("content-encoding").is_none());
}

#[tokio::test]
async fn capture_records_both_directions_with_their_boundaries() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let (status, state) = daemon.post("/diagnostics/capture", json!({"enabled": true, "session_id": id})).await;
    assert_eq!(status, StatusCode::OK, "{state}");
    assert_eq!(state["session_id"], id.as_str());
    write(&daemon, &id, "echo captured-$((1+1))\n").await;
    wait_text(&daemon, &id, "captured-2").await;
    let (_, state) = daemon.get("/diagnostics/capture").await;
    assert!(state["files"][&id].as_u64().unwrap() > 8, "{state}");
    let directory = std::path::Path::new(state["directory"].as_str().unwrap());
    let path = directory.join(format!("{id}.tcap"));
    let mode =
        |p: &std::path::Path| std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions());
    assert_eq!(mode(directory) & 0o777, 0o700, "captures/ holds every keystroke: private");
    assert_eq!(mode(&path) & 0o777, 0o600);
    let bytes = std::fs::read(path).unwrap();
    let records = tuicd::capture::decode(&bytes).expect("a valid .tcap file");
    let input: Vec<&[u8]> =
        records.iter().filter(|r| r.direction == tuicd::capture::Direction::Input).map(|r| r.data.as_slice()).collect();
    assert_eq!(input, [b"echo captured-$((1+1))\n".as_slice()]);
    let output: Vec<u8> = records
        .iter()
        .filter(|r| r.direction == tuicd::capture::Direction::Output)
        .flat_map(|r| r.data.clone())
        .collect();
    assert!(String::from_utf8_lossy(&output).contains("captured-2"));
    assert!(records.windows(2).all(|w| w[0].micros <= w[1].micros));
    let (_, state) = daemon.post("/diagnostics/capture", json!({"enabled": false})).await;
    assert_eq!(state["enabled"], false);
}

#[tokio::test]
async fn session_events_replay_by_last_event_id() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({"display_name": "evt"})).await;
    write(&daemon, &id, "exit 0\n").await;
    wait_exited(&daemon, &id).await;
    let types = "session-created,term-alias-assigned,session-closed";
    let response = daemon
        .client
        .get(Daemon::url(&format!("/events?types={types}")))
        .header("last-event-id", "0")
        .send()
        .await
        .unwrap();
    let events = read_events(response, |e| e.len() >= 3).await;
    let kinds: Vec<&str> = events.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["session-created", "term-alias-assigned", "session-closed"]);
    assert_eq!(events[0].2, json!({"session_id": id, "cwd": "/", "agent_type": null, "display_name": "evt"}));
    assert_eq!(events[1].2, json!({"session_id": id, "alias": "sh-1"}));
    assert_eq!(events[2].2, json!({"session_id": id, "reason": "process_exit"}));
    // Replaying from the first id gives exactly what followed it.
    let response = daemon
        .client
        .get(Daemon::url(&format!("/events?types={types}")))
        .header("last-event-id", events[0].0.to_string())
        .send()
        .await
        .unwrap();
    let again = read_events(response, |e| e.len() >= 2).await;
    assert_eq!(again.iter().map(|e| e.0).collect::<Vec<_>>(), [events[1].0, events[2].0]);
}
