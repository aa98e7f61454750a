//! MCP `ui`: toast, tab, confirm and screenshot, each an event on `/events` that a scripted client
//! reads (and, for confirm and screenshot, answers over REST); bad input refused with nothing sent.

use std::time::{Duration, Instant};

use base64::Engine;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{ConfirmAnswerer, DEADLINE, Daemon, read_events};
use crate::mcp_client::{call, call_as, fails, initialize, ok};
use crate::session_util::create;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nscripted-gui";

/// The `kind` events on `/events` from the start, up to and including the first whose
/// `title` is `last`.
async fn events_until(daemon: &Daemon, kind: &str, last: &str) -> Vec<Value> {
    let response =
        daemon.client.get(Daemon::url(&format!("/events?types={kind}&last_event_id=0"))).send().await.unwrap();
    let events = read_events(response, |seen| seen.iter().any(|(_, _, data)| data["title"] == last)).await;
    events.into_iter().map(|(_, _, data)| data).collect()
}

#[tokio::test]
async fn a_toast_carries_its_resolved_sound_and_the_callers_pty_as_origin() {
    let daemon = Daemon::start().await;
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    let cwd = repo.path().join("src");
    std::fs::create_dir(&cwd).unwrap();
    let session = create(&daemon, json!({"cwd": cwd})).await;
    let tuic = session["tuic_session"].as_str().unwrap();

    ok(&daemon, "ui", json!({"action": "toast", "title": "unbound", "level": "warn", "sound": true})).await;
    let args = json!({"action": "toast", "title": "bound", "message": "done", "sound": "attention"});
    let (is_error, answer) = call_as(&daemon, "ui", args, &[("x-tuic-session", tuic)]).await;
    assert!(!is_error && answer == json!({"ok": true}), "{answer}");

    // A caller registered as a peer with a project: that project is the origin.
    let other = create(&daemon, json!({"cwd": cwd})).await;
    let peer = other["tuic_session"].as_str().unwrap();
    let mcp = initialize(&daemon, &[("x-tuic-session", peer)]).await.session().unwrap();
    let headers = [("x-tuic-session", peer), ("mcp-session-id", mcp.as_str())];
    let (is_error, registered) =
        call_as(&daemon, "agent", json!({"action": "register", "project": "/work/proj"}), &headers).await;
    assert!(!is_error, "{registered}");
    let (is_error, answer) = call_as(&daemon, "ui", json!({"action": "toast", "title": "peer"}), &headers).await;
    assert!(!is_error, "{answer}");

    let toasts = events_until(&daemon, "mcp-toast", "peer").await;
    assert_eq!(toasts[0], json!({"title": "unbound", "level": "warn", "sound": "warning"}), "no guessed origin");
    assert_eq!(
        toasts[1],
        json!({"title": "bound", "message": "done", "level": "info", "sound": "attention",
               "origin_repo_path": repo.path().canonicalize().unwrap(), "origin_session_id": tuic})
    );
    assert_eq!(toasts[2]["origin_repo_path"], "/work/proj", "the peer's project comes first: {}", toasts[2]);
    assert_eq!(toasts[2]["origin_session_id"], peer);
}

#[tokio::test]
async fn bad_toasts_and_tabs_name_what_was_wrong_and_send_nothing() {
    let daemon = Daemon::start().await;
    let long = "x".repeat(201);
    for (args, named) in [
        (json!({"action": "toast", "title": "t", "sound": "beep"}), "sound 'beep' is unknown"),
        (json!({"action": "toast", "title": "t", "sound": 5}), "sound must be true, false or one of"),
        (json!({"action": "toast", "title": "t", "level": "fatal"}), "level 'fatal'"),
        (json!({"action": "toast", "title": " "}), "title must not be empty"),
        (json!({"action": "toast", "title": long}), "title is 201 characters"),
        (json!({"action": "toast", "title": "t", "message": "m".repeat(4001)}), "message is 4001 characters"),
        (json!({"action": "toast", "title": 7}), "title"),
        (json!({"action": "toast", "title": "t", "colour": "red"}), "colour"),
        (json!({"action": "tab", "title": "t", "url": "vscode://file/x"}), "scheme 'vscode'"),
        (json!({"action": "tab", "title": "t", "url": "tuic://edit/a.rs?line=x"}), "line=N"),
        (json!({"action": "tab", "title": "t"}), "exactly one of html or url"),
        (json!({"action": "tab", "title": "t", "html": "<p>", "url": "https://a"}), "exactly one of html or url"),
        (json!({"action": "tab", "title": "t", "html": "x".repeat(64 * 1024 + 1)}), "at most 65536"),
        (json!({"action": "tab", "title": "t", "html": "<p>", "id": "../x"}), "id must be"),
        (json!({"action": "tab", "title": "t", "html": "<p>", "pinned": "yes"}), "pinned"),
        (json!({"action": "popup"}), "Unknown action 'popup'"),
    ] {
        let error = fails(&daemon, "ui", args.clone()).await;
        assert!(error.contains(named), "{args}: {error}");
    }
    ok(&daemon, "ui", json!({"action": "toast", "title": "sentinel"})).await;
    assert_eq!(events_until(&daemon, "mcp-toast", "sentinel").await.len(), 1, "only the good toast went out");
    ok(&daemon, "ui", json!({"action": "tab", "title": "sentinel", "html": "<p>ok</p>"})).await;
    assert_eq!(events_until(&daemon, "ui-tab", "sentinel").await.len(), 1, "only the good tab went out");
}

#[tokio::test]
async fn a_tab_opens_the_three_url_schemes_and_inline_html() {
    let daemon = Daemon::start().await;
    let urls = [
        "https://example.com/report",
        "file:///tmp/report.html",
        "tuic://edit//etc/hosts?line=2",
        "tuic://open/README.md",
    ];
    for url in urls {
        let opened = ok(&daemon, "ui", json!({"action": "tab", "title": url, "url": url})).await;
        assert!(opened["id"].as_str().unwrap().starts_with("tab-"), "{opened}");
    }
    let opened = ok(
        &daemon,
        "ui",
        json!({"action": "tab", "id": "notes", "title": "last", "html": "<b>hi</b>", "pinned": true, "focus": false}),
    )
    .await;
    assert_eq!(opened, json!({"ok": true, "id": "notes"}));
    let tabs = events_until(&daemon, "ui-tab", "last").await;
    let shown: Vec<&str> = tabs.iter().filter_map(|t| t["url"].as_str()).collect();
    assert_eq!(shown, urls);
    assert_eq!(tabs[0]["pinned"], json!(false));
    assert_eq!(tabs[0]["focus"], json!(true));
    assert_eq!(tabs[4], json!({"id": "notes", "title": "last", "html": "<b>hi</b>", "pinned": true, "focus": false}));
}

#[tokio::test]
async fn confirm_is_answered_by_a_scripted_client_over_rest() {
    let daemon = Daemon::start().await;
    let yes = ConfirmAnswerer::start(&daemon, true).await;
    let answer = ok(&daemon, "ui", json!({"action": "confirm", "title": "Deploy?", "message": "deploy main"})).await;
    assert_eq!(answer, json!({"confirmed": true}));
    let seen = yes.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["title"], "Deploy?");
    assert_eq!(seen[0]["message"], "deploy main");
    assert_eq!(seen[0]["kind"], "ui_confirm");
    assert_eq!(seen[0]["requester"], "an MCP client on this machine");
    drop(yes);

    let no = ConfirmAnswerer::start(&daemon, false).await;
    let session = create(&daemon, json!({})).await;
    let tuic = session["tuic_session"].as_str().unwrap();
    let args = json!({"action": "confirm", "message": "delete the branch"});
    let (is_error, answer) = call_as(&daemon, "ui", args, &[("x-tuic-session", tuic)]).await;
    assert!(!is_error, "{answer}");
    assert_eq!(answer, json!({"confirmed": false, "reason": "declined by the user"}));
    let alias = session["alias"].as_str().unwrap();
    assert_eq!(no.seen()[0]["requester"], format!("agent {alias} (shell)"));
}

#[tokio::test]
async fn confirm_and_screenshot_are_refused_at_once_with_nobody_to_answer() {
    let daemon = Daemon::start().await;
    let started = Instant::now();
    let (is_error, answer) = call(&daemon, "ui", json!({"action": "confirm", "message": "push?"})).await;
    assert!(is_error, "{answer}");
    assert_eq!(answer["confirmed"], json!(false));
    assert_eq!(answer["reason"], "no UI client connected that can answer a confirmation");
    let error = fails(&daemon, "ui", json!({"action": "screenshot"})).await;
    assert!(error.contains("no GUI client connected that can take a screenshot"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(5), "refused at once, not after a wait");
    let (_, pending) = daemon.get("/ui/confirms").await;
    assert_eq!(pending["confirms"], json!([]), "nothing was asked");

    for (args, named) in [
        (json!({"action": "confirm"}), "missing field `message`"),
        (json!({"action": "confirm", "message": ["a"]}), "message"),
        (json!({"action": "confirm", "message": "m".repeat(4001)}), "message is 4001 characters"),
        (json!({"action": "screenshot", "region": "all"}), "region"),
    ] {
        let error = fails(&daemon, "ui", args.clone()).await;
        assert!(error.contains(named), "{args}: {error}");
    }
}

/// A scripted GUI: declares `?ui=screenshot` and keeps that stream open (leaving would end the
/// request), and answers the first request with a body that is no PNG (which must leave the
/// request waiting), then with `PNG`.
async fn scripted_gui(daemon: &Daemon) -> tokio::task::JoinHandle<Vec<(StatusCode, Value)>> {
    use futures_util::StreamExt;
    let response =
        daemon.client.get(Daemon::url("/events?ui=screenshot&types=ui-screenshot-requested")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let client = daemon.client.clone();
    tokio::spawn(async move {
        let mut stream = response.bytes_stream();
        let mut buffer = String::new();
        let id = loop {
            let chunk = tokio::time::timeout(DEADLINE, stream.next()).await.unwrap().unwrap().unwrap();
            buffer.push_str(std::str::from_utf8(&chunk).unwrap());
            let data = buffer.lines().find_map(|l| l.strip_prefix("data: ").map(str::to_owned));
            if let Some(data) = data.filter(|_| buffer.contains("\n\n")) {
                break serde_json::from_str::<Value>(&data).unwrap()["id"].as_str().unwrap().to_owned();
            }
        };
        let mut answers = Vec::new();
        let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        for body in [json!({"png_base64": encode(b"GIF89a")}), json!({"png_base64": encode(PNG)})] {
            let r = client.post(Daemon::url(&format!("/ui/screenshot/{id}"))).json(&body).send().await.unwrap();
            answers.push((r.status(), r.json().await.unwrap()));
        }
        drop(stream);
        answers
    })
}

#[tokio::test]
async fn a_screenshot_comes_from_a_connected_gui_client_and_is_saved_to_a_file() {
    let daemon = Daemon::start().await;
    let (status, body) = daemon.post("/ui/screenshot/screenshot-9", json!({"png_base64": ""})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let gui = scripted_gui(&daemon).await;
    let taken = ok(&daemon, "ui", json!({"action": "screenshot"})).await;
    let path = std::path::PathBuf::from(taken["path"].as_str().unwrap());
    assert!(path.starts_with(daemon.dir.path().join("screenshots")), "{}", path.display());
    assert_eq!(std::fs::read(&path).unwrap(), PNG);
    let answers = tokio::time::timeout(DEADLINE, gui).await.unwrap().unwrap();
    assert_eq!(answers[0].0, StatusCode::BAD_REQUEST, "{:?}", answers[0].1);
    assert!(answers[0].1["error"].as_str().unwrap().contains("not a PNG"), "{:?}", answers[0].1);
    assert_eq!(answers[1], (StatusCode::OK, json!({"ok": true})));
}
