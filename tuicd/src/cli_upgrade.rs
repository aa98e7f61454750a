//! `tuicd upgrade` (part of the binary, `main.rs`): asks the running daemon to re-execute the
//! binary now on disk in place (`POST /daemon/upgrade`), keeping every session. A refusal comes
//! back with its reason; otherwise the connection closes as the process image is replaced, and
//! this waits until the same pid answers `/health` as a new image (`boot_id`).

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli_upstream::request;

/// How long the new image may take to answer.
const UPGRADE_DEADLINE: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(50);

pub(crate) async fn upgrade(socket: &Path) -> ExitCode {
    let before = match request(socket, "GET", "/health", None).await {
        Ok((200, body)) => body,
        Ok((status, body)) => return fail(socket, status, &body),
        Err(e) => {
            eprintln!("tuicd: no daemon answers at {}: {e}", socket.display());
            return ExitCode::FAILURE;
        }
    };
    // A refusal is an answer; a replaced image closes the connection without one.
    match request(socket, "POST", "/daemon/upgrade", None).await {
        Ok((0, _)) | Err(_) => {}
        Ok((status, body)) => return fail(socket, status, &body),
    }
    let started = Instant::now();
    while started.elapsed() < UPGRADE_DEADLINE {
        if let Ok((200, after)) = request(socket, "GET", "/health", None).await
            && after["boot_id"] != before["boot_id"]
        {
            println!(
                "tuicd upgraded in place: pid {} (was {}), {} sessions",
                after["pid"], before["pid"], after["session_count"]
            );
            return ExitCode::SUCCESS;
        }
        tokio::time::sleep(POLL).await;
    }
    eprintln!("tuicd: no new daemon answered at {} within {UPGRADE_DEADLINE:?}", socket.display());
    ExitCode::FAILURE
}

fn fail(socket: &Path, status: u16, body: &Value) -> ExitCode {
    let said = body["error"].as_str().map_or_else(|| body.to_string(), str::to_owned);
    eprintln!("tuicd at {} answered {status}: {said}", socket.display());
    ExitCode::FAILURE
}
