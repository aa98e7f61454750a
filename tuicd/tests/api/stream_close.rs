//! `/sessions/:id/stream`: the close handshake of RFC 6455, driven by tungstenite as the client.

use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};

use crate::harness::{DEADLINE, Daemon, wait_until};
use crate::session_util::{create_id, wait_text, write};
use crate::stream::connect;

/// Working through a flood's backlog can take the screen model longer than [`DEADLINE`].
const FLOOD_DRAIN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// Reads past the frames the server sent before its Close, and returns that Close; fails when the
/// connection ends without one (what a client reports as 1006).
async fn close_frame<S>(socket: &mut tokio_tungstenite::WebSocketStream<S>) -> Option<CloseFrame>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    loop {
        match tokio::time::timeout(DEADLINE, socket.next()).await.expect("a Close frame in time") {
            Some(Ok(Message::Close(frame))) => return frame,
            Some(Ok(_)) => {}
            Some(Err(e)) => panic!("the connection ended without a Close frame: {e}"),
            None => panic!("the connection ended without a Close frame"),
        }
    }
}

#[tokio::test]
async fn a_clients_close_is_answered_with_a_close_frame() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream")).await;
    socket.send(Message::Close(Some(CloseFrame { code: CloseCode::Normal, reason: "bye".into() }))).await.unwrap();
    let reply = close_frame(&mut socket).await.expect("the reply carries a code");
    assert_eq!(reply.code, CloseCode::Normal);
    // The handshake is complete: the stream ends cleanly, and the session lives on.
    assert!(tokio::time::timeout(DEADLINE, socket.next()).await.unwrap().is_none());
    write(&daemon, &id, "echo still-$((20+1))\n").await;
    wait_text(&daemon, &id, "still-21").await;
}

#[tokio::test]
async fn a_text_frame_that_is_not_utf8_closes_the_stream_with_1007_and_writes_nothing() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream")).await;
    let bad = Frame::message(b"echo bad-\xff\xfe-input\n".to_vec(), OpCode::Data(Data::Text), true);
    socket.send(Message::Frame(bad)).await.unwrap();
    let reply = close_frame(&mut socket).await.expect("the Close names the fault");
    assert_eq!(reply.code, CloseCode::Invalid);
    assert!(reply.reason.contains("UTF-8"), "{}", reply.reason);
    // Nothing of the refused frame reached the terminal.
    write(&daemon, &id, "echo after-$((40+2))\n").await;
    let screen = wait_text(&daemon, &id, "after-42").await;
    assert!(!screen.contains("bad-"), "{screen}");
}

/// While the reader thread is writing a flood's output frames to the socket, a client's Close is
/// still answered with a Close: every frame before it arrives whole (a torn frame would end the
/// stream with a protocol error instead) and none follows it.
#[tokio::test]
async fn a_close_during_a_flood_gets_a_close_after_whole_frames() {
    let daemon = Daemon::start().await;
    for query in ["", "?binary=1"] {
        let id = create_id(&daemon, json!({})).await;
        let mut socket = connect(&daemon, &format!("/sessions/{id}/stream{query}")).await;
        // 6.9 MB: well beyond the 20 frames (at most 128 KiB each) read before the Close, and a
        // bounded backlog for the screen model to work through after the Ctrl-C.
        write(&daemon, &id, "stty -echo; seq 1 1000000\n").await;
        // Output is flowing: the close lands in the middle of the flood.
        let mut frames = 0;
        while frames < 20 {
            match tokio::time::timeout(DEADLINE, socket.next()).await.expect("output in time") {
                Some(Ok(Message::Text(_) | Message::Binary(_))) => frames += 1,
                Some(Ok(_)) => {}
                other => panic!("the stream ended during the flood: {other:?}"),
            }
        }
        socket.send(Message::Close(Some(CloseFrame { code: CloseCode::Normal, reason: "bye".into() }))).await.unwrap();
        let reply = close_frame(&mut socket).await.expect("the reply carries a code");
        assert_eq!(reply.code, CloseCode::Normal, "{query}");
        assert!(tokio::time::timeout(DEADLINE, socket.next()).await.unwrap().is_none(), "nothing after the Close");
        write(&daemon, &id, "\x03").await;
        write(&daemon, &id, "echo after-$((40+3))\n").await;
        // The screen shows the echo only once its parser (a debug build here) has worked through
        // the megabytes read before the Ctrl-C: seconds on a loaded machine.
        wait_until("'after-43' in the output", FLOOD_DRAIN_DEADLINE, || async {
            let (_, out) = daemon.get(&format!("/sessions/{id}/output?format=text")).await;
            out["data"].as_str().is_some_and(|t| t.contains("after-43")).then_some(())
        })
        .await;
    }
}
