//! The AI routes (issue 35) against a fake headless agent: a `claude` shell script that records
//! its stdin and prints a canned Claude Code JSON envelope. Bad input is refused naming what was
//! wrong with nothing run (neither the agent nor `gh`); a reply that is not the JSON asked for,
//! or one naming what the agent was not shown, is a 502 naming the agent. The real CLIs against
//! the scripted model server: tests/agents/ai_routes.py.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::github_util::Stub;
use crate::harness::Daemon;
use crate::repo_util::{q, repo, s};

/// A fake `claude` in `dir`: saves its stdin as `prompt`, notes the run in `runs`, prints `out`.
fn fake_claude(dir: &Path) -> PathBuf {
    let program = dir.join("claude");
    let d = dir.display();
    let script = format!("#!/bin/sh\ncat > '{d}/prompt'\necho run >> '{d}/runs'\ncat '{d}/out'\n");
    std::fs::write(&program, script).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    program
}

/// Makes the fake agent answer `text` (inside Claude Code's envelope).
fn answer(dir: &Path, text: &str) {
    let envelope = json!({"type": "result", "subtype": "success", "is_error": false, "result": text});
    std::fs::write(dir.join("out"), envelope.to_string()).unwrap();
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs")).map(|r| r.lines().count()).unwrap_or(0)
}

struct Bed {
    daemon: Daemon,
    stub: Stub,
    agent: tempfile::TempDir,
    _parent: tempfile::TempDir,
    root: PathBuf,
}

async fn bed() -> Bed {
    let stub = Stub::new();
    let agent = tempfile::tempdir().unwrap();
    let program = fake_claude(agent.path());
    answer(agent.path(), "{}");
    let path = format!("{}:{}", stub.dir.path().join("bin").display(), std::env::var("PATH").unwrap());
    let daemon = Daemon::builder()
        .env("PATH", path)
        .env("GH_STUB_DIR", stub.dir.path().display().to_string())
        .config(json!({"headless_agent": program.display().to_string()}))
        .start()
        .await;
    let parent = tempfile::tempdir().unwrap();
    let root = repo(parent.path(), "widgets");
    std::fs::write(root.join("app.py"), "print('hello')\n").unwrap();
    crate::repo_util::git(&root, &["add", "app.py"]);
    crate::repo_util::git(&root, &["commit", "-q", "-m", "app"]);
    let (status, body) = daemon.post("/repos", json!({"path": root})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    Bed { daemon, stub, agent, _parent: parent, root }
}

async fn post_raw(daemon: &Daemon, path: &str, body: &str) -> (StatusCode, Value) {
    let response = daemon
        .client
        .post(crate::harness::Daemon::url(path))
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn bad_input_is_refused_naming_what_was_wrong_and_nothing_runs() {
    let b = bed().await;
    let root = s(&b.root);
    let outside = tempfile::tempdir().unwrap();
    let proposal = json!({"title": "Extract a function", "description": "Why"});
    let cases: Vec<(&str, &str, Value, StatusCode, &str)> = vec![
        ("POST", "/ai/review/pr", json!({"repoPath": root, "prNumber": "seven"}), StatusCode::BAD_REQUEST, "prNumber"),
        ("POST", "/ai/review/pr", json!({"repoPath": root, "prNumber": 0}), StatusCode::BAD_REQUEST, "prNumber"),
        ("POST", "/ai/review/pr", json!({"repoPath": root}), StatusCode::BAD_REQUEST, "prNumber"),
        (
            "POST",
            "/ai/review/pr",
            json!({"repoPath": root, "prNumber": 7, "model": "x"}),
            StatusCode::BAD_REQUEST,
            "model",
        ),
        (
            "POST",
            "/ai/review/pr",
            json!({"repoPath": "/no/such/repo", "prNumber": 7}),
            StatusCode::NOT_FOUND,
            "repoPath",
        ),
        (
            "POST",
            "/ai/review/pr",
            json!({"repoPath": s(outside.path()), "prNumber": 7}),
            StatusCode::FORBIDDEN,
            "repoPath",
        ),
        (
            "POST",
            "/ai/review/pr",
            json!({"repoPath": format!("{root}/../widgets"), "prNumber": 7}),
            StatusCode::BAD_REQUEST,
            "..",
        ),
        (
            "POST",
            "/ai/improvements/scan",
            json!({"repoPath": root, "focus": "style"}),
            StatusCode::BAD_REQUEST,
            "refactor",
        ),
        ("POST", "/ai/improvements/scan", json!({"repoPath": root, "focus": 3}), StatusCode::BAD_REQUEST, "focus"),
        (
            "POST",
            "/ai/improvements/scan",
            json!({"repoPath": "relative/path", "focus": "perf"}),
            StatusCode::BAD_REQUEST,
            "repoPath",
        ),
        ("POST", "/repo/create-issue-from-proposal", json!({"repoPath": root}), StatusCode::BAD_REQUEST, "proposal"),
        (
            "POST",
            "/repo/create-issue-from-proposal",
            json!({"repoPath": root, "proposal": {"title": " ", "description": "d"}}),
            StatusCode::BAD_REQUEST,
            "title",
        ),
        (
            "POST",
            "/repo/create-issue-from-proposal",
            json!({"repoPath": root, "proposal": {"title": "a\nb", "description": "d"}}),
            StatusCode::BAD_REQUEST,
            "control character",
        ),
        (
            "POST",
            "/repo/create-issue-from-proposal",
            json!({"repoPath": root, "proposal": {"title": "t", "description": ""}}),
            StatusCode::BAD_REQUEST,
            "description",
        ),
        (
            "POST",
            "/repo/create-issue-from-proposal",
            json!({"repoPath": root, "proposal": {"title": "t", "description": "d", "effort": "huge"}}),
            StatusCode::BAD_REQUEST,
            "effort",
        ),
        (
            "POST",
            "/repo/create-issue-from-proposal",
            json!({"repoPath": "/etc/../etc", "proposal": proposal}),
            StatusCode::BAD_REQUEST,
            "..",
        ),
    ];
    for (method, path, body, want, names) in cases {
        assert_eq!(method, "POST");
        let (status, answer) = b.daemon.post(path, body.clone()).await;
        let error = answer["error"].as_str().unwrap_or_default();
        assert_eq!(status, want, "{path} {body}: {answer}");
        assert!(error.contains(names), "{path} {body}: the error names {names}: {answer}");
    }
    let (status, answer) = post_raw(&b.daemon, "/ai/improvements/scan", "{\"repoPath\": ").await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_json")), "{answer}");
    for query in [
        "/repo/changelog".to_owned(),
        format!("/repo/changelog?path={}&sinceTag=--web", q(&b.root)),
        format!("/repo/changelog?path={}&sinceTag=v9", q(&b.root)),
        format!("/repo/changelog?path={}&since=v1", q(&b.root)),
        "/repo/changelog?path=%2Fno%2Fsuch".to_owned(),
    ] {
        let (status, answer) = b.daemon.get(&query).await;
        assert!(status == StatusCode::BAD_REQUEST || status == StatusCode::NOT_FOUND, "{query}: {status} {answer}");
    }
    assert_eq!(runs(b.agent.path()), 0, "no bad request ran the agent");
    let gh: Vec<_> = b.stub.calls().into_iter().filter(|c| c.args.first().is_some_and(|a| a != "repo")).collect();
    assert!(gh.iter().all(|c| c.args[..2] != ["issue", "create"] && c.args[..2] != ["pr", "diff"]), "{gh:?}");
}

#[tokio::test]
async fn a_reply_that_is_not_the_json_asked_for_is_a_502_naming_the_agent() {
    let b = bed().await;
    let scan = json!({"repoPath": s(&b.root), "focus": "refactor"});

    answer(b.agent.path(), "Sure! Here are some ideas: extract a function.");
    let (status, body) = b.daemon.post("/ai/improvements/scan", scan.clone()).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_GATEWAY, Some("upstream_failed")), "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("headless agent 'claude'") && error.contains("not a JSON object"), "{error}");

    answer(
        b.agent.path(),
        r#"{"summary": "s", "proposals": [{"title": "t", "description": "d", "effort": "enormous"}]}"#,
    );
    let (status, body) = b.daemon.post("/ai/improvements/scan", scan.clone()).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(body["error"].as_str().unwrap().contains("proposals[0].effort"), "{body}");

    // The prompt carried the task, the focus and the repository's files on stdin.
    let prompt = std::fs::read_to_string(b.agent.path().join("prompt")).unwrap();
    assert!(prompt.starts_with("tuic-headless-task: improvements-scan\n"), "{prompt}");
    assert!(
        prompt.contains("refactorings") && prompt.contains("\napp.py\n") && prompt.contains("README.md:\nhello"),
        "{prompt}"
    );

    // A changelog entry naming a PR that was not merged (the stub's merged PR is #40).
    let entry = r#"{"markdown": "- Gears (#99)", "sections": [{"title": "Features", "entries": [{"text": "Gears", "prs": [99]}]}]}"#;
    answer(b.agent.path(), entry);
    let (status, body) = b.daemon.get(&format!("/repo/changelog?path={}", q(&b.root))).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(body["error"].as_str().unwrap().contains("PR #99, which is not among the merged ones"), "{body}");

    // gh without `pr diff` (this stub's): the GitHub error, and the agent never runs for it.
    let before = runs(b.agent.path());
    let (status, body) = b.daemon.post("/ai/review/pr", json!({"repoPath": s(&b.root), "prNumber": 7})).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(body["error"].as_str().unwrap().starts_with("gh pr diff failed"), "{body}");
    assert_eq!(runs(b.agent.path()), before);

    // The agent's own failure, in its envelope.
    let failed = json!({"type": "result", "subtype": "error_during_execution", "is_error": true, "result": "API Error: 529 overloaded"});
    std::fs::write(b.agent.path().join("out"), failed.to_string()).unwrap();
    let (status, body) = b.daemon.post("/ai/improvements/scan", scan).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("'claude' failed: error_during_execution: API Error: 529"),
        "{body}"
    );
}

#[tokio::test]
async fn a_scan_answers_proposals_and_one_becomes_an_issue_through_gh() {
    let b = bed().await;
    let reply = json!({"summary": "One idea.", "proposals": [
        {"title": "Extract main()", "description": "app.py prints at import.", "files": ["app.py"], "effort": "small"}]});
    answer(b.agent.path(), &format!("```json\n{reply}\n```"));
    let (status, scan) =
        b.daemon.post("/ai/improvements/scan", json!({"repoPath": s(&b.root), "focus": "testing"})).await;
    assert_eq!(status, StatusCode::OK, "{scan}");
    assert_eq!(
        scan,
        json!({"repo_path": s(&b.root), "focus": "testing", "agent": "claude", "summary": "One idea.",
            "proposals": [{"id": "testing-1", "focus": "testing", "title": "Extract main()",
                "description": "app.py prints at import.", "files": ["app.py"], "effort": "small"}],
            "context_truncated": false})
    );
    assert!(b.stub.call("issue create").is_none(), "the scan creates no issue");

    let proposal = scan["proposals"][0].clone();
    let (status, issue) =
        b.daemon.post("/repo/create-issue-from-proposal", json!({"repoPath": s(&b.root), "proposal": proposal})).await;
    assert_eq!(
        (status, issue),
        (StatusCode::OK, json!({"url": "https://github.com/octo/widgets/issues/7", "number": 7}))
    );
    let call = b.stub.call("issue create").unwrap();
    assert_eq!(call.cwd, b.root);
    assert_eq!(&call.args[..4], ["issue", "create", "--title", "Extract main()"]);
    let body = &call.args[5];
    assert!(body.starts_with("app.py prints at import.\n\nFiles:\n- `app.py`\n"), "{body}");
    assert!(
        body.ends_with("\n\n_Proposed by an improvements scan in tuic (focus: testing, effort: small)._\n"),
        "{body}"
    );

    // A changelog with nothing merged since... the stub always has #40: the agent's answer.
    let log = json!({"markdown": "## Features\n\n- Add gears (#40)\n",
        "sections": [{"title": "Features", "entries": [{"text": "Add gears", "prs": [40]}]}]});
    answer(b.agent.path(), &log.to_string());
    let (status, changelog) = b.daemon.get(&format!("/repo/changelog?path={}", q(&b.root))).await;
    assert_eq!(status, StatusCode::OK, "{changelog}");
    assert_eq!(changelog["json"]["prs"], json!([40]));
    assert_eq!(changelog["json"]["sections"][0]["entries"][0]["prs"], json!([40]));
    assert!(changelog["markdown"].as_str().unwrap().contains("(#40)"));
    let prompt = std::fs::read_to_string(b.agent.path().join("prompt")).unwrap();
    assert!(prompt.starts_with("tuic-headless-task: changelog\n") && prompt.contains("\"Add gears\""), "{prompt}");
}

#[tokio::test]
async fn the_setting_names_a_known_cli_and_a_missing_one_is_a_424() {
    let b = bed().await;
    let (status, body) = b.daemon.put("/config", json!({"headless_agent": "aider"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("headless_agent: 'aider'"), "{body}");
    let (status, body) = b.daemon.put("/config", json!({"headless_agent": "/nowhere/gemini"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = b.daemon.post("/ai/improvements/scan", json!({"repoPath": s(&b.root), "focus": "perf"})).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::FAILED_DEPENDENCY, Some("dependency_missing")), "{body}");
    assert!(body["error"].as_str().unwrap().contains("'gemini'"), "{body}");
}
