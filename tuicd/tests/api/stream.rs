//! `/sessions/:id/stream` WebSocket: catch-up, live frames, input, lag resync, nothing lost at exit.

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::harness::{DEADLINE, Daemon};
use crate::session_util::{create_id, wait_exited, write};

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::UnixStream>;

pub(crate) async fn connect(daemon: &Daemon, path: &str) -> Socket {
    let stream = tokio::net::UnixStream::connect(&daemon.socket).await.unwrap();
    let (socket, response) = tokio_tungstenite::client_async(format!("ws://tuic{path}"), stream).await.unwrap();
    assert_eq!(response.status(), 101);
    socket
}

/// Everything a client saw until the server closed the socket.
#[derive(Debug, Default)]
struct Transcript {
    data: String,
    /// (cursor, total_written) of each output frame.
    spans: Vec<(u64, u64)>,
    missed: u64,
    frames: Vec<String>,
    exit: Option<Value>,
    /// Output frames that came as binary frames (`?binary=1`).
    binary_frames: usize,
}

async fn read_to_close<S>(socket: &mut tokio_tungstenite::WebSocketStream<S>) -> Transcript
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut t = Transcript::default();
    loop {
        let message = tokio::time::timeout(DEADLINE, socket.next()).await.expect("a frame or close in time");
        let text = match message {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Binary(frame))) => {
                // An 8-byte big-endian cursor, then raw bytes (ASCII in these tests).
                assert!(t.exit.is_none(), "output after exit");
                let cursor = u64::from_be_bytes(frame[..8].try_into().unwrap());
                t.data.push_str(std::str::from_utf8(&frame[8..]).unwrap());
                t.spans.push((cursor, cursor + frame.len() as u64 - 8));
                t.binary_frames += 1;
                t.frames.push("output".into());
                continue;
            }
            Some(Ok(Message::Close(_))) | None => return t,
            Some(Ok(_)) => continue,
            Some(Err(e)) => panic!("socket error: {e}"),
        };
        let frame: Value = serde_json::from_str(&text).unwrap();
        let kind = frame["type"].as_str().unwrap().to_owned();
        match kind.as_str() {
            "output" => {
                assert!(t.exit.is_none(), "output after exit");
                t.data.push_str(frame["data"].as_str().unwrap());
                t.spans.push((frame["cursor"].as_u64().unwrap(), frame["total_written"].as_u64().unwrap()));
            }
            "lagged" => t.missed += frame["missed"].as_u64().unwrap(),
            "exit" => t.exit = Some(frame.clone()),
            _ => {}
        }
        t.frames.push(kind);
    }
}

/// Consecutive output frames cover consecutive byte ranges (a lag notice may skip forward).
fn assert_contiguous(t: &Transcript, from: u64) {
    let mut expected = from;
    for &(cursor, end) in &t.spans {
        assert!(cursor >= expected, "duplicate bytes: frame at {cursor}, expected {expected}");
        assert!(t.missed > 0 || cursor == expected, "gap: frame at {cursor}, expected {expected}");
        expected = end;
    }
}

/// The client got the whole output of `seq 1 last` from cursor 0, once, in order, then `exit` and
/// `closed`.
fn assert_whole_seq(t: &Transcript, info: &Value, last: u64, what: &str) {
    assert_eq!(t.missed, 0, "{what}");
    assert_contiguous(t, 0);
    assert_eq!(t.data.len() as u64, info["total_written"].as_u64().unwrap(), "{what}");
    let numbers: Vec<u64> = t.data.split("\r\n").filter_map(|l| l.trim().parse().ok()).collect();
    assert_eq!(numbers, (1..=last).collect::<Vec<u64>>(), "{what}");
    assert_eq!(&t.frames[t.frames.len() - 2..], ["exit", "closed"], "{what}");
}

#[tokio::test]
async fn a_flood_then_exit_reaches_the_client_byte_for_byte_before_exit() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream?cursor=0")).await;
    // ~1.5 MB of ASCII, then an immediate exit: the last chunk is the one a naive server drops.
    write(&daemon, &id, "stty -echo; seq 1 200000; exit 0\n").await;
    let t = read_to_close(&mut socket).await;
    let info = wait_exited(&daemon, &id).await;
    let total = info["total_written"].as_u64().unwrap();
    assert_eq!(t.missed, 0);
    assert_eq!(t.data.len() as u64, total, "every byte before the exit frame");
    assert_contiguous(&t, 0);
    assert!(t.data.contains("\r\n200000\r\n"));
    assert_eq!(&t.frames[t.frames.len() - 2..], ["exit", "closed"]);
    assert_eq!(t.exit.unwrap()["exit_code"], 0);
    // The screen model rests under a flood (its parse budget) but is current by the exit: the
    // last rows are on the screen and the rows just above them are the log's last lines.
    let (_, out) = daemon.get(&format!("/sessions/{id}/output?format=log")).await;
    let rows: Vec<&str> = out["screen"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    assert!(rows.contains(&"200000") && rows.contains(&"199990"), "{rows:?}");
    let last_logged: u32 = out["lines"].as_array().unwrap().last().unwrap().as_str().unwrap().parse().unwrap();
    assert!((199_950..199_990).contains(&last_logged), "last log line {last_logged}, screen {rows:?}");
}

/// Floods `seq 1 last` (with a pause after 50000) and joins the stream from cursor 0 once more
/// than 100 KB were written: part catch-up from the ring, part live, the last chunk at exit.
/// Returns what the client read and the session's info after it exited.
async fn join_mid_flood(daemon: &Daemon, last: u32, query: &str) -> (Transcript, Value) {
    let id = create_id(daemon, json!({})).await;
    write(daemon, &id, &format!("stty -echo; seq 1 50000; sleep 0.2; seq 50001 {last}; exit 0\n")).await;
    crate::harness::wait_until("the flood started", DEADLINE, || async {
        let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
        (info["total_written"].as_u64().unwrap() > 100_000).then_some(())
    })
    .await;
    let mut socket = connect(daemon, &format!("/sessions/{id}/stream?cursor=0{query}")).await;
    let t = read_to_close(&mut socket).await;
    (t, wait_exited(daemon, &id).await)
}

#[tokio::test]
async fn catch_up_plus_live_has_no_gap_and_no_duplicate_under_a_flood() {
    let daemon = Daemon::start().await;
    let (t, info) = join_mid_flood(&daemon, 150_000, "").await;
    assert_eq!(t.missed, 0);
    assert_contiguous(&t, 0);
    assert_eq!(t.data.len() as u64, info["total_written"].as_u64().unwrap());
    let numbers: Vec<u64> = t.data.split("\r\n").filter_map(|l| l.trim().parse().ok()).collect();
    assert_eq!(numbers, (1..=150000).collect::<Vec<u64>>());
}

#[tokio::test]
async fn a_stalled_client_is_told_it_lagged_and_resynced_from_the_ring() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream?cursor=0")).await;
    // ~13 MB while this client reads nothing: beyond the broadcast's window (at most 8 MiB), the
    // 2 MiB ring and the socket buffers.
    write(&daemon, &id, "stty -echo; seq 1 1500000; exit 0\n").await;
    let started = std::time::Instant::now();
    crate::harness::wait_until("the flood ended", 3 * DEADLINE, || async {
        let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
        (info["exited"] == true).then_some(())
    })
    .await;
    eprintln!("flood of 13 MB took {:?}", started.elapsed());
    let t = read_to_close(&mut socket).await;
    let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
    let total = info["total_written"].as_u64().unwrap();
    assert!(t.missed > 0, "the stalled client was told it lagged");
    assert_eq!(t.data.len() as u64 + t.missed, total, "what it got plus what it was told it missed");
    assert!(t.data.ends_with("1500000\r\n"));
    assert_eq!(&t.frames[t.frames.len() - 2..], ["exit", "closed"]);
    let (_, metrics) = daemon.get("/metrics").await;
    assert!(metrics["ws_lag_resyncs"].as_u64().unwrap() >= 1 || t.spans[0].0 > 0);
}

/// The daemon's reader thread writes output frames straight to the client's socket; once the
/// socket has not taken the rest of a frame it cut short by the next chunk, the reader hands the
/// output back to the client's task, which sends that rest and relays from the ring. A client that
/// stops reading and comes back while the ring still has everything loses nothing, in both
/// framings.
#[tokio::test]
async fn a_client_that_stops_reading_within_the_ring_gets_every_byte_once() {
    let daemon = Daemon::start().await;
    for query in ["", "&binary=1"] {
        let id = create_id(&daemon, json!({})).await;
        let mut socket = connect(&daemon, &format!("/sessions/{id}/stream?cursor=0{query}")).await;
        let (_, before) = daemon.get("/metrics").await;
        // ~1.5 MB: well beyond the socket's buffers, within the 2 MiB ring.
        write(&daemon, &id, "stty -echo; seq 1 200000; exit 0\n").await;
        let info = wait_exited(&daemon, &id).await;
        let t = read_to_close(&mut socket).await;
        assert_whole_seq(&t, &info, 200_000, query);
        let (_, after) = daemon.get("/metrics").await;
        let resyncs = |m: &Value| m["ws_lag_resyncs"].as_u64().unwrap();
        assert!(resyncs(&after) > resyncs(&before), "the full socket sent the output back to the task ({query})");
    }
}

/// The client's task answers pings through the same socket the reader thread is writing output
/// frames to: under a flood every pong arrives and no frame is torn (the client would fail to
/// parse the stream), in both framings.
#[tokio::test]
async fn pings_during_a_flood_get_pongs_and_leave_the_frames_whole() {
    const PINGS: usize = 50;
    let daemon = Daemon::start().await;
    for query in ["", "&binary=1"] {
        let id = create_id(&daemon, json!({})).await;
        let socket = connect(&daemon, &format!("/sessions/{id}/stream?cursor=0{query}")).await;
        let (mut sink, mut stream) = socket.split();
        // ~1.5 MB: within the ring, so however the pings slow this client nothing is lost.
        // It exits only when told, once every ping had its pong.
        write(&daemon, &id, "stty -echo; seq 1 200000; read done; exit 0\n").await;
        let (mut pings, mut pongs, mut next, mut text) = (0, 0, 0u64, String::new());
        let mut told = false;
        loop {
            let message = tokio::time::timeout(DEADLINE, stream.next()).await.expect("a frame in time");
            match message.expect("the stream stays open until closed").expect("every frame parses") {
                Message::Pong(_) => pongs += 1,
                Message::Binary(frame) => {
                    assert_eq!(u64::from_be_bytes(frame[..8].try_into().unwrap()), next);
                    next += frame.len() as u64 - 8;
                    text.push_str(std::str::from_utf8(&frame[8..]).unwrap());
                }
                Message::Text(frame) => {
                    let frame: Value = serde_json::from_str(&frame).unwrap();
                    if frame["type"] == "output" {
                        assert_eq!(frame["cursor"].as_u64().unwrap(), next);
                        next = frame["total_written"].as_u64().unwrap();
                        text.push_str(frame["data"].as_str().unwrap());
                    }
                }
                Message::Close(_) => break,
                _ => {}
            }
            let all_output = text.ends_with("200000\r\n");
            // A ping after each frame while the output flows.
            if pings < PINGS && next > 0 && !all_output {
                sink.send(Message::Ping(vec![pings as u8].into())).await.unwrap();
                pings += 1;
            }
            if all_output && pongs == pings && !told {
                write(&daemon, &id, "\n").await;
                told = true;
            }
        }
        assert!(pings >= 3, "pings went out during the flood ({query})");
        assert_eq!(pongs, pings, "{query}");
        let numbers: Vec<u64> = text.split("\r\n").filter_map(|l| l.trim().parse().ok()).collect();
        assert_eq!(numbers, (1..=200000).collect::<Vec<u64>>(), "{query}");
    }
}

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}

/// On plain TCP the reader thread writes the output frames to the socket, as on the Unix socket;
/// over TLS it cannot, and the client's task relays them. Both deliver a flood exactly.
#[tokio::test]
async fn a_flood_arrives_whole_over_plain_tcp_and_over_tls() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    crate::harness::install_crypto();
    let certs = tempfile::tempdir().unwrap();
    let (cert, key) = crate::harness::make_cert(certs.path());
    for tls in [false, true] {
        let port = crate::harness::free_port();
        let auth = json!({"username": "me", "password_hash": crate::harness::quick_hash("right")});
        let mut services = json!({"server": {"enabled": true, "port": port}, "auth": auth});
        if tls {
            services["tls"] = json!({"cert_path": cert, "key_path": key});
        }
        let daemon = Daemon::builder().config(json!({ "services": services })).start().await;
        let id = create_id(&daemon, json!({})).await;
        let mut request = format!("ws://localhost:{port}/sessions/{id}/stream?cursor=0").into_client_request().unwrap();
        request.headers_mut().insert("authorization", "Basic bWU6cmlnaHQ=".parse().unwrap()); // me:right
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let stream: Box<dyn Io> = if tls {
            use rustls_pki_types::pem::PemObject;
            let mut roots = rustls::RootCertStore::empty();
            roots.add(rustls_pki_types::CertificateDer::from_pem_file(&cert).unwrap()).unwrap();
            let config = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
            let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
            let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
            Box::new(connector.connect(name, tcp).await.unwrap())
        } else {
            Box::new(tcp)
        };
        let (mut socket, response) = tokio_tungstenite::client_async(request, stream).await.unwrap();
        assert_eq!(response.status(), 101);
        // Output starts once the client is attached: live frames, not a replay.
        write(&daemon, &id, "stty -echo; seq 1 100000; exit 0\n").await;
        let t = read_to_close(&mut socket).await;
        let info = wait_exited(&daemon, &id).await;
        assert_whole_seq(&t, &info, 100_000, if tls { "tls" } else { "plain tcp" });
    }
}

/// A malformed upgrade is refused before the switch, naming what was wrong; a plain GET too.
#[tokio::test]
async fn a_bad_upgrade_request_is_refused_with_what_was_wrong() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let head = format!("GET /sessions/{id}/stream HTTP/1.1\r\nHost: tuic\r\nConnection: close\r\n");
    let upgrade = "Connection: Upgrade\r\nUpgrade: websocket\r\n";
    let cases = [
        (format!("{head}{upgrade}Sec-WebSocket-Version: 13\r\n\r\n"), "Sec-WebSocket-Key"),
        (
            format!("{head}{upgrade}Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n"),
            "Sec-WebSocket-Version",
        ),
        (format!("{head}\r\n"), "expects a WebSocket upgrade"),
    ];
    for (request, named) in cases {
        let response = daemon.raw(request.as_bytes()).await;
        assert!(response.starts_with("HTTP/1.1 400"), "{response}");
        assert!(response.contains(named), "{response}");
    }
    // Nothing changed: the session still streams.
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream")).await;
    write(&daemon, &id, "exit 0\n").await;
    assert_eq!(read_to_close(&mut socket).await.frames.last().map(String::as_str), Some("closed"));
}

#[tokio::test]
async fn client_frames_are_written_to_the_pty() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream")).await;
    socket.send(Message::text("echo from-ws-$((6*7))\n")).await.unwrap();
    socket.send(Message::binary(b"exit 4\n".to_vec())).await.unwrap();
    let t = read_to_close(&mut socket).await;
    assert!(t.data.contains("from-ws-42"), "{}", t.data);
    assert_eq!(t.exit.unwrap()["exit_code"], 4);
}

#[tokio::test]
async fn a_tombstone_stream_replays_then_closes() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    write(&daemon, &id, "echo last-words; exit 2\n").await;
    wait_exited(&daemon, &id).await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream")).await;
    let t = read_to_close(&mut socket).await;
    assert!(t.data.contains("last-words"));
    assert_eq!(t.exit.unwrap()["exit_code"], 2);
    assert_eq!(t.frames.last().unwrap(), "closed");
}

/// Waits until the session's output ends with `tail` (the child is then waiting for input) and
/// returns the cursor just past it.
async fn cursor_once_output_ends_with(daemon: &Daemon, id: &str, tail: &str) -> u64 {
    crate::harness::wait_until(&format!("output ending with {tail:?}"), DEADLINE, || async {
        let (_, out) = daemon.get(&format!("/sessions/{id}/output?limit=20")).await;
        out["data"].as_str().unwrap().ends_with(tail).then(|| out["total_written"].as_u64().unwrap())
    })
    .await
}

#[tokio::test]
async fn a_reconnecting_client_resumes_exactly_at_its_cursor() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    write(&daemon, &id, "stty -echo; seq 1 3000; read x; seq 3001 6000; exit 0\n").await;
    let cursor = cursor_once_output_ends_with(&daemon, &id, "3000\r\n").await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream?cursor={cursor}")).await;
    write(&daemon, &id, "\n").await;
    let t = read_to_close(&mut socket).await;
    assert_contiguous(&t, cursor);
    assert_eq!(t.spans.first().map(|s| s.0), Some(cursor));
    let numbers: Vec<u64> = t.data.split("\r\n").filter_map(|l| l.trim().parse().ok()).collect();
    assert_eq!(numbers, (3001..=6000).collect::<Vec<u64>>());
}

#[tokio::test]
async fn shutdown_closes_open_streams_and_the_daemon_exits() {
    let mut daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream")).await;
    let status = daemon.stop_with(crate::harness::SIGTERM).await;
    assert!(status.success(), "{status}");
    // The socket ends (read_to_close panics after the deadline otherwise): either with the
    // session's own `exit`/`closed` frames or with the shutdown close frame.
    let t = read_to_close(&mut socket).await;
    if let Some(i) = t.frames.iter().position(|f| f == "closed") {
        assert_eq!(i, t.frames.len() - 1, "closed is the last frame");
    }
}

#[tokio::test]
async fn title_and_alternate_screen_changes_arrive_as_parsed_frames() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream")).await;
    write(
        &daemon,
        &id,
        "stty -echo; printf '\\033]0;my-\\164itle\\007\\033[?1049hfull'; read x; printf '\\033[?1049l'; exit 0\n",
    )
    .await;
    let mut parsed = Vec::new();
    let mut answered = false;
    loop {
        let message = tokio::time::timeout(DEADLINE, socket.next()).await.expect("a frame in time");
        let Some(Ok(Message::Text(text))) = message else { break };
        let frame: Value = serde_json::from_str(&text).unwrap();
        if frame["type"] == "parsed" {
            parsed.push(frame["event"].clone());
        }
        // A full-screen program that entered the alternate screen leaves it later, in another read.
        if !answered && parsed.contains(&json!({"type": "alternate_screen", "active": true})) {
            answered = true;
            write(&daemon, &id, "\n").await;
        }
    }
    assert!(parsed.contains(&json!({"type": "title", "title": "my-title"})), "{parsed:?}");
    assert!(parsed.contains(&json!({"type": "alternate_screen", "active": true})), "{parsed:?}");
    assert!(parsed.contains(&json!({"type": "alternate_screen", "active": false})), "{parsed:?}");
}

#[tokio::test]
async fn binary_mode_delivers_every_byte_of_a_flood_before_exit_and_catch_up_joins_live() {
    let daemon = Daemon::start().await;
    let (t, info) = join_mid_flood(&daemon, 250_000, "&binary=1").await;
    assert_eq!(t.missed, 0);
    assert!(t.binary_frames > 0 && t.binary_frames == t.spans.len(), "output came as binary frames only");
    assert_contiguous(&t, 0);
    assert_eq!(t.data.len() as u64, info["total_written"].as_u64().unwrap(), "every byte before exit");
    let numbers: Vec<u64> = t.data.split("\r\n").filter_map(|l| l.trim().parse().ok()).collect();
    assert_eq!(numbers, (1..=250000).collect::<Vec<u64>>());
    assert_eq!(&t.frames[t.frames.len() - 2..], ["exit", "closed"], "exit and closed stay JSON");
    assert_eq!(t.exit.unwrap()["exit_code"], 0);
}

#[tokio::test]
async fn binary_mode_resumes_at_a_cursor_and_rejects_a_bad_value() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    write(&daemon, &id, "stty -echo; echo first; read x; echo second; exit 0\n").await;
    let cursor = cursor_once_output_ends_with(&daemon, &id, "first\r\n").await;
    let mut socket = connect(&daemon, &format!("/sessions/{id}/stream?cursor={cursor}&binary=true")).await;
    // Input works the same in binary mode.
    socket.send(Message::binary(b"\n".to_vec())).await.unwrap();
    let t = read_to_close(&mut socket).await;
    assert_eq!(t.spans.first().map(|s| s.0), Some(cursor));
    assert_contiguous(&t, cursor);
    assert_eq!(t.data, "second\r\n");
    let (status, body) = daemon.get(&format!("/sessions/{id}/stream?binary=yes")).await;
    assert_eq!(status, 400, "{body}");
}

/// Input first: a client that reads none of a flood's output still interrupts it. Its Ctrl-C
/// frame reaches the PTY while its output is backlogged (the socket full, the task blocked
/// sending), in both framings and whether the reader thread or the task was writing.
#[tokio::test]
async fn ctrl_c_from_a_client_that_reads_nothing_stops_a_flood() {
    let daemon = Daemon::start().await;
    for query in ["", "&binary=1"] {
        let id = create_id(&daemon, json!({"shell": "/bin/sh", "args": ["-c", "stty -echo; yes flood-line"]})).await;
        let mut socket = connect(&daemon, &format!("/sessions/{id}/stream?cursor=0{query}")).await;
        // Well past the socket buffers (a few hundred KiB): this client's output is backlogged.
        crate::harness::wait_until("the flood backlogged this client", DEADLINE, || async {
            let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
            (info["total_written"].as_u64().unwrap_or(0) > 8 << 20).then_some(())
        })
        .await;
        let sent = std::time::Instant::now();
        socket.send(Message::text("\u{3}")).await.unwrap();
        crate::harness::wait_until("Ctrl-C ended the flood", DEADLINE, || async {
            let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
            (info["exited"] == true).then_some(())
        })
        .await;
        eprintln!("Ctrl-C to exit with the output backlogged ({query}): {:?}", sent.elapsed());
    }
}

/// The daemon is the terminal: a program's cursor report, device attributes and background
/// colour queries are answered, exactly once, with no client attached and with two.
#[tokio::test]
async fn terminal_queries_are_answered_once_by_the_daemon_with_no_client_or_two() {
    // Raw mode so the replies reach `read` without a newline; after the three replies, anything
    // more within half a second would be a second answer.
    let script = r#"stty raw -echo; printf 'abc\033[6n\033[c\033]11;?\033\\'
IFS= read -r -d R cpr; IFS= read -r -d c da; IFS= read -r -d '\' bg
if IFS= read -r -t 0.5 -n 1 extra; then more=EXTRA; else more=NONE; fi
stty sane; printf '\ncpr:%q da:%q bg:%q more:%s\n' "${cpr#?}" "${da#?}" "${bg#?}" "$more"; sleep 30"#;
    let daemon = Daemon::start().await;
    for clients in [0, 2] {
        let id = create_id(&daemon, json!({"shell": "/bin/bash", "args": ["-c", script]})).await;
        let mut attached = Vec::new();
        for _ in 0..clients {
            attached.push(connect(&daemon, &format!("/sessions/{id}/stream")).await);
        }
        let text = crate::session_util::wait_text(&daemon, &id, "more:").await;
        assert!(text.contains(r"cpr:\[1\;4"), "the cursor after 'abc' is row 1, column 4 ({clients} clients): {text}");
        assert!(text.contains(r"da:\[\?1\;2"), "device attributes ({clients} clients): {text}");
        assert!(text.contains("11;rgb:1e1e/1e1e/1e1e"), "the background colour ({clients} clients): {text}");
        assert!(text.contains("more:NONE"), "each query answered once ({clients} clients): {text}");
    }
}

/// `GET /sessions/:id/recording.cast`: the ring as an asciicast v2 recording with the times the
/// bytes were written, which the real asciinema reads back byte for byte.
#[tokio::test]
async fn the_recording_of_a_session_plays_back_in_asciinema_with_its_real_timings() {
    let asciinema = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/.venv-asciinema/bin/asciinema");
    assert!(asciinema.exists(), "{} is missing: run `bash tests/interop/setup.sh` first", asciinema.display());
    let daemon = Daemon::start().await;
    let script = r"printf 'one\n'; sleep 0.4; printf '\033[31mtwo\033[0m \342\202\254\n'; sleep 30";
    let id = create_id(&daemon, json!({"shell": "/bin/sh", "args": ["-c", script], "rows": 20, "cols": 70})).await;
    crate::session_util::wait_text(&daemon, &id, "two").await;
    let response = daemon.client.get(Daemon::url(&format!("/sessions/{id}/recording.cast"))).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/x-asciicast");
    let cast = response.text().await.unwrap();
    let lines: Vec<Value> = cast.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        (lines[0]["version"].as_u64(), lines[0]["width"].as_u64(), lines[0]["height"].as_u64()),
        (Some(2), Some(70), Some(20))
    );
    let events = &lines[1..];
    let time_of = |needle: &str| {
        events
            .iter()
            .find(|e| e[2].as_str().is_some_and(|t| t.contains(needle)))
            .unwrap_or_else(|| panic!("{needle}: {cast}"))[0]
            .as_f64()
            .unwrap()
    };
    assert!(time_of("two") - time_of("one") >= 0.3, "real timings: {cast}");
    assert!(events.windows(2).all(|w| w[0][0].as_f64() <= w[1][0].as_f64()), "times never go back: {cast}");

    let file = daemon.dir.path().join("session.cast");
    std::fs::write(&file, &cast).unwrap();
    let played = std::process::Command::new(&asciinema).arg("cat").arg(&file).output().unwrap();
    assert!(played.status.success(), "asciinema cat: {}", String::from_utf8_lossy(&played.stderr));
    let (_, ring) = daemon.get(&format!("/sessions/{id}/output?limit=100000")).await;
    assert_eq!(
        String::from_utf8_lossy(&played.stdout),
        ring["data"].as_str().unwrap(),
        "asciinema plays back the ring exactly"
    );
}
