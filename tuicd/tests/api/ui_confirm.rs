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
