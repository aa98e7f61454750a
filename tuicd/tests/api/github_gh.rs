//! GitHub through `gh`: the REST routes and the `repo` tool's GitHub actions against a stub `gh`
//! that records its argv; the 424 answers without `gh` or without its login; and the writes an
//! MCP caller makes only with a person's confirmation.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::github_util::{Stub, path_without_gh};
use crate::harness::{ConfirmAnswerer, Daemon};
use crate::mcp_client::call;
use crate::repo_util::{git, repo};

async fn registered(daemon: &Daemon, parent: &std::path::Path) -> String {
    let root = repo(parent, "widgets");
    let (status, body) = daemon.post("/repos", json!({"path": root})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    root.display().to_string()
}

fn q(path: &str) -> String {
    form_urlencoded::byte_serialize(path.as_bytes()).collect()
}

#[tokio::test]
async fn reads_run_gh_in_the_repository_and_answer_snake_case() {
    let stub = Stub::new();
    let daemon = stub.daemon().await;
    let parent = tempfile::tempdir().unwrap();
    let root = registered(&daemon, parent.path()).await;

    let (status, body) = daemon.get(&format!("/repo/github-status?path={}", q(&root))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!((body["repo"].as_str(), body["default_branch"].as_str()), (Some("octo/widgets"), Some("main")));
    assert_eq!(stub.call("repo view").unwrap().cwd.display().to_string(), root, "gh runs in the repository");

    let (status, prs) = daemon.get(&format!("/repo/pr-statuses?path={}", q(&root))).await;
    assert_eq!(status, StatusCode::OK, "{prs}");
    assert_eq!((prs[0]["number"].as_u64(), prs[0]["head"].as_str()), (Some(41), Some("cogs")));
    assert_eq!(prs[0]["checks"], json!({"passed": 1, "failed": 0, "pending": 1, "total": 2}));
    let list = stub.call("pr list").unwrap();
    assert!(list.args.windows(2).any(|w| w == ["--state", "open"]), "{:?}", list.args);

    // gh exits 8 while checks are pending; its JSON is whole and is answered.
    let (status, checks) = daemon.get(&format!("/repo/ci-checks?path={}&branch=cogs", q(&root))).await;
    assert_eq!(status, StatusCode::OK, "{checks}");
    assert_eq!(checks["summary"], json!({"passed": 1, "failed": 0, "pending": 1, "total": 2}));
    assert_eq!(stub.call("pr checks").unwrap().args[2], "cogs");
    let (status, body) = daemon.get(&format!("/repo/ci-checks?path={}&branch=--web", q(&root))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a flag is not a branch: {body}");

    git(std::path::Path::new(&root), &["tag", "v1.0"]);
    let date = git(std::path::Path::new(&root), &["log", "-1", "--format=%cI", "v1.0"]).trim().to_owned();
    let (status, merged) = daemon.get(&format!("/repo/merged-prs?path={}&sinceTag=v1.0", q(&root))).await;
    assert_eq!(status, StatusCode::OK, "{merged}");
    assert_eq!(
        (merged[0]["number"].as_u64(), merged[0]["merged_at"].as_str()),
        (Some(40), Some("2026-11-30T10:00:00Z"))
    );
    let search = stub.calls().into_iter().find(|c| c.args.contains(&"merged".to_owned())).unwrap();
    assert!(search.args.contains(&format!("merged:>{date}")), "{:?}", search.args);
    let (status, body) = daemon.get(&format!("/repo/merged-prs?path={}&sinceTag=v9", q(&root))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("no tag 'v9'"), "{body}");

    let (is_error, prs) = call(&daemon, "repo", json!({"action": "prs", "path": root})).await;
    assert!(!is_error, "{prs}");
    assert_eq!(prs[0]["number"], json!(41));
    let (is_error, issues) = call(&daemon, "repo", json!({"action": "issues", "path": root, "state": "all"})).await;
    assert!(!is_error, "{issues}");
    assert_eq!((issues[0]["number"].as_u64(), issues[0]["labels"].clone()), (Some(5), json!(["bug"])));
}

#[tokio::test]
async fn loopback_rest_writes_run_gh_without_a_confirmation() {
    let stub = Stub::new();
    let daemon = stub.daemon().await;
    let parent = tempfile::tempdir().unwrap();
    let root = registered(&daemon, parent.path()).await;

    let pr =
        json!({"repoPath": root, "title": "Fix cogs", "body": "Why", "base": "main", "head": "cogs", "draft": true});
    let (status, body) = daemon.post("/repo/create-pr", pr).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"url": "https://github.com/octo/widgets/pull/42", "number": 42}))
    );
    let args = stub.call("pr create").unwrap().args;
    assert_eq!(
        args,
        ["pr", "create", "--title", "Fix cogs", "--body", "Why", "--base", "main", "--head", "cogs", "--draft"]
    );

    let (status, body) =
        daemon.post("/repo/create-issue", json!({"repoPath": root, "title": "Squeak", "body": ""})).await;
    assert_eq!((status, body["number"].as_u64()), (StatusCode::OK, Some(7)));

    let review = json!({"repoPath": root, "prNumber": 41, "body": "Looks good", "event": "comment",
        "comments": [{"path": "src/cog.rs", "line": 3, "body": "nit"}]});
    let (status, body) = daemon.post("/repo/post-pr-review", review).await;
    assert_eq!((status, body["id"].as_u64()), (StatusCode::OK, Some(99)), "{body}");
    let call = stub.call("api --method").unwrap();
    assert!(call.args.contains(&"repos/{owner}/{repo}/pulls/41/reviews".to_owned()), "{:?}", call.args);
    let sent: Value = serde_json::from_str(call.stdin.as_deref().unwrap()).unwrap();
    assert_eq!(
        sent,
        json!({"body": "Looks good", "event": "COMMENT", "comments": [{"path": "src/cog.rs", "line": 3, "body": "nit"}]})
    );

    let calls_before = stub.calls().len();
    let (status, body) =
        daemon.post("/repo/post-pr-review", json!({"repoPath": root, "prNumber": 41, "event": "merge"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("APPROVE, REQUEST_CHANGES or COMMENT"), "{body}");
    let (status, _) = daemon.post("/repo/create-pr", json!({"repoPath": root, "title": "  "})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(stub.calls().len(), calls_before, "bad input never reaches gh");
}

#[tokio::test]
async fn an_mcp_issue_change_needs_a_persons_confirmation() {
    let stub = Stub::new();
    let daemon = stub.daemon().await;
    let parent = tempfile::tempdir().unwrap();
    let root = registered(&daemon, parent.path()).await;
    let close = json!({"action": "close_issue", "path": root, "number": 5});

    // Nobody can answer: refused at once, and gh never runs.
    let (is_error, body) = call(&daemon, "repo", close.clone()).await;
    assert!(is_error, "{body}");
    assert!(body["error"].as_str().unwrap().contains("no UI client connected"), "{body}");
    assert!(stub.call("issue close").is_none());

    let declining = ConfirmAnswerer::start(&daemon, false).await;
    let (is_error, body) = call(&daemon, "repo", close.clone()).await;
    assert!(is_error && body["error"].as_str().unwrap().contains("declined"), "{body}");
    assert!(stub.call("issue close").is_none());
    drop(declining);

    let confirming = ConfirmAnswerer::start(&daemon, true).await;
    let (is_error, body) = call(&daemon, "repo", close).await;
    assert!(!is_error, "{body}");
    assert_eq!(body, json!({"ok": true, "number": 5, "state": "closed"}));
    assert_eq!(stub.call("issue close").unwrap().args, ["issue", "close", "5"]);
    let (is_error, body) = call(&daemon, "repo", json!({"action": "reopen_issue", "path": root, "number": 5})).await;
    assert!(!is_error, "{body}");
    assert_eq!(stub.call("issue reopen").unwrap().args, ["issue", "reopen", "5"]);
    let seen = confirming.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen.iter().all(|c| c["kind"] == json!("github_write")), "{seen:?}");
    assert!(seen[0]["message"].as_str().unwrap().contains("close issue #5"), "{seen:?}");
}

#[tokio::test]
async fn without_gh_or_its_login_every_github_route_answers_424_naming_the_fix() {
    let parent = tempfile::tempdir().unwrap();
    let daemon = Daemon::builder().env("PATH", path_without_gh(parent.path())).start().await;
    let root = registered(&daemon, parent.path()).await;
    let gets =
        ["github-status", "pr-statuses", "ci-checks", "merged-prs"].map(|r| format!("/repo/{r}?path={}", q(&root)));
    let posts = [
        ("/repo/create-pr", json!({"repoPath": root, "title": "t"})),
        ("/repo/create-issue", json!({"repoPath": root, "title": "t"})),
        ("/repo/post-pr-review", json!({"repoPath": root, "prNumber": 1, "event": "APPROVE"})),
    ];
    let mut answers = Vec::new();
    for path in &gets {
        answers.push(daemon.get(path).await);
    }
    for (path, body) in posts {
        answers.push(daemon.post(path, body).await);
    }
    for (status, body) in answers {
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::FAILED_DEPENDENCY, Some("dependency_missing")),
            "{body}"
        );
        let error = body["error"].as_str().unwrap();
        assert!(error.contains("'gh' is not installed") && error.contains("gh auth login"), "{error}");
    }
    let (is_error, body) = call(&daemon, "repo", json!({"action": "prs", "path": root})).await;
    assert!(is_error && body["error"].as_str().unwrap().contains("'gh' is not installed"), "{body}");
    assert_eq!(body["fix"], json!("gh auth login"));
    let (status, _) = daemon.get("/health").await;
    assert_eq!(status, StatusCode::OK, "the daemon runs on");

    let stub = Stub::new();
    stub.log_out();
    let daemon = stub.daemon().await;
    let root = registered(&daemon, stub.dir.path()).await;
    let (status, body) = daemon.get(&format!("/repo/pr-statuses?path={}", q(&root))).await;
    assert_eq!(status, StatusCode::FAILED_DEPENDENCY, "{body}");
    assert!(body["error"].as_str().unwrap().contains("not logged in to GitHub; run `gh auth login`"), "{body}");
}

#[tokio::test]
async fn gh_output_past_its_bound_is_an_error_naming_the_bound_not_a_parse_error() {
    let stub = Stub::new();
    let daemon = stub.daemon().await;
    let parent = tempfile::tempdir().unwrap();
    let root = registered(&daemon, parent.path()).await;
    stub.flood();

    for route in ["pr-statuses", "github-status"] {
        let (status, body) = daemon.get(&format!("/repo/{route}?path={}", q(&root))).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_GATEWAY, Some("upstream_failed")), "{body}");
        let error = body["error"].as_str().unwrap();
        assert!(error.contains("passed the 8 MiB bound (8388608 bytes)"), "{route}: {error}");
        assert!(!error.contains("EOF") && !error.contains("parsing"), "{route}: {error}");
    }
    let (is_error, body) = call(&daemon, "repo", json!({"action": "prs", "path": root})).await;
    assert!(is_error, "{body}");
    assert!(body["error"].as_str().unwrap().contains("8 MiB bound"), "{body}");
}
