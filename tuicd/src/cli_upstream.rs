//! `tuicd upstream authorize NAME` (part of the binary, `main.rs`): asks the running daemon to
//! start an OAuth authorization of upstream NAME, prints the URL for a person to open (on this
//! machine or, over SSH, on theirs), takes a pasted redirect for a browser that cannot reach the
//! daemon's loopback callback port, and waits for the upstream to become ready or the flow to end.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// How often the upstream's status is read while waiting.
const POLL: Duration = Duration::from_millis(500);

pub(crate) async fn authorize(socket: &Path, name: &str) -> ExitCode {
    let (status, started) =
        match request(socket, "POST", &format!("/mcp/upstreams/{name}/authorize"), Some(json!({}))).await {
            Ok(answer) => answer,
            Err(e) => {
                eprintln!("no tuicd running at {}: {e}", socket.display());
                return ExitCode::FAILURE;
            }
        };
    if status != 200 {
        eprintln!("tuicd refused: {}", started["error"].as_str().unwrap_or("unknown error"));
        return ExitCode::FAILURE;
    }
    let url = started["authorization_url"].as_str().unwrap_or_default();
    let origin = started["as_origin"].as_str().unwrap_or_default();
    println!("Open this URL in a browser to authorize upstream {name:?} at {origin}:\n\n  {url}\n");
    if started["cross_domain_as"] == json!(true) {
        println!(
            "Warning: this authorization server is on another domain than the MCP server; continue only if you expect it.\n"
        );
    }
    println!(
        "If the browser runs on another machine, its final page will not load: paste the address it shows\n(http://127.0.0.1:.../callback?...) here and press Enter.\nWaiting for the authorization..."
    );
    let deadline = Instant::now() + tuicd::limits::OAUTH_FLOW_TIMEOUT + Duration::from_secs(30);
    let mut stdin = stdin_lines();
    let mut stdin_open = true;
    let mut seen_authenticating = false;
    while Instant::now() < deadline {
        tokio::select! {
            line = stdin.recv(), if stdin_open => match line {
                Some(line) if line.contains("state=") => paste(socket, line.trim()).await,
                Some(_) => println!("That is not the redirect address (it carries code= and state=)."),
                None => stdin_open = false,
            },
            () = tokio::time::sleep(POLL) => {
                match upstream_status(socket, name).await {
                    Some((status, _)) if status == "authenticating" || status == "connecting" => seen_authenticating = true,
                    // The flow was recorded before the POST answered (the upstream was then
                    // `authenticating`), so `ready` now means it completed.
                    Some((status, tools)) if status == "ready" => {
                        println!("Authorized: upstream {name:?} is ready ({tools} tools).");
                        return ExitCode::SUCCESS;
                    }
                    Some((status, _)) if seen_authenticating && status != "ready" => {
                        eprintln!("The authorization of {name:?} ended without a token (status {status}); see `tuicd` logs.");
                        return ExitCode::FAILURE;
                    }
                    _ => {}
                }
            }
        }
    }
    eprintln!("No redirect arrived in time; run the command again to retry.");
    ExitCode::FAILURE
}

/// Lines typed on stdin, read on their own thread (a blocking read; the process exits with it).
fn stdin_lines() -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel(4);
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    rx
}

async fn paste(socket: &Path, url: &str) {
    match request(socket, "POST", "/mcp/oauth/callback", Some(json!({"url": url}))).await {
        Ok((200, _)) => println!("Redirect accepted."),
        Ok((_, body)) => eprintln!("tuicd refused the redirect: {}", body["error"].as_str().unwrap_or("unknown error")),
        Err(e) => eprintln!("cannot reach tuicd: {e}"),
    }
}

/// The status and tool count of upstream `name`, from `GET /mcp/upstream-status`.
async fn upstream_status(socket: &Path, name: &str) -> Option<(String, u64)> {
    let (_, body) = request(socket, "GET", "/mcp/upstream-status", None).await.ok()?;
    let entry = body["upstreams"].as_array()?.iter().find(|u| u["name"] == json!(name))?.clone();
    Some((entry["status"].as_str()?.to_owned(), entry["tool_count"].as_u64().unwrap_or(0)))
}

/// One request over the daemon's socket, `Connection: close`; the status and the JSON body.
pub(crate) async fn request(
    socket: &Path,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> std::io::Result<(u16, Value)> {
    let ask = async {
        let mut stream = tokio::net::UnixStream::connect(socket).await?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await?;
        Ok::<_, std::io::Error>(response)
    };
    let response = tokio::time::timeout(tuicd::limits::OAUTH_HTTP_TIMEOUT * 2, ask)
        .await
        .map_err(|_| std::io::Error::other("no answer in time"))??;
    let text = String::from_utf8_lossy(&response);
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    Ok((status, serde_json::from_str(body).unwrap_or(Value::Null)))
}
