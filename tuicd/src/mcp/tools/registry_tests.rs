//! Checks over the real registry: the declarations against the descriptions, docs/mcp.md and
//! remote callers.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::tests::{call, test_app};
use super::{CallContext, ToolDef, registry};
use crate::http::Caller;

fn remote(app: &crate::state::App, who: &str) -> CallContext {
    let peer = "192.0.2.7:5000".parse().unwrap();
    CallContext { app: app.clone(), caller: Caller::tcp(peer, true), mcp_session: None, tuic_session: Some(who.into()) }
}

fn local(app: &crate::state::App) -> CallContext {
    CallContext { app: app.clone(), caller: Caller::ipc(), mcp_session: None, tuic_session: None }
}

fn text(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn remote_callers_cannot_spawn_submit_or_cancel_and_learn_nothing_of_foreign_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let app = test_app(dir.path());
    let spawn = json!({"action": "spawn", "agent_type": "claude", "prompt": "x"});
    let result = call(registry(), remote(&app, "me"), "agent", Some(spawn)).await.unwrap();
    assert!(text(&result)["error"].as_str().unwrap().contains("agent action=spawn"), "{result}");
    let submit = json!({"action": "submit", "session_id": "s", "input": "x"});
    let result = call(registry(), remote(&app, "me"), "session", Some(submit)).await.unwrap();
    assert!(text(&result)["error"].as_str().unwrap().contains("session action=submit"), "{result}");

    // A remote cancel is refused alike for a foreign task and for one's own: nothing leaks.
    let task = app.agents.tasks.create("s1", Some("me".into()));
    let cancel = json!({"action": "cancel", "task_id": task.task_id});
    let foreign = call(registry(), remote(&app, "other"), "task", Some(cancel.clone())).await.unwrap();
    let own = call(registry(), remote(&app, "me"), "task", Some(cancel)).await.unwrap();
    assert!(text(&own)["error"].as_str().unwrap().contains("loopback"), "{own}");
    assert_eq!(text(&foreign), text(&own), "a remote caller learns nothing of a foreign task");
    let get = json!({"action": "get", "task_id": task.task_id});
    let result = call(registry(), remote(&app, "other"), "task", Some(get.clone())).await.unwrap();
    assert!(text(&result)["error"].as_str().unwrap().contains("not owned"), "{result}");
    let result = call(registry(), remote(&app, "me"), "task", Some(get)).await.unwrap();
    assert_eq!(text(&result)["status"], json!("working"), "a remote owner may read: {result}");

    let mut params = Map::new();
    params.insert("taskId".into(), json!(task.task_id));
    let refused = crate::mcp::tasks::handle_method(&app, Some("me"), false, "tasks/cancel", &params).await.unwrap_err();
    assert!(refused.message.contains("loopback"), "{}", refused.message);
    let missing = crate::mcp::tasks::handle_method(&app, Some("me"), true, "tasks/get", &Map::new()).await.unwrap_err();
    assert!(missing.message.contains("taskId"), "{}", missing.message);
    let listed = crate::mcp::tasks::handle_method(&app, Some("me"), true, "tasks/list", &Map::new()).await.unwrap();
    assert_eq!(listed["tasks"][0]["taskId"], json!(task.task_id));
    let status = app.agents.tasks.get(&task.task_id, Some("me")).unwrap().status;
    assert_eq!(status, crate::agent_runtime::tasks::TaskStatus::Working);
}

#[tokio::test]
async fn an_unknown_action_is_an_error_naming_every_valid_action() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), r#"{"disabled_native_tools": []}"#).unwrap();
    let app = test_app(dir.path());
    for tool in registry().iter().filter(|t| t.takes_action) {
        let result = call(registry(), local(&app), tool.name, Some(json!({"action": "frobnicate"}))).await.unwrap();
        assert_eq!(result["isError"], true, "{}", tool.name);
        let error = text(&result)["error"].as_str().unwrap().to_owned();
        let valid = tool.action_names().join(", ");
        assert!(error.contains("Unknown action 'frobnicate'") && error.ends_with(&valid), "{}: {error}", tool.name);
    }
}

/// Every action has a declaration; the schema's `action` enum is theirs, in order; a description's
/// `- name:` lines name declared actions only.
#[test]
fn the_schema_enum_and_the_description_lines_come_from_the_declarations() {
    for tool in registry() {
        let schema = tool.input_schema();
        assert!(schema["type"] == "object" && schema.get("oneOf").is_none() && schema.get("anyOf").is_none());
        assert!(!tool.name.contains("__"), "native tool names never contain __ (reserved for upstreams)");
        if !tool.takes_action {
            assert_eq!(tool.actions.len(), 1, "{}: a tool without an action parameter is one action", tool.name);
            assert!(schema["properties"].get("action").is_none(), "{}", tool.name);
            continue;
        }
        let enumerated: Vec<&str> =
            schema["properties"]["action"]["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(enumerated, tool.action_names(), "{}: schema enum vs declarations", tool.name);
        for line in tool.description.lines().filter_map(|l| l.strip_prefix("- ")) {
            let (action, _) = line.split_once(':').unwrap_or((line, ""));
            assert!(tool.action_names().contains(&action), "{}: describes undeclared action {action}", tool.name);
        }
    }
}

/// The words a description uses as parameter names: `word` in backticks and `word=`, except
/// `other_tool action=...`, which names another tool's parameter.
fn named_parameters(description: &str, tool_names: &[&str]) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for quoted in description.split('`').skip(1).step_by(2) {
        named.insert(quoted.to_owned());
    }
    let words: Vec<&str> = description.split_whitespace().collect();
    for (i, word) in words.iter().enumerate() {
        let Some((name, _)) = word.split_once('=') else { continue };
        let name = name.trim_start_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
        let other_tool = i > 0 && tool_names.contains(&words[i - 1].trim_start_matches('('));
        if !name.is_empty() && !other_tool {
            named.insert(name.to_owned());
        }
    }
    named
}

fn properties(tool: &ToolDef) -> BTreeSet<String> {
    tool.input_schema()["properties"].as_object().unwrap().keys().cloned().collect()
}

#[test]
fn descriptions_name_no_parameter_their_schema_lacks() {
    let names: Vec<&str> = registry().iter().map(|t| t.name).collect();
    for tool in registry() {
        let properties = properties(tool);
        for name in named_parameters(tool.description, &names) {
            assert!(properties.contains(&name), "{}: the description names '{name}', which is no parameter", tool.name);
        }
    }
    let caught = named_parameters("Set `colour` or size=3; see repo action=progress_list.", &names);
    assert_eq!(caught, BTreeSet::from(["colour".to_owned(), "size".to_owned()]), "the check itself finds names");
}

/// One row per action of the tool's table in docs/mcp.md: `name` (or `a` / `b`), then
/// `(loopback)` and `(blocks)` as declared.
fn documented_rows(docs: &str, tool: &str) -> BTreeSet<(String, bool, bool)> {
    let Some(start) = docs.find(&format!("### `{tool}`")) else { return BTreeSet::new() };
    let section = &docs[start..];
    let section = &section[section.find('\n').unwrap_or(0)..];
    let section = &section[..section.find("\n#").unwrap_or(section.len())];
    let mut rows = BTreeSet::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cell = line.split('|').nth(1).unwrap_or("");
        let loopback = cell.contains("(loopback)");
        let blocks = cell.contains("(blocks)");
        for name in cell.split('`').skip(1).step_by(2) {
            rows.insert((name.to_owned(), loopback, blocks));
        }
    }
    rows
}

#[test]
fn the_docs_tables_match_the_declared_actions_and_flags() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/mcp.md");
    let docs = std::fs::read_to_string(path).unwrap();
    for tool in registry().iter().filter(|t| t.takes_action) {
        let declared: BTreeSet<(String, bool, bool)> =
            tool.actions.iter().map(|a| (a.name.to_owned(), a.loopback_only, a.blocks)).collect();
        assert_eq!(
            documented_rows(&docs, tool.name),
            declared,
            "docs/mcp.md's table for `{}` drifted from its declarations (name, loopback, blocks)",
            tool.name
        );
    }
    let sample = "### `t`\n\n| action | p |\n|---|---|\n| `a` (loopback) | x |\n| `b` / `c` (blocks) | y |\n\n## next";
    let expected = [("a", true, false), ("b", false, true), ("c", false, true)];
    assert_eq!(documented_rows(sample, "t"), expected.iter().map(|(n, l, b)| (n.to_string(), *l, *b)).collect());
}

#[test]
fn each_action_documents_its_own_timeout_default_and_bounds() {
    let schema = super::session::TOOL.input_schema();
    let timeout = schema["properties"]["timeout_ms"]["description"].as_str().unwrap();
    let (submit, wait) = timeout.split_once(" wait: ").expect(timeout);
    assert!(submit.starts_with("submit: ") && submit.contains("3000") && submit.contains("10000"), "{timeout}");
    assert!(wait.contains("60000") && wait.contains("295000"), "{timeout}");
}
