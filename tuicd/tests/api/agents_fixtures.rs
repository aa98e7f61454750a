//! The recorded agent screens (`tests/fixtures/agents/<id>/*.screen|stream`) replayed through the
//! real pipeline: each is drawn by a child in its own PTY session of the real daemon (vt100
//! screen model, screen follower, agent engine), then read back with `session action=status`
//! once every idle and ready timer has passed, and with `wait until=idle` and `submit`, which must
//! agree with the status's `idle_confirmed`. The unit replay in `agent/fixtures.rs` drives the
//! tracker by hand; this one proves the session wiring reads the same screens the same way.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;
use crate::mcp_client::*;

#[derive(Debug, Default)]
struct Fixture {
    header: Vec<(String, String)>,
    body: Vec<String>,
}

impl Fixture {
    fn get(&self, key: &str) -> Option<&str> {
        self.header.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

fn parse(path: &Path) -> Fixture {
    let text = std::fs::read_to_string(path).unwrap();
    let (header, body) = text.split_once("\n---\n").unwrap();
    let header = header
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.split(" #").next().unwrap_or(v).trim().to_owned()))
        .collect();
    Fixture { header, body: body.lines().map(str::to_owned).collect() }
}

fn unescape(line: &str) -> String {
    line.replace("\\\\", "\u{0}").replace("\\e", "\x1b").replace("\\a", "\x07").replace('\u{0}', "\\")
}

/// The bytes that draw the fixture on a fresh terminal, and the terminal size it needs.
fn drawing(fixture: &Fixture) -> (Vec<u8>, u16, u16) {
    let rows = (fixture.body.len() as u16 + 1).max(24);
    let cols = fixture.body.iter().map(|l| l.chars().count() as u16 + 1).max().unwrap_or(80).max(80);
    if fixture.get("mode") == Some("stream") {
        let bytes = fixture.body.iter().map(|l| unescape(l)).collect::<Vec<_>>().join("\r\n");
        return (bytes.into_bytes(), rows, cols);
    }
    let mut out = String::new();
    if fixture.get("alternate") == Some("true") {
        out.push_str("\x1b[?1049h");
    }
    out.push_str("\x1b[H\x1b[2J");
    out.push_str(&fixture.body.join("\r\n"));
    let last = fixture.body.iter().rposition(|r| !r.trim().is_empty()).unwrap_or(0);
    let (row, col) = fixture
        .get("cursor")
        .and_then(|c| c.split_once(' '))
        .map_or((last as u16, 0), |(r, c)| (r.parse().unwrap(), c.parse().unwrap()));
    out.push_str(&format!("\x1b[{};{}H", row + 1, col + 1));
    (out.into_bytes(), rows, cols)
}

include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/agents/files.rs"));

#[tokio::test]
async fn agent_recorded_screens_give_their_expected_state_through_the_daemon() {
    let daemon = Daemon::builder().config(json!({"max_sessions": 100})).start().await;
    let mut started = Vec::new();
    for (agent, path) in fixture_files() {
        let fixture = parse(&path);
        // A submitted line needs the tracker's clock in the test's hands: unit replay only.
        if fixture.get("new_turn") == Some("true") {
            continue;
        }
        let (bytes, rows, cols) = drawing(&fixture);
        let file = daemon.dir.path().join(format!("{agent}-{}", path.file_name().unwrap().to_string_lossy()));
        std::fs::write(&file, bytes).unwrap();
        let body = json!({"shell": "/bin/sh", "args": ["-c", "stty raw -echo; cat \"$0\"; exec sleep 60", file],
            "agent_type": agent, "rows": rows, "cols": cols, "cwd": daemon.dir.path()});
        let (status, created) = daemon.post("/sessions", body).await;
        assert!(status.is_success(), "{created}");
        started.push((path, fixture, created["session_id"].as_str().unwrap().to_owned()));
    }
    assert!(started.len() >= 20, "fixtures went missing: {}", started.len());
    // Past every idle (2.5 s) and ready-confirm (1.5 s) timer after the last byte.
    tokio::time::sleep(Duration::from_millis(4500)).await;
    let mut failures = Vec::new();
    let mut submits = Vec::new();
    for (path, fixture, id) in &started {
        let status = ok(&daemon, "session", json!({"action": "status", "session_id": id})).await;
        let state = &status["state"];
        let name = path.file_name().unwrap().to_string_lossy();
        let mut check = |key: &str, field: &str, expected: Value| {
            if state[field] != expected && !(expected == json!(false) && state.get(field).is_none()) {
                failures.push(format!("{name}: {key} {}, expected {expected}", state[field]));
            }
        };
        if let Some(expect) = fixture.get("expect") {
            check("agent_state", "agent_state", json!(expect));
        }
        if let Some(question) = fixture.get("question") {
            check("question", "question_text", json!(question));
        }
        if let Some(intent) = fixture.get("intent") {
            check("intent", "agent_intent", json!(intent));
        }
        if let Some(confirmed) = fixture.get("confirmed") {
            check("confirmed", "idle_confirmed", json!(confirmed == "true"));
        }
        if let Some(options) = fixture.get("options") {
            let count = state["choice_prompt"]["options"].as_array().map_or(0, Vec::len);
            if count.to_string() != options {
                failures.push(format!("{name}: {count} options, expected {options}"));
            }
        }
        // Every consumer of "confirmed idle" reads the screen as status does: wait until=idle,
        // and submit (whose check typed delivery and lifecycle mail share). Submit goes last: it
        // types when it is accepted.
        let confirmed = state["idle_confirmed"] == json!(true);
        let question = state["awaiting_input"] == json!(true) || state.get("question_text").is_some();
        let wait = json!({"action": "wait", "session_id": id, "timeout_ms": 200});
        let met = ok(&daemon, "session", wait).await["met"] == json!(true);
        if met != (confirmed || question) {
            failures.push(format!("{name}: wait met {met}, idle_confirmed {confirmed}, question {question}"));
        }
        let composer_empty = state["composer_state"] == json!("empty");
        submits.push((name.into_owned(), fixture, id.clone(), confirmed && composer_empty));
    }
    // Submits all at once: an accepted one waits up to 5 s to see a recorded screen (which
    // never reacts) start a turn. A composer holding text holds typing without being less idle.
    let submitted = futures_util::future::join_all(submits.iter().map(|(_, _, id, _)| {
        call(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "x", "timeout_ms": 250}))
    }))
    .await;
    for ((name, fixture, _, may_type), (refused, receipt)) in submits.iter().zip(submitted) {
        if refused == *may_type {
            failures
                .push(format!("{name}: submit refused {refused}, idle with an empty composer {may_type}: {receipt}"));
        }
        if fixture.get("hold").is_some_and(|hold| (hold == "true") != refused) {
            failures.push(format!("{name}: typing held {refused}, expected hold {:?}", fixture.get("hold")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} recorded screens differ:\n{}",
        failures.len(),
        started.len(),
        failures.join("\n")
    );
}
