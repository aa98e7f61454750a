//! `/repo/conflict-assist` on real repositories: a clean rebase is verified by doing it in a
//! scratch worktree; a conflicting one names the files and leaves the rebase for an agent.

use std::path::Path;

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::Daemon;
use crate::repo_util::{git, repo, s, write};

/// `main` and `topic` both edit README.md when `conflict`; otherwise topic edits another file.
fn diverged(parent: &Path, conflict: bool) -> std::path::PathBuf {
    let r = repo(parent, if conflict { "clash" } else { "calm" });
    git(&r, &["checkout", "-q", "-b", "topic"]);
    write(&r, if conflict { "README.md" } else { "topic.txt" }, "topic\n");
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "topic"]);
    git(&r, &["checkout", "-q", "main"]);
    write(&r, "README.md", "main moved on\n");
    git(&r, &["commit", "-q", "-am", "main"]);
    r
}

#[tokio::test]
async fn a_clean_rebase_is_verified_and_a_conflicting_one_names_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let calm = diverged(tmp.path(), false);
    let clash = diverged(tmp.path(), true);
    let daemon = Daemon::start().await;

    let (status, clean) = daemon.post("/repo/conflict-assist", json!({"path": s(&calm), "branch": "topic"})).await;
    assert_eq!(status, StatusCode::OK, "{clean}");
    assert_eq!(clean["status"], "verified_clean", "{clean}");
    assert_eq!((clean["base"].as_str(), clean["base_source"].as_str()), (Some("main"), Some("local_default")));
    let topic_tip = git(&calm, &["rev-parse", "topic"]);
    assert_eq!(git(&calm, &["worktree", "list"]).lines().count(), 1, "the scratch worktree is gone");

    let (status, conflicts) =
        daemon.post("/repo/conflict-assist", json!({"path": s(&clash), "branch": "topic", "base": "main"})).await;
    assert_eq!(status, StatusCode::OK, "{conflicts}");
    assert_eq!(conflicts["status"], "conflicts", "{conflicts}");
    assert_eq!(conflicts["base_source"], "request");
    assert_eq!(conflicts["conflicting_files"], json!(["README.md"]));
    let wt = conflicts["worktree_path"].as_str().unwrap();
    assert!(Path::new(wt).join("README.md").exists());
    assert!(conflicts["prompt"].as_str().unwrap().contains("git rebase --continue"), "{conflicts}");
    // The branch itself never moves.
    assert_eq!(git(&calm, &["rev-parse", "topic"]), topic_tip);

    let (status, unknown) = daemon.post("/repo/conflict-assist", json!({"path": s(&calm), "branch": "nope"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{unknown}");
    assert!(unknown["error"].as_str().unwrap().contains("'nope' names no commit"), "{unknown}");
}
