//! The confirm flow's REST side: `/events?ui=`, `POST /ui/confirm/:id`, `GET /ui/confirms`.
//! (The gated operations that ask through it test the whole round trip.)

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{ConfirmAnswerer, DEADLINE, Daemon, wait_until};

#[tokio::test]
async fn answers_to_unknown_or_malformed_confirmations_are_refused() {
    let daemon = Daemon::start().await;
    let (status, body) = daemon.get("/ui/confirms").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"confirms": [], "answerers": {"confirm": 0, "screenshot": 0}}));

    let (status, body) = daemon.post("/ui/confirm/confirm-1", json!({"confirmed": true})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body["error"].as_str().unwrap().contains("confirm-1"), "{body}");

    let (status, body) = daemon.post("/ui/confirm/confirm-1", json!({"confirmed": "yes"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("confirmed"), "{body}");
    let (status, body) = daemon.post("/ui/confirm/confirm-1", json!({"confirmed": true, "extra": 1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    let (status, _) = daemon.get("/ui/confirm/confirm-1").await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn an_events_stream_declares_what_it_answers() {
    let daemon = Daemon::start().await;
    let (status, body) = daemon.get("/events?ui=telepathy").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("confirm, screenshot"), "{body}");
    let (status, body) = daemon.get("/events?ui=").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // A declared answerer counts while its stream is open, and stops counting when it closes.
    let answerer = ConfirmAnswerer::start(&daemon, true).await;
    let gui = daemon.client.get(Daemon::url("/events?ui=confirm,screenshot")).send().await.unwrap();
    assert_eq!(gui.status(), StatusCode::OK);
    let (_, body) = daemon.get("/ui/confirms").await;
    assert_eq!(body["answerers"], json!({"confirm": 2, "screenshot": 1}));
    drop(gui);
    drop(answerer);
    wait_until("both answerers withdrawn", DEADLINE, || async {
        let (_, body) = daemon.get("/ui/confirms").await;
        (body["answerers"] == json!({"confirm": 0, "screenshot": 0})).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_process_inside_a_tuicd_terminal_cannot_answer_a_persons_confirmation() {
    let daemon = Daemon::start().await;
    // A person's UI client is connected (it holds the stream), so the question waits for an answer.
    let person = daemon.client.get(Daemon::url("/events?ui=confirm")).send().await.unwrap();
    assert_eq!(person.status(), StatusCode::OK);
    let asking = tokio::spawn({
        let client = daemon.client.clone();
        async move {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "ui", "arguments": {"action": "confirm", "message": "push to main?"}}});
            let reply = client
                .post(Daemon::url("/mcp"))
                .header("Accept", "application/json, text/event-stream")
                .json(&body)
                .send()
                .await
                .unwrap();
            reply.text().await.unwrap()
        }
    });
    let pending = wait_until("the confirmation to wait", DEADLINE, || async {
        let (_, body) = daemon.get("/ui/confirms").await;
        body["confirms"].as_array().and_then(|c| c.first()).map(|c| c["id"].as_str().unwrap().to_owned())
    })
    .await;
    // An agent in a terminal answers it itself, through the same socket.
    let out = daemon.dir.path().join("answer.txt");
    let script = format!(
        "curl -s --unix-socket '{}' -H 'content-type: application/json' -d '{{\"confirmed\":true}}' \
         -o '{out}.body' -w '%{{http_code}}' http://tuic/ui/confirm/{pending} > '{out}.tmp'; mv '{out}.tmp' '{out}'; exec sleep 30",
        daemon.socket.display(),
        out = out.display(),
    );
    let (status, created) =
        daemon.post("/sessions", json!({"shell": "/bin/sh", "args": ["-c", script], "cwd": daemon.dir.path()})).await;
    assert!(status.is_success(), "{created}");
    let code = wait_until("the agent's answer", DEADLINE, || async { std::fs::read_to_string(&out).ok() }).await;
    let body = std::fs::read_to_string(format!("{}.body", out.display())).unwrap();
    assert_eq!(code, "403", "{body}");
    assert!(body.contains("answered by a person") && body.contains(created["alias"].as_str().unwrap()), "{body}");
    // The person answers; the asker gets it.
    let (status, body) = daemon.post(&format!("/ui/confirm/{pending}"), json!({"confirmed": true})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answer = asking.await.unwrap();
    assert!(answer.contains(r#"\"confirmed\":true"#), "{answer}");
    drop(person);
}
