//! One size for a session several clients draw (tmux's `window-size`): each rule with two
//! WebSocket clients of different sizes, the size a program inside reads (`stty size`), and the
//! `resize` frames each client is told.

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::harness::{DEADLINE, Daemon};
use crate::session_util::{create_id, write};
use crate::stream::connect;

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::UnixStream>;

/// Reads frames until the next `resize` frame and checks it is `(rows, cols)`.
async fn expect_resize(socket: &mut Socket, rows: u16, cols: u16, who: &str) {
    let frame = tokio::time::timeout(DEADLINE, async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(text))) => {
                    let frame: Value = serde_json::from_str(&text).unwrap();
                    if frame["type"] == "resize" {
                        return frame;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("{who}: the stream ended before a resize frame: {other:?}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{who}: no resize frame to {rows}x{cols}"));
    assert_eq!((frame["rows"].as_u64(), frame["cols"].as_u64()), (Some(rows.into()), Some(cols.into())), "{who}");
}

/// What `stty size` in the session prints now, asked with a fresh marker (`rows cols`).
async fn stty(daemon: &Daemon, id: &str, step: u32) -> String {
    write(daemon, id, &format!("echo SZ{step}=$(stty size)=\n")).await;
    read_stty(daemon, id, step).await
}

async fn read_stty(daemon: &Daemon, id: &str, step: u32) -> String {
    let needle = format!("SZ{step}=");
    crate::harness::wait_until(&format!("stty size step {step}"), DEADLINE, || async {
        let (_, out) = daemon.get(&format!("/sessions/{id}/output?format=text")).await;
        let text = out["data"].as_str().unwrap_or_default().to_owned();
        // The command line echoes `SZn=$(stty size)=`; the answer is the line with digits.
        text.lines().filter_map(|l| l.split(&needle).nth(1)).find_map(|rest| {
            let size = rest.split('=').next()?;
            size.chars().next().is_some_and(|c| c.is_ascii_digit()).then(|| size.to_owned())
        })
    })
    .await
}

async fn info_size(daemon: &Daemon, id: &str) -> (u64, u64) {
    let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
    (info["rows"].as_u64().unwrap(), info["cols"].as_u64().unwrap())
}

#[tokio::test]
async fn latest_follows_the_client_that_typed_or_resized_last_and_a_departure() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let mut a = connect(&daemon, &format!("/sessions/{id}/stream?rows=30&cols=100&client=a")).await;
    expect_resize(&mut a, 30, 100, "a, first frame").await;
    let mut b = connect(&daemon, &format!("/sessions/{id}/stream?rows=20&cols=60&client=b")).await;
    expect_resize(&mut b, 20, 60, "b, first frame").await;
    expect_resize(&mut a, 20, 60, "a told of b's size").await;
    assert_eq!(stty(&daemon, &id, 1).await, "20 60");

    // A types: the session takes its size before the program reads the input.
    a.send(Message::text("echo SZ2=$(stty size)=\n")).await.unwrap();
    expect_resize(&mut a, 30, 100, "a typed").await;
    expect_resize(&mut b, 30, 100, "b told a typed").await;
    assert_eq!(read_stty(&daemon, &id, 2).await, "30 100");

    // B reports a new size in a frame; then through REST by its name.
    b.send(Message::text(r#"{"type":"resize","rows":22,"cols":70}"#)).await.unwrap();
    expect_resize(&mut a, 22, 70, "a told of b's resize frame").await;
    expect_resize(&mut b, 22, 70, "b's resize frame").await;
    assert_eq!(stty(&daemon, &id, 3).await, "22 70");
    let (status, _) =
        daemon.post(&format!("/sessions/{id}/resize"), json!({"rows": 25, "cols": 75, "client": "b"})).await;
    assert_eq!(status, 200);
    expect_resize(&mut a, 25, 75, "a told of b's REST resize").await;
    expect_resize(&mut b, 25, 75, "b's REST resize").await;

    // B leaves: its size goes with it.
    b.close(None).await.unwrap();
    expect_resize(&mut a, 30, 100, "a after b left").await;
    assert_eq!(stty(&daemon, &id, 4).await, "30 100");

    // A REST resize naming no attached client is the manual size: the latest now.
    let (status, _) = daemon.post(&format!("/sessions/{id}/resize"), json!({"rows": 40, "cols": 90})).await;
    assert_eq!(status, 200);
    expect_resize(&mut a, 40, 90, "a told of the manual size").await;
    assert_eq!(info_size(&daemon, &id).await, (40, 90));
}

#[tokio::test]
async fn smallest_from_the_config_takes_each_dimensions_minimum() {
    let daemon = Daemon::builder().config(json!({"window_size": "smallest"})).start().await;
    let id = create_id(&daemon, json!({})).await;
    let mut a = connect(&daemon, &format!("/sessions/{id}/stream?rows=30&cols=100")).await;
    expect_resize(&mut a, 30, 100, "a alone").await;
    let mut b = connect(&daemon, &format!("/sessions/{id}/stream?rows=20&cols=120")).await;
    expect_resize(&mut b, 20, 100, "b, first frame").await;
    expect_resize(&mut a, 20, 100, "a told").await;
    assert_eq!(stty(&daemon, &id, 1).await, "20 100");
    // Typing changes nothing under `smallest`.
    a.send(Message::text("echo SZ2=$(stty size)=\n")).await.unwrap();
    assert_eq!(read_stty(&daemon, &id, 2).await, "20 100");
    drop(b);
    expect_resize(&mut a, 30, 100, "a after b left").await;
    assert_eq!(stty(&daemon, &id, 3).await, "30 100");
}

#[tokio::test]
async fn largest_as_a_sessions_own_rule() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({"window_size": "largest"})).await;
    let mut a = connect(&daemon, &format!("/sessions/{id}/stream?rows=30&cols=100")).await;
    expect_resize(&mut a, 30, 100, "a alone").await;
    let mut b = connect(&daemon, &format!("/sessions/{id}/stream?rows=20&cols=120")).await;
    expect_resize(&mut b, 30, 120, "b, first frame").await;
    expect_resize(&mut a, 30, 120, "a told").await;
    assert_eq!(stty(&daemon, &id, 1).await, "30 120");
    b.close(None).await.unwrap();
    expect_resize(&mut a, 30, 100, "a after b left").await;
    assert_eq!(stty(&daemon, &id, 2).await, "30 100");
}

#[tokio::test]
async fn manual_takes_only_explicit_resizes_and_old_clients_are_told_of_changes() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({"rows": 24, "cols": 80, "window_size": "manual"})).await;
    // A client that reports no size (an old one) gets no first `resize` frame, only changes.
    let mut old = connect(&daemon, &format!("/sessions/{id}/stream")).await;
    let mut a = connect(&daemon, &format!("/sessions/{id}/stream?rows=30&cols=100&client=a")).await;
    expect_resize(&mut a, 24, 80, "a is told the session's size").await;
    let mut b = connect(&daemon, &format!("/sessions/{id}/stream?rows=20&cols=60")).await;
    expect_resize(&mut b, 24, 80, "b is told the session's size").await;
    a.send(Message::text(r#"{"type":"resize","rows":35,"cols":110}"#)).await.unwrap();
    let (status, _) =
        daemon.post(&format!("/sessions/{id}/resize"), json!({"rows": 33, "cols": 99, "client": "a"})).await;
    assert_eq!(status, 200);
    assert_eq!(stty(&daemon, &id, 1).await, "24 80");
    let (status, _) = daemon.post(&format!("/sessions/{id}/resize"), json!({"rows": 40, "cols": 90})).await;
    assert_eq!(status, 200);
    for (socket, who) in [(&mut old, "old"), (&mut a, "a"), (&mut b, "b")] {
        expect_resize(socket, 40, 90, who).await;
    }
    assert_eq!(stty(&daemon, &id, 2).await, "40 90");
}

#[tokio::test]
async fn a_bad_size_on_the_stream_is_refused_before_the_upgrade() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let upgrade = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    for (query, named) in [("rows=0&cols=80", "rows"), ("rows=24", "give both"), ("rows=24&cols=501", "cols")] {
        let request = format!("GET /sessions/{id}/stream?{query} HTTP/1.1\r\nHost: tuic\r\n{upgrade}\r\n");
        let response = daemon.raw(request.as_bytes()).await;
        assert!(response.starts_with("HTTP/1.1 400"), "{response}");
        assert!(response.contains(named), "{response}");
    }
}
