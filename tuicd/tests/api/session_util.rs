//! Helpers shared by the session, stream and monitor tests.

#![allow(dead_code)]

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{DEADLINE, Daemon, wait_until};

/// Creates a `/bin/sh` session in `/` (plus `extra` fields) and returns its JSON answer.
pub(crate) async fn create(daemon: &Daemon, extra: Value) -> Value {
    let mut body = json!({"shell": "/bin/sh", "cwd": "/"});
    crate::harness::merge(&mut body, extra);
    let (status, created) = daemon.post("/sessions", body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    // Typed-ahead input would be echoed before the prompt; wait for the shell's first output.
    let id = created["session_id"].as_str().unwrap().to_owned();
    wait_until("the shell's first output", DEADLINE, || async {
        let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
        (info["total_written"].as_u64() > Some(0) || info["exited"] == true).then_some(())
    })
    .await;
    created
}

pub(crate) async fn create_id(daemon: &Daemon, extra: Value) -> String {
    create(daemon, extra).await["session_id"].as_str().unwrap().to_owned()
}

pub(crate) async fn write(daemon: &Daemon, id: &str, data: &str) {
    let (status, body) = daemon.post(&format!("/sessions/{id}/write"), json!({"data": data})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// Waits until the session's text output (log + screen) contains `needle`.
pub(crate) async fn wait_text(daemon: &Daemon, id: &str, needle: &str) -> String {
    wait_until(&format!("'{needle}' in the output of {id}"), DEADLINE, || async {
        let (_, out) = daemon.get(&format!("/sessions/{id}/output?format=text")).await;
        let text = out["data"].as_str().unwrap_or_default().to_owned();
        text.contains(needle).then_some(text)
    })
    .await
}

pub(crate) async fn wait_exited(daemon: &Daemon, id: &str) -> Value {
    wait_until(&format!("session {id} exited"), DEADLINE, || async {
        let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
        (info["exited"] == true).then_some(info)
    })
    .await
}
