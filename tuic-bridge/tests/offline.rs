//! The bridge with no daemon behind it: it still answers a stdio client, offline and clearly.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[test]
fn without_a_daemon_the_bridge_answers_offline_and_says_why() {
    let dir = std::env::temp_dir().join(format!("tuic-bridge-offline-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_tuic-bridge"))
        .env("TUIC_SOCKET", dir.join("nobody.sock"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ask = |message: Value| -> Value {
        writeln!(stdin, "{message}").unwrap();
        serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap()
    };
    let init = ask(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    assert_eq!(init["result"]["protocolVersion"], json!("2025-03-26"));
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], json!(true));
    let tools = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(tools["result"]["tools"], json!([]));
    let call = ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "session", "arguments": {"action": "list"}}}));
    assert_eq!(call["result"]["isError"], json!(true));
    assert!(call["result"]["content"][0]["text"].as_str().unwrap().contains("tuicd is not running"), "{call}");
    assert_eq!(ask(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}))["result"], json!({}));
    writeln!(stdin, "{{oops").unwrap();
    let parse: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(parse["error"]["code"], json!(-32700));
    drop(stdin);
    assert!(child.wait().unwrap().success(), "the bridge exits cleanly when stdin closes");
}
