//! `GET /peers`, `GET /peers/:id/inbox` and `GET /progress` as a person supervising agents uses
//! them: two MCP peers (one in an agent's terminal, one external) with mail between them, read
//! without taking it from the agents; every bad input named; readable over remote access.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::agents::fake_agent;
use crate::harness::*;
use crate::mcp_client::*;
use crate::peers::{Peer, contents};

fn peer<'a>(peers: &'a Value, name: &str) -> &'a Value {
    let all = peers["peers"].as_array().expect("a peers array");
    all.iter().find(|p| p["name"] == json!(name)).unwrap_or_else(|| panic!("no peer {name} in {peers}"))
}

#[tokio::test]
async fn a_person_reads_the_peers_and_their_waiting_mail_without_taking_it() {
    let daemon = Daemon::start().await;
    // An agent in a terminal (the fake Claude) and an external MCP client.
    let body = json!({"shell": fake_agent(), "agent_type": "claude", "cwd": daemon.dir.path()});
    let (status, created) = daemon.post("/sessions", body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (session_id, tuic, alias) = (
        created["session_id"].as_str().unwrap().to_owned(),
        created["tuic_session"].as_str().unwrap().to_owned(),
        created["alias"].as_str().unwrap().to_owned(),
    );
    let worker = Peer::in_terminal(&daemon, &tuic).await;
    worker.register(json!({"name": "worker", "project": "p1"})).await;
    let lead = Peer::external(&daemon).await;
    let lead_id = lead.register(json!({"name": "lead"})).await["tuic_session"].as_str().unwrap().to_owned();
    for n in 1..=3 {
        worker.send(&lead_id, &format!("report {n}")).await;
    }

    let (status, peers) = daemon.get("/peers").await;
    assert_eq!(status, StatusCode::OK, "{peers}");
    let names: Vec<&str> = peers["peers"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["worker", "lead"], "oldest registration first");
    let (w, l) = (peer(&peers, "worker"), peer(&peers, "lead"));
    assert_eq!(
        (w["tuic_session"].as_str(), w["session_id"].as_str()),
        (Some(tuic.as_str()), Some(session_id.as_str()))
    );
    assert_eq!((w["alias"].as_str(), w["project"].as_str()), (Some(alias.as_str()), Some("p1")));
    assert_eq!(w["agent_type"], json!("claude"), "{w}");
    assert_eq!((w["inbox_count"].clone(), l["inbox_count"].clone()), (json!(0), json!(3)));
    assert!(l.get("session_id").is_none() && l.get("agent_type").is_none(), "no terminal: {l}");
    for p in [w, l] {
        assert_eq!((p["client"].clone(), p["connected"].clone()), (json!("peer-test"), json!(true)), "{p}");
        let (registered, seen) = (p["registered_at_ms"].as_u64().unwrap(), p["last_seen_ms"].as_u64().unwrap());
        // Both are wall-clock ms; a request's activity is stamped as it starts, so a register can
        // read a millisecond later than the request that made it.
        assert!(registered > 1_700_000_000_000 && seen + 1_000 >= registered, "{p}");
    }

    // The waiting mail, newest last, by any of the peer's names; twice, and nothing moves.
    for address in [lead_id.clone(), lead_id.to_uppercase()] {
        for _ in 0..2 {
            let (status, inbox) = daemon.get(&format!("/peers/{address}/inbox")).await;
            assert_eq!(status, StatusCode::OK, "{inbox}");
            assert_eq!(contents(&inbox), ["report 1", "report 2", "report 3"]);
            assert_eq!(inbox["peer"]["name"], json!("lead"));
            assert_eq!(inbox["messages"][0]["from_name"], json!("worker"));
            assert_eq!(inbox["messages"][0]["from_tuic_session"], json!(tuic));
        }
    }
    let (_, newest) = daemon.get(&format!("/peers/{lead_id}/inbox?limit=2")).await;
    assert_eq!(contents(&newest), ["report 2", "report 3"], "limit keeps the newest");
    lead.send(&alias, "go on").await;
    for address in [alias.as_str(), session_id.as_str(), tuic.as_str()] {
        let (status, inbox) = daemon.get(&format!("/peers/{address}/inbox")).await;
        assert_eq!((status, contents(&inbox)), (StatusCode::OK, vec!["go on".to_owned()]), "{address}: {inbox}");
    }
    // The agent still gets every message; once it has read them, nothing waits.
    assert_eq!(contents(&lead.inbox(None).await), ["report 1", "report 2", "report 3"]);
    let (_, after) = daemon.get(&format!("/peers/{lead_id}/inbox")).await;
    assert!(contents(&after).is_empty(), "{after}");
    let (_, peers) = daemon.get("/peers").await;
    assert_eq!(peer(&peers, "lead")["inbox_count"], json!(0));

    // Bad input: named, and nothing changes.
    let (status, unknown) = daemon.get("/peers/tu-99/inbox").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{unknown}");
    assert!(unknown["error"].as_str().unwrap().contains("\"tu-99\""), "{unknown}");
    for bad in ["0", "101", "abc", "-1"] {
        let (status, refused) = daemon.get(&format!("/peers/{alias}/inbox?limit={bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "limit={bad}: {refused}");
        let error = refused["error"].as_str().unwrap();
        assert!(error.contains("limit") && error.contains(bad), "limit={bad}: {error}");
    }
    let (status, refused) = daemon.get(&format!("/peers/{alias}/inbox?since=0")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("since"), "{refused}");
    let (status, _) = daemon.post("/peers", json!({})).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let (_, still) = daemon.get(&format!("/peers/{alias}/inbox")).await;
    assert_eq!(contents(&still), ["go on"], "refused reads took nothing");
}

#[tokio::test]
async fn the_progress_journal_is_readable_filtered_and_bounded() {
    let daemon = Daemon::start().await;
    let (status, created) = daemon.post("/sessions", json!({"shell": "/bin/sh", "cwd": daemon.dir.path()})).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let tuic = created["tuic_session"].as_str().unwrap().to_owned();
    let (_, empty) = daemon.get("/progress").await;
    assert_eq!(empty, json!({"entries": []}));
    for (kind, text) in [("done", "parser builds"), ("blocked", "need the schema"), ("done", "schema read")] {
        let (is_error, answer) =
            call_as(&daemon, "progress", json!({"type": kind, "text": text}), &[("x-tuic-session", &tuic)]).await;
        assert!(!is_error, "{answer}");
    }
    let (status, all) = daemon.get("/progress").await;
    assert_eq!(status, StatusCode::OK, "{all}");
    let text_of = |v: &Value| -> Vec<String> {
        v["entries"].as_array().unwrap().iter().map(|e| e["text"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(text_of(&all), ["parser builds", "need the schema", "schema read"], "oldest first");
    let agent = all["entries"][0]["agent"].as_str().unwrap().to_owned();
    let (_, newest) = daemon.get("/progress?limit=1").await;
    assert_eq!(text_of(&newest), ["schema read"]);
    let (_, mine) = daemon.get(&format!("/progress?agent={agent}")).await;
    assert_eq!(text_of(&mine).len(), 3);
    let (_, nobody) = daemon.get("/progress?agent=nobody").await;
    assert!(text_of(&nobody).is_empty());
    for bad in ["limit=0", "limit=1001", "since=yesterday", "colour=red"] {
        let (status, refused) = daemon.get(&format!("/progress?{bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {refused}");
        let field = bad.split('=').next().unwrap();
        assert!(refused["error"].as_str().unwrap().contains(field), "{bad}: {refused}");
    }
}

#[tokio::test]
async fn remote_access_reads_peers_and_progress_only_with_the_password() {
    install_crypto();
    let port = free_port();
    let config = json!({"services": {"server": {"enabled": true, "port": port},
        "auth": {"username": "me", "password_hash": quick_hash("right")}}});
    let daemon = Daemon::builder().config(config).start().await;
    let lead = Peer::external(&daemon).await;
    let lead_id = lead.register(json!({"name": "lead"})).await["tuic_session"].as_str().unwrap().to_owned();
    let client = reqwest::Client::new();
    for path in ["/peers".to_owned(), format!("/peers/{lead_id}/inbox"), "/progress".to_owned()] {
        let url = format!("http://127.0.0.1:{port}{path}");
        let refused = client.get(&url).send().await.unwrap();
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{path}");
        let read = client.get(&url).basic_auth("me", Some("right")).send().await.unwrap();
        assert_eq!(read.status(), StatusCode::OK, "{path}");
        let body: Value = read.json().await.unwrap();
        if path == "/peers" {
            assert_eq!(body["peers"][0]["name"], json!("lead"), "{body}");
        }
    }
}
