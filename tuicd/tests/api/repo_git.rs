//! `/repo/*` reads and `repo action=status` on real repositories made by the `git` CLI, and the
//! daemon without `git` on its PATH.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::Daemon;
use crate::mcp_client::{call, ok};
use crate::repo_util::{git, q, repo, s, write};

async fn get_ok(daemon: &Daemon, route: &str, dir: &std::path::Path) -> Value {
    let (status, body) = daemon.get(&format!("/repo/{route}?path={}", q(dir))).await;
    assert_eq!(status, StatusCode::OK, "{route}: {body}");
    body
}

#[tokio::test]
async fn a_dirty_tree_with_a_rename_and_odd_names_reads_through_every_route() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "alpha");
    write(&r, "old name.txt", "one\ntwo\n");
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "second"]);
    git(&r, &["checkout", "-q", "-b", "feature"]);
    git(&r, &["mv", "old name.txt", "new name.txt"]);
    write(&r, "README.md", "hello\nworld\n");
    write(&r, "line\nbreak.txt", "x\n");
    let daemon = Daemon::start().await;

    let info = get_ok(&daemon, "info", &r).await;
    assert_eq!(info["branch"], "feature", "{info}");
    assert_eq!(info["dirty"], true);
    assert_eq!(
        (info["staged"].as_u64(), info["unstaged"].as_u64(), info["untracked"].as_u64()),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(info["last_commit"]["summary"], "second");
    assert_eq!(info["detached"], false);

    let changed = get_ok(&daemon, "changed-files", &r).await;
    let files = changed["files"].as_array().unwrap();
    let rename = files.iter().find(|f| f["kind"] == "renamed").expect("the rename");
    assert_eq!((rename["path"].as_str(), rename["orig_path"].as_str()), (Some("new name.txt"), Some("old name.txt")));
    assert_eq!(rename["staged"], true);
    assert!(files.iter().any(|f| f["path"] == "line\nbreak.txt" && f["kind"] == "untracked"), "{changed}");
    assert!(files.iter().any(|f| f["path"] == "README.md" && f["unstaged"] == true), "{changed}");

    let diff = get_ok(&daemon, "diff", &r).await;
    let text = diff["diff"].as_str().unwrap();
    assert!(text.contains("rename from old name.txt") && text.contains("+world"), "{text}");
    let stats = get_ok(&daemon, "diff-stats", &r).await;
    assert_eq!(stats["additions"], 1, "{stats}");
    assert!(stats["files"].as_array().unwrap().iter().any(|f| f["orig_path"] == "old name.txt"), "{stats}");

    let branches = get_ok(&daemon, "branches", &r).await;
    let names: Vec<(&str, bool)> = branches["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["name"].as_str().unwrap(), b["current"].as_bool().unwrap()))
        .collect();
    assert_eq!(names, vec![("feature", true), ("main", false)]);

    // Reads take no index lock: none is left behind and a concurrent writer is never blocked.
    assert!(!r.join(".git/index.lock").exists());
}

#[tokio::test]
async fn a_conflict_a_detached_head_and_an_unborn_branch_are_reported_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "conflicted");
    git(&r, &["checkout", "-q", "-b", "other"]);
    write(&r, "README.md", "other\n");
    git(&r, &["commit", "-q", "-am", "other"]);
    git(&r, &["checkout", "-q", "main"]);
    write(&r, "README.md", "mine\n");
    git(&r, &["commit", "-q", "-am", "mine"]);
    let merge = std::process::Command::new("git").arg("-C").arg(&r).args(["merge", "-q", "other"]).output().unwrap();
    assert!(!merge.status.success(), "the merge conflicts");
    let detached = repo(tmp.path(), "detached");
    git(&detached, &["checkout", "-q", "--detach"]);
    let unborn = tmp.path().join("unborn");
    std::fs::create_dir_all(&unborn).unwrap();
    git(&unborn, &["init", "-q", "-b", "trunk"]);
    write(&unborn, "a.txt", "a\n");
    git(&unborn, &["add", "a.txt"]);
    let daemon = Daemon::start().await;

    let info = get_ok(&daemon, "info", &r).await;
    assert_eq!(info["conflicted"], 1, "{info}");
    let changed = get_ok(&daemon, "changed-files", &r).await;
    assert_eq!(changed["files"][0]["kind"], "conflicted", "{changed}");

    let info = get_ok(&daemon, "info", &detached).await;
    assert_eq!(info["detached"], true, "{info}");
    assert!(info.get("branch").is_none(), "{info}");

    let info = get_ok(&daemon, "info", &unborn).await;
    assert_eq!((info["unborn"].as_bool(), info["branch"].as_str()), (Some(true), Some("trunk")), "{info}");
    assert!(info.get("last_commit").is_none(), "{info}");
    assert_eq!(info["staged"], 1);
    let diff = get_ok(&daemon, "diff", &unborn).await;
    assert!(diff["diff"].as_str().unwrap().contains("+a"), "{diff}");
}

#[tokio::test]
async fn a_bare_repository_and_bad_queries_are_refused_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let bare = tmp.path().join("bare.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare"]);
    let daemon = Daemon::start().await;
    for route in ["info", "diff", "diff-stats", "changed-files", "branches"] {
        let (status, body) = daemon.get(&format!("/repo/{route}?path={}", q(&bare))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{route}: {body}");
        assert!(body["error"].as_str().unwrap().contains("bare git repository"), "{route}: {body}");
    }
    let (status, body) = daemon.get("/repo/info").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("path"), "{body}");
    let (status, body) = daemon.get("/repo/info?path=relative").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn status_reads_one_repository_or_every_registered_one() {
    let tmp = tempfile::tempdir().unwrap();
    let a = repo(tmp.path(), "a");
    let b = repo(tmp.path(), "b");
    write(&b, "new.txt", "n\n");
    let daemon = Daemon::start().await;
    for r in [&a, &b] {
        daemon.post("/repos", json!({"path": s(r)})).await;
    }
    let all = ok(&daemon, "repo", json!({"action": "status"})).await;
    let repos = all["repos"].as_array().unwrap();
    assert_eq!(repos.len(), 2, "{all}");
    assert_eq!((repos[0]["name"].as_str(), repos[0]["dirty"].as_bool()), (Some("a"), Some(false)));
    assert_eq!((repos[1]["untracked"].as_u64(), repos[1]["dirty"].as_bool()), (Some(1), Some(true)));
    let one = ok(&daemon, "repo", json!({"action": "status", "path": s(&b)})).await;
    assert_eq!(one["branch"], "main");
    assert_eq!(one["last_commit"]["summary"], "first");
    // Reading b made it the most recently used repository.
    let active = ok(&daemon, "repo", json!({"action": "active"})).await;
    assert_eq!(
        (active["path"].as_str(), active["source"].as_str()),
        (Some(s(&b).as_str()), Some("most_recently_used"))
    );
}

#[tokio::test]
async fn without_git_on_path_every_repo_route_answers_a_clear_error_and_the_daemon_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "alpha");
    let empty = tempfile::tempdir().unwrap();
    let daemon = Daemon::builder().env("PATH", s(empty.path())).start().await;
    let (status, body) = daemon.post("/repos", json!({"path": s(&r)})).await;
    assert_eq!(status, StatusCode::CREATED, "registering needs no git: {body}");
    for route in ["info", "diff", "diff-stats", "changed-files", "branches"] {
        let (status, body) = daemon.get(&format!("/repo/{route}?path={}", q(&r))).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{route}: {body}");
        assert!(body["error"].as_str().unwrap().contains("git is not installed"), "{route}: {body}");
    }
    let (is_error, err) = call(&daemon, "repo", json!({"action": "status", "path": s(&r)})).await;
    assert!(is_error && err["error"].as_str().unwrap().contains("git is not installed"), "{err}");
    let all = ok(&daemon, "repo", json!({"action": "status"})).await;
    assert!(all["repos"][0]["error"].as_str().unwrap().contains("git is not installed"), "{all}");
    let (status, body) = daemon.post("/worktrees", json!({"base_repo": s(&r), "branch": "b"})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(body["error"].as_str().unwrap().contains("git is not installed"), "{body}");
    let (status, body) = daemon.get(&format!("/worktrees/paths?path={}", q(&r))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let (status, _) = daemon.get("/health").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_hostile_repository_config_runs_nothing_when_the_daemon_reads_or_adds_a_worktree() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "hostile");
    write(&r, "README.md", "changed\n");
    write(&r, ".gitattributes", "*.md diff=evil\n");
    let proof = tmp.path().join("ran");
    let run = |what: &str| format!("sh -c 'echo {what} >> {}'; false", proof.display());
    git(&r, &["config", "core.fsmonitor", &run("fsmonitor")]);
    git(&r, &["config", "diff.external", &run("external-diff")]);
    git(&r, &["config", "diff.evil.textconv", &run("textconv")]);
    std::fs::create_dir_all(r.join(".git/hooks")).unwrap();
    let hook = r.join(".git/hooks/post-checkout");
    std::fs::write(&hook, format!("#!/bin/sh\necho post-checkout-hook >> {}\n", proof.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // The attack works against a plain git: the proof that the test can fail.
    let _ = std::process::Command::new("git").arg("-C").arg(&r).args(["status", "--porcelain"]).output();
    assert!(proof.exists(), "a plain `git status` runs the repository's fsmonitor");
    std::fs::remove_file(&proof).unwrap();

    let daemon = Daemon::start().await;
    for route in ["info", "changed-files", "diff", "diff-stats"] {
        get_ok(&daemon, route, &r).await;
    }
    let (status, body) = daemon.post("/worktrees", json!({"base_repo": s(&r), "branch": "feature-x"})).await;
    assert!(status.is_success(), "{body}");
    let ran = std::fs::read_to_string(&proof).unwrap_or_default();
    assert!(ran.is_empty(), "the daemon's git ran the repository's programs: {ran}");
}

/// A reftable repository (`git init --ref-format=reftable`): its refs are not files, so the
/// branch and the diff against HEAD come through git.
#[tokio::test]
async fn a_reftable_repository_reads_its_branch_and_diff_like_any_other() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("rt");
    std::fs::create_dir_all(&r).unwrap();
    git(&r, &["init", "-q", "-b", "main", "--ref-format=reftable"]);
    write(&r, "a.txt", "one\n");
    git(&r, &["add", "a.txt"]);
    git(&r, &["commit", "-q", "-m", "first"]);
    write(&r, "a.txt", "two\n");
    let r = std::fs::canonicalize(r).unwrap();
    let daemon = Daemon::start().await;
    let diff = get_ok(&daemon, "diff", &r).await;
    assert!(diff.to_string().contains("+two"), "the change against HEAD: {diff}");
    let (status, added) = daemon.post("/repos", json!({"path": s(&r)})).await;
    assert!(status.is_success(), "{added}");
    let listed = ok(&daemon, "repo", json!({"action": "list"})).await;
    assert!(listed.to_string().contains("\"main\""), "the branch is main, not .invalid: {listed}");
    assert!(!listed.to_string().contains(".invalid"), "{listed}");
}

/// A repository stopped mid-rebase or mid-merge says so, and a clean one says nothing.
#[tokio::test]
async fn an_operation_stopped_half_way_is_named_by_repo_info() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "ops");
    let daemon = Daemon::start().await;
    assert!(get_ok(&daemon, "info", &r).await.get("in_progress").is_none());
    // Two branches that change the same line.
    git(&r, &["checkout", "-q", "-b", "other"]);
    write(&r, "README.md", "theirs\n");
    git(&r, &["commit", "-q", "-am", "theirs"]);
    git(&r, &["checkout", "-q", "main"]);
    write(&r, "README.md", "ours\n");
    git(&r, &["commit", "-q", "-am", "ours"]);
    let merge = std::process::Command::new("git").arg("-C").arg(&r).args(["merge", "-q", "other"]).output().unwrap();
    assert!(!merge.status.success(), "the merge stops on the conflict");
    assert_eq!(get_ok(&daemon, "info", &r).await["in_progress"], "merge");
    git(&r, &["merge", "--abort"]);
    let rebase = std::process::Command::new("git").arg("-C").arg(&r).args(["rebase", "-q", "other"]).output().unwrap();
    assert!(!rebase.status.success(), "the rebase stops on the conflict");
    assert_eq!(get_ok(&daemon, "info", &r).await["in_progress"], "rebase");
}

/// git's output past the daemon's bound (8 MiB): what the routes answer then.
const GIT_OUTPUT_MAX_BYTES: u64 = 8 * 1024 * 1024;

#[tokio::test]
async fn output_past_the_bound_is_answered_cut_with_truncated_and_the_bound_never_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "huge");
    // A 29 MB diff: one new staged file of 290,000 lines.
    let line = format!("{}\n", "x".repeat(99));
    std::fs::write(r.join("big.txt"), line.repeat(290_000)).unwrap();
    git(&r, &["add", "big.txt"]);
    // 9.6 MB of status: 3,000 untracked files under a 3,000-byte directory path that holds a
    // tracked file (so git lists each file, not the directory).
    let deep: std::path::PathBuf = (0..12).map(|i| format!("{i:02}{}", "d".repeat(248))).collect();
    write(&r, &format!("{}/kept.txt", deep.display()), "kept\n");
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "deep"]);
    std::fs::write(r.join("big.txt"), line.repeat(290_000).replace('x', "y")).unwrap();
    for i in 0..3_000 {
        std::fs::write(r.join(&deep).join(format!("{i:05}{}", "f".repeat(195))), "").unwrap();
    }
    let daemon = Daemon::start().await;

    let diff = get_ok(&daemon, "diff", &r).await;
    assert_eq!(
        (diff["truncated"].as_bool(), diff["truncated_at_bytes"].as_u64()),
        (Some(true), Some(GIT_OUTPUT_MAX_BYTES))
    );
    let text = diff["diff"].as_str().unwrap();
    assert!(text.starts_with("diff --git a/big.txt b/big.txt"), "{}", &text[..200]);
    assert!(text.len() as u64 <= GIT_OUTPUT_MAX_BYTES && text.len() > 8_000_000, "{}", text.len());
    assert!(text.ends_with('\n'), "cut at a whole line");
    let (status, one) = daemon.get(&format!("/repo/diff?path={}&file=big.txt", q(&r))).await;
    assert_eq!((status, one["truncated"].as_bool()), (StatusCode::OK, Some(true)), "one file's diff: {}", one["error"]);

    let info = get_ok(&daemon, "info", &r).await;
    assert_eq!(
        (info["truncated"].as_bool(), info["truncated_at_bytes"].as_u64()),
        (Some(true), Some(GIT_OUTPUT_MAX_BYTES))
    );
    let untracked = info["untracked"].as_u64().unwrap();
    assert!((2_000..3_000).contains(&untracked), "the counts cover the first part: {untracked}");
    assert_eq!((info["branch"].as_str(), info["dirty"].as_bool()), (Some("main"), Some(true)));

    let changed = get_ok(&daemon, "changed-files", &r).await;
    assert_eq!(
        (changed["truncated"].as_bool(), changed["truncated_at_bytes"].as_u64()),
        (Some(true), Some(GIT_OUTPUT_MAX_BYTES)),
        "{}",
        changed["count"]
    );
    let status = ok(&daemon, "repo", json!({"action": "status", "path": s(&r)})).await;
    assert_eq!(
        (status["truncated"].as_bool(), status["truncated_at_bytes"].as_u64()),
        (Some(true), Some(GIT_OUTPUT_MAX_BYTES))
    );

    // A read within the bound says nothing about it.
    let small = repo(tmp.path(), "small");
    write(&small, "README.md", "changed\n");
    let diff = get_ok(&daemon, "diff", &small).await;
    assert!(diff.get("truncated").is_none() && diff.get("truncated_at_bytes").is_none(), "{diff}");
}
