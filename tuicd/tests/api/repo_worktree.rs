//! Worktrees on real repositories: create (warming an ignored build directory, the setup script,
//! the event, stale recovery, the Claude Code hint), remove (dirty refusal, force through a
//! person's confirmation, the branch's safe delete), paths, lifecycle and run-script.

use std::path::{Path, PathBuf};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{ConfirmAnswerer, Daemon, read_events};
use crate::mcp_client::{call, call_as, initialize};
use crate::repo_util::{git, q, repo, s, write};
use crate::session_util;

/// A repository with an ignored `target/` holding a small build artefact.
fn built_repo(parent: &Path) -> PathBuf {
    let r = repo(parent, "app");
    write(&r, ".gitignore", "target/\n");
    git(&r, &["add", ".gitignore"]);
    git(&r, &["commit", "-q", "-m", "ignore target"]);
    write(&r, "target/debug/app.o", "object code");
    r
}

async fn create(daemon: &Daemon, r: &Path, branch: &str, extra: Value) -> (StatusCode, Value) {
    let mut body = json!({"base_repo": s(r), "branch": branch});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    daemon.post("/worktrees", body).await
}

async fn remove(daemon: &Daemon, body: Value) -> (StatusCode, Value) {
    daemon.request(Method::DELETE, "/worktrees", Some(body)).await
}

#[tokio::test]
async fn create_warms_the_ignored_build_dir_runs_the_setup_script_and_announces_it() {
    let tmp = tempfile::tempdir().unwrap();
    let r = built_repo(tmp.path());
    let daemon = Daemon::start().await;
    let events = daemon.client.get(Daemon::url("/events?types=worktree-created")).send().await.unwrap();

    let (status, created) = create(&daemon, &r, "feature/x", json!({"setup_script": "echo set up in $(pwd)"})).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let wt = tmp.path().join("app__wt/feature-x");
    assert_eq!(created["worktree_path"], s(&wt));
    assert_eq!((created["branch"].as_str(), created["new_branch"].as_bool()), (Some("feature/x"), Some(true)));
    let warm = &created["instructions"]["warm_artifacts"];
    assert_eq!(warm["warmed_directories"], 1, "{created}");
    assert_eq!(warm["directories"][0]["directory"], "target");
    assert_eq!(std::fs::read_to_string(wt.join("target/debug/app.o")).unwrap(), "object code");
    assert_eq!(created["setup_script"]["exit_code"], 0, "{created}");
    assert!(created["setup_script"]["output"].as_str().unwrap().contains(&format!("set up in {}", s(&wt))));
    assert_eq!(git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(), "feature/x");

    let seen = read_events(events, |e| !e.is_empty()).await;
    assert_eq!(seen[0].2, json!({"repo_path": s(&r), "branch": "feature/x", "worktree_path": s(&wt)}));

    // The same branch again is refused clearly and changes nothing.
    let (status, again) = create(&daemon, &r, "feature/x", json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    let (status, bad) = create(&daemon, &r, "bad..name", json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    assert!(bad["error"].as_str().unwrap().contains("not a valid branch name"), "{bad}");
    let (status, bare) = create(&daemon, &tmp.path().join("nowhere"), "b", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{bare}");
}

#[tokio::test]
async fn a_registered_worktree_whose_directory_vanished_is_pruned_and_created_again() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "app");
    let daemon = Daemon::start().await;
    let (status, first) = create(&daemon, &r, "topic", json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let wt = PathBuf::from(first["worktree_path"].as_str().unwrap());
    std::fs::remove_dir_all(&wt).unwrap();
    let (status, paths) = daemon.get(&format!("/worktrees/paths?path={}", q(&r))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(paths["paths"].as_object().unwrap().values().any(|p| p["prunable"] == true), "{paths}");

    let (status, second) = create(&daemon, &r, "topic", json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{second}");
    assert_eq!(second["recovered_stale"], true, "{second}");
    assert_eq!(second["new_branch"], false, "the branch survived: {second}");
    assert!(wt.join("README.md").exists());
}

#[tokio::test]
async fn remove_refuses_uncommitted_work_unless_forced_and_reports_a_kept_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "app");
    let daemon = Daemon::start().await;
    let (_, created) = create(&daemon, &r, "work", json!({})).await;
    let wt = PathBuf::from(created["worktree_path"].as_str().unwrap());
    write(&wt, "notes.txt", "unsaved\n");

    let (status, refused) = remove(&daemon, json!({"worktree_path": s(&wt)})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("1 untracked"), "{refused}");
    assert!(wt.join("notes.txt").exists(), "a refusal changes nothing");

    // Commit on the branch: the safe branch delete then refuses, and says so.
    git(&wt, &["add", "notes.txt"]);
    git(&wt, &["commit", "-q", "-m", "notes"]);
    let (status, removed) = remove(&daemon, json!({"worktree_path": s(&wt), "delete_branch": true})).await;
    assert_eq!(status, StatusCode::OK, "{removed}");
    assert_eq!(removed["ok"], true);
    assert!(removed["branch_delete_warning"].as_str().unwrap().contains("branch work was kept"), "{removed}");
    assert!(!wt.exists());
    assert!(git(&r, &["branch", "--list", "work"]).contains("work"));

    // A merged branch is deleted; a loopback REST caller's force is its own confirmation.
    let (_, created) = create(&daemon, &r, "merged", json!({})).await;
    let wt = PathBuf::from(created["worktree_path"].as_str().unwrap());
    write(&wt, "README.md", "edited\n");
    let (status, removed) =
        remove(&daemon, json!({"worktree_path": s(&wt), "force": true, "delete_branch": true})).await;
    assert_eq!(status, StatusCode::OK, "{removed}");
    assert_eq!(removed["branch_deleted"], true, "{removed}");
    assert!(!wt.exists());
    assert!(git(&r, &["branch", "--list", "merged"]).trim().is_empty());

    // The main work tree is never removed here.
    let (status, main) = remove(&daemon, json!({"worktree_path": s(&r), "force": true})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{main}");
}

#[tokio::test]
async fn an_mcp_force_remove_needs_a_person_to_confirm() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "app");
    let daemon = Daemon::start().await;
    let (_, created) = create(&daemon, &r, "dirty", json!({})).await;
    let wt = PathBuf::from(created["worktree_path"].as_str().unwrap());
    write(&wt, "README.md", "uncommitted\n");
    let args = json!({"action": "worktree_remove", "worktree_path": s(&wt), "force": true});

    let (is_error, err) = call(&daemon, "repo", args.clone()).await;
    assert!(is_error && err["error"].as_str().unwrap().contains("no UI client connected"), "{err}");
    assert!(wt.exists());

    let declining = ConfirmAnswerer::start(&daemon, false).await;
    let (is_error, err) = call(&daemon, "repo", args.clone()).await;
    assert!(is_error && err["error"].as_str().unwrap().contains("declined by the user"), "{err}");
    assert!(wt.join("README.md").exists());
    assert_eq!(declining.seen()[0]["kind"], "worktree_force_remove");
    drop(declining);

    let person = ConfirmAnswerer::start(&daemon, true).await;
    let (is_error, removed) = call(&daemon, "repo", args).await;
    assert!(!is_error, "{removed}");
    assert_eq!(removed["ok"], true);
    assert!(!wt.exists());
    assert!(person.seen()[0]["message"].as_str().unwrap().contains(&s(&wt)));
}

#[tokio::test]
async fn only_claude_code_gets_the_agent_hint_and_worktree_list_shows_both_kinds() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "app");
    let daemon = Daemon::start().await;
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2"}});
    let cc = crate::mcp_client::rpc(&daemon, "initialize", params, &[]).await.session().unwrap();
    let other = initialize(&daemon, &[]).await.session().unwrap();

    let args = json!({"action": "worktree_create", "path": s(&r), "branch": "cc"});
    let (is_error, created) = call_as(&daemon, "repo", args, &[("mcp-session-id", cc.as_str())]).await;
    assert!(!is_error, "{created}");
    let hint = &created["cc_agent_hint"];
    assert_eq!(hint["worktree_path"], created["worktree_path"]);
    assert!(hint["suggested_prompt"].as_str().unwrap().contains("absolute paths"), "{hint}");

    let args = json!({"action": "worktree_create", "path": s(&r), "branch": "plain"});
    let (is_error, created) = call_as(&daemon, "repo", args, &[("mcp-session-id", other.as_str())]).await;
    assert!(!is_error, "{created}");
    assert!(created.get("cc_agent_hint").is_none(), "{created}");

    let (is_error, listed) = call(&daemon, "repo", json!({"action": "worktree_list", "path": s(&r)})).await;
    assert!(!is_error, "{listed}");
    let kinds: Vec<(&str, &str)> = listed["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["workspace_id"].as_str().unwrap(), w["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, vec![("main", "main"), ("cc", "linked"), ("plain", "linked")]);
}

#[tokio::test]
async fn lifecycle_gives_a_fresh_verdict_and_fails_closed_on_an_unknown_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "app");
    let daemon = Daemon::start().await;
    let (_, created) = create(&daemon, &r, "life", json!({})).await;
    let wt = PathBuf::from(created["worktree_path"].as_str().unwrap());
    let url = |id: &str| format!("/worktrees/lifecycle?repoPath={}&workspaceId={id}", q(&r));

    let (status, clean) = daemon.get(&url("life")).await;
    assert_eq!(status, StatusCode::OK, "{clean}");
    assert_eq!((clean["removal_safe"].as_bool(), clean["dirty"].as_bool()), (Some(true), Some(false)), "{clean}");
    write(&wt, "wip.txt", "x");
    let (_, dirty) = daemon.get(&url("life")).await;
    assert_eq!((dirty["removal_safe"].as_bool(), dirty["untracked"].as_u64()), (Some(false), Some(1)), "{dirty}");
    let (_, main) = daemon.get(&url("main")).await;
    assert_eq!(main["removal_safe"], false, "{main}");

    let (status, unknown) = daemon.get(&url("no-such-workspace")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{unknown}");
    assert!(unknown["error"].as_str().unwrap().contains("no-such-workspace"), "{unknown}");
}

#[tokio::test]
async fn run_script_reports_the_exit_code_and_bounds_the_output() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "app");
    let daemon = Daemon::start().await;
    let (status, ran) =
        daemon.post("/worktrees/run-script", json!({"path": s(&r), "script": "echo out; echo err >&2; exit 3"})).await;
    assert_eq!(status, StatusCode::OK, "{ran}");
    assert_eq!(ran["exit_code"], 3);
    assert_eq!(ran["output"], "out\nerr\n");
    let (_, big) = daemon
        .post("/worktrees/run-script", json!({"path": s(&r), "script": "head -c 200000 /dev/zero | tr '\\0' a"}))
        .await;
    assert_eq!(big["truncated"], true, "{}", big["output"].as_str().unwrap().len());
    assert_eq!(big["output"].as_str().unwrap().len(), tuicd::limits::WORKTREE_SCRIPT_OUTPUT_MAX_BYTES);
    let (status, empty) = daemon.post("/worktrees/run-script", json!({"path": s(&r), "script": " "})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{empty}");
}

/// A `base_ref` is a commit, never an option git would read (`--lock`, `--detach`,
/// `--no-checkout`); a real one still works.
#[tokio::test]
async fn a_base_ref_that_looks_like_an_option_is_refused_and_changes_nothing() {
    let daemon = Daemon::start().await;
    let parent = tempfile::tempdir().unwrap();
    let r = repo(parent.path(), "app");
    for base in ["--lock", "--detach", "--no-checkout", "-q", ""] {
        let (status, body) = create(&daemon, &r, "feature-x", json!({"base_ref": base})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{base}: {body}");
        assert!(body["error"].as_str().unwrap().contains("base_ref"), "{body}");
    }
    let listed = std::process::Command::new("git").arg("-C").arg(&r).args(["worktree", "list"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), 1, "no worktree was added");
    let (status, body) = create(&daemon, &r, "feature-x", json!({"base_ref": "HEAD"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn a_worktree_a_live_session_works_in_is_removed_only_with_force_and_then_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let r = repo(tmp.path(), "app");
    let daemon = Daemon::start().await;
    let (_, created) = create(&daemon, &r, "busy", json!({})).await;
    let wt = PathBuf::from(created["worktree_path"].as_str().unwrap());
    std::fs::create_dir_all(wt.join("sub")).unwrap();
    // One started inside, one moved in after it started, one elsewhere.
    let started_in = session_util::create(&daemon, json!({"cwd": s(&wt.join("sub"))})).await;
    let moved_in = session_util::create(&daemon, json!({})).await;
    let elsewhere = session_util::create(&daemon, json!({"cwd": s(&r)})).await;
    let moved_id = moved_in["session_id"].as_str().unwrap();
    session_util::write(&daemon, moved_id, &format!("cd '{}' && echo moved-$((40+2))\n", s(&wt))).await;
    session_util::wait_text(&daemon, moved_id, "moved-42").await;
    let alias = |v: &Value| v["alias"].as_str().unwrap().to_owned();
    let (inside, outside) = ([alias(&started_in), alias(&moved_in)], alias(&elsewhere));

    let (status, refused) = remove(&daemon, json!({"worktree_path": s(&wt)})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    let error = refused["error"].as_str().unwrap();
    assert!(inside.iter().all(|a| error.contains(a.as_str())) && !error.contains(&outside), "{error}");
    assert!(error.contains("force: true"), "{error}");
    let (is_error, tool) = call(&daemon, "repo", json!({"action": "worktree_remove", "worktree_path": s(&wt)})).await;
    assert!(is_error && tool["error"].as_str().unwrap().contains(&inside[0]), "{tool}");
    assert!(wt.join("sub").exists(), "a refusal changes nothing");

    let (status, removed) = remove(&daemon, json!({"worktree_path": s(&wt), "force": true})).await;
    assert_eq!(status, StatusCode::OK, "{removed}");
    assert_eq!(removed["sessions_inside"], json!(inside), "{removed}");
    let warning = removed["warning"].as_str().unwrap();
    assert!(inside.iter().all(|a| warning.contains(a.as_str())) && !warning.contains(&outside), "{warning}");
    assert!(!wt.exists());
}

#[tokio::test]
async fn a_worktree_holding_a_submodule_is_refused_naming_force_and_removed_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = repo(tmp.path(), "lib");
    let r = repo(tmp.path(), "app");
    let file_ok = ["-c", "protocol.file.allow=always"];
    git(&r, &[&file_ok[..], &["submodule", "add", "-q", &s(&lib), "lib"]].concat());
    git(&r, &["commit", "-q", "-m", "lib as a submodule"]);
    let daemon = Daemon::start().await;
    let (status, created) = create(&daemon, &r, "with-lib", json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let wt = PathBuf::from(created["worktree_path"].as_str().unwrap());
    git(&wt, &[&file_ok[..], &["submodule", "update", "-q", "--init"]].concat());
    assert!(wt.join("lib/README.md").exists());

    let (status, refused) = remove(&daemon, json!({"worktree_path": s(&wt)})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    let error = refused["error"].as_str().unwrap();
    assert!(error.contains("submodules") && error.contains("force: true"), "{error}");
    assert!(wt.join("lib/README.md").exists(), "a refusal changes nothing");

    let (status, removed) = remove(&daemon, json!({"worktree_path": s(&wt), "force": true})).await;
    assert_eq!((status, removed["ok"].as_bool()), (StatusCode::OK, Some(true)), "{removed}");
    assert!(!wt.exists());
}
