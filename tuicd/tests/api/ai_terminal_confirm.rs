//! What a person confirms is all of it (issue 30): the confirmation a UI client receives for a
//! write carries the whole content, with long whitespace runs counted and control characters
//! escaped, so a part pushed out of sight by 700 newlines is in sight; content over the bound is
//! refused before anyone is asked.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::ai_terminal::{enabled, error_of, repo, shell_in};
use crate::harness::{ConfirmAnswerer, DEADLINE, wait_until};

#[tokio::test]
async fn a_write_hidden_below_700_newlines_is_shown_to_the_person() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    let script = format!("print('formatting done')\n{}import os; os.system('rm -rf ~/x')\n", "\n".repeat(699));
    let declining = ConfirmAnswerer::start(&daemon, false).await;
    let (error, _) = error_of(
        &daemon,
        "ai_terminal_write_file",
        json!({"session_id": id, "file_path": "src/fmt.py", "content": script}),
    )
    .await;
    assert!(error.contains("declined by the user"), "{error}");
    let edit_old = "fn main() {}";
    let edit_new = format!("fn main() {{}}{}\x1b[8m std::process::Command::new(\"rm\");", " ".repeat(300));
    let (error, _) = error_of(
        &daemon,
        "ai_terminal_edit_file",
        json!({"session_id": id, "file_path": "src/lib.rs", "old_string": edit_old, "new_string": edit_new}),
    )
    .await;
    assert!(error.contains("declined by the user"), "{error}");

    let seen = seen(&declining, 2).await;
    let write = seen[0]["message"].as_str().unwrap();
    assert!(write.contains(&format!("[{} bytes, 702 lines;", script.len())), "the size is shown: {write}");
    assert!(
        write.contains("print('formatting done')\n⟨700 newlines⟩\nimport os; os.system('rm -rf ~/x')"),
        "the hidden part is in sight: {write}"
    );
    assert!(write.len() < 400, "the newline run is counted, not shown: {} bytes", write.len());
    let edit = seen[1]["message"].as_str().unwrap();
    assert!(
        edit.contains("fn main() {}⟨300 spaces⟩\\x1b[8m std::process::Command::new(\"rm\");"),
        "the run is counted and the escape that would hide the rest is escaped: {edit}"
    );
    assert!(!std::fs::exists(root.join("src/fmt.py")).unwrap(), "declined: nothing written");
}

#[tokio::test]
async fn content_over_16_kib_is_refused_before_anyone_is_asked() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    let confirming = ConfirmAnswerer::start(&daemon, true).await;
    let big = "x".repeat(16 * 1024 + 1);
    let started = Instant::now();
    let (error, value) = error_of(
        &daemon,
        "ai_terminal_write_file",
        json!({"session_id": id, "file_path": "src/big.txt", "content": big}),
    )
    .await;
    assert!(error.contains("16384 bytes a person can read whole"), "{error}");
    assert!(error.contains("nothing was asked or done") && error.contains("in parts"), "{error}");
    assert_eq!(value["limit_bytes"], json!(16384));
    assert!(started.elapsed() < Duration::from_secs(5), "refused at once");
    assert!(confirming.seen().is_empty(), "nobody was asked: {:?}", confirming.seen());
    assert!(!std::fs::exists(root.join("src/big.txt")).unwrap());

    // At the bound it is asked, whole, and written.
    let at_bound = "y".repeat(16 * 1024);
    let (is_error, value) = crate::mcp_client::call(
        &daemon,
        "ai_terminal_write_file",
        json!({"session_id": id, "file_path": "src/edge.txt", "content": at_bound}),
    )
    .await;
    assert!(!is_error, "{value}");
    let seen = seen(&confirming, 1).await;
    assert!(seen[0]["message"].as_str().unwrap().contains(&at_bound), "shown whole");
    assert_eq!(std::fs::read_to_string(root.join("src/edge.txt")).unwrap(), at_bound);
}

/// The confirmations the scripted person has answered, once there are `count` (it records each
/// just after answering, so the call may return first).
async fn seen(person: &ConfirmAnswerer, count: usize) -> Vec<serde_json::Value> {
    wait_until(&format!("{count} confirmations seen"), DEADLINE, || async {
        let seen = person.seen();
        (seen.len() >= count).then_some(seen)
    })
    .await
}
