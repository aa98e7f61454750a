//! One HTTP/1.1 request at a time on a kept-alive Unix-socket connection, read by its
//! Content-Length: the least client work between the bench and the daemon.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

/// Longest wait for one answer.
const ANSWER_DEADLINE: Duration = Duration::from_secs(10);

/// Sends `method path` with `headers` and a JSON `body`; returns the status and the body.
pub(crate) async fn request(
    conn: &mut UnixStream,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<u8>) {
    let (status, _, body) = exchange(conn, method, path, headers, body).await;
    (status, body)
}

/// [`request`], also answering the response head, lowercased (for its headers).
pub(crate) async fn exchange(
    conn: &mut UnixStream,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, Vec<u8>) {
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: tuic\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()));
    let exchange = async {
        conn.write_all(request.as_bytes()).await.unwrap();
        let mut data = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        loop {
            if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n").map(|at| at + 4) {
                let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                if data.len() >= end + length {
                    let status = head[9..12].parse().unwrap();
                    return (status, head, data[end..end + length].to_vec());
                }
            }
            let n = conn.read(&mut buf).await.unwrap();
            assert!(n > 0, "tuicd closed the connection");
            data.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(ANSWER_DEADLINE, exchange).await.expect("tuicd answers")
}
