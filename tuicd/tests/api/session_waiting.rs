//! "Waiting for input" for any program: a plain script blocked reading the terminal after a
//! question is reported as awaiting input with the question, and its quick replies (`send`)
//! answer it; a busy program and an idle shell prompt are not.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{DEADLINE, Daemon, wait_until};
use crate::session_util::{create_id, wait_text, write};

async fn waiting_state(daemon: &Daemon, id: &str, question: &str) -> Value {
    wait_until(&format!("{id} awaiting input with '{question}'"), DEADLINE, || async {
        let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
        let state = info["state"].clone();
        (state["awaiting_input"] == true && state["question_text"] == question).then_some(state)
    })
    .await
}

async fn never_waiting(daemon: &Daemon, id: &str) {
    // Past the first probe (the ticker probes 250 ms after output, then every second).
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
        assert_eq!(info["state"]["awaiting_input"], false, "{info}");
        assert!(info["state"]["question_text"].is_null(), "{info}");
    }
}

#[tokio::test]
async fn a_scripts_yes_no_read_is_a_question_and_its_quick_reply_ends_with_enter() {
    let daemon = Daemon::start().await;
    let script = r#"read -p "Continue? [y/N] " a; echo got=$a; sleep 30"#;
    let id = create_id(&daemon, json!({"shell": "/bin/bash", "args": ["-c", script]})).await;
    let state = waiting_state(&daemon, &id, "Continue? [y/N]").await;
    let options = state["choice_prompt"]["options"].as_array().unwrap();
    let yes = options.iter().find(|o| o["key"] == "y").unwrap();
    assert_eq!(yes["send"], "y\r", "{state}");
    // The list reports it the same way.
    let (_, list) = daemon.get("/sessions").await;
    let listed = list.as_array().unwrap().iter().find(|s| s["session_id"] == id.as_str()).unwrap();
    assert_eq!(listed["state"]["awaiting_input"], true, "{listed}");
    write(&daemon, &id, yes["send"].as_str().unwrap()).await;
    wait_text(&daemon, &id, "got=y").await;
    let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
    assert_eq!(info["state"]["awaiting_input"], false, "{info}");
}

#[tokio::test]
async fn a_python_input_is_a_question() {
    let daemon = Daemon::start().await;
    let program = r#"x = input("Name: "); print("hi=" + x); import time; time.sleep(30)"#;
    let id = create_id(&daemon, json!({"shell": "python3", "args": ["-c", program]})).await;
    let state = waiting_state(&daemon, &id, "Name:").await;
    assert!(state["choice_prompt"].is_null(), "{state}");
    write(&daemon, &id, "bob\r").await;
    wait_text(&daemon, &id, "hi=bob").await;
}

#[tokio::test]
async fn a_numbered_menu_read_as_a_line_gets_digit_and_enter() {
    let daemon = Daemon::start().await;
    let script = r#"select f in apple pear; do echo picked=$f; break; done; sleep 30"#;
    let id = create_id(&daemon, json!({"shell": "/bin/bash", "args": ["-c", script]})).await;
    let state = waiting_state(&daemon, &id, "#?").await;
    let options = state["choice_prompt"]["options"].as_array().unwrap();
    assert_eq!(options[1]["label"], "pear", "{state}");
    assert_eq!(options[1]["send"], "2\r", "{state}");
    write(&daemon, &id, "2\r").await;
    wait_text(&daemon, &id, "picked=pear").await;
}

#[tokio::test]
async fn a_busy_program_and_an_idle_shell_prompt_are_not_questions() {
    let daemon = Daemon::start().await;
    let busy = r#"echo "Ready?"; while :; do :; done"#;
    let id = create_id(&daemon, json!({"shell": "/bin/bash", "args": ["-c", busy]})).await;
    never_waiting(&daemon, &id).await;
    let shell = create_id(&daemon, json!({})).await;
    write(&daemon, &shell, "echo hello\n").await;
    wait_text(&daemon, &shell, "hello").await;
    never_waiting(&daemon, &shell).await;
}
