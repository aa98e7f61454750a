//! Tool-level checks that need no PTY: remote callers, ownership before loopback, tasks/*.

use serde_json::{Map, Value, json};

use crate::http::Caller;
use crate::mcp::tools::tests::call;
use crate::mcp::tools::{CallContext, registry};

fn remote(app: &crate::state::App, who: &str) -> CallContext {
    let peer = "192.0.2.7:5000".parse().unwrap();
    CallContext { app: app.clone(), caller: Caller::tcp(peer, true), mcp_session: None, tuic_session: Some(who.into()) }
}

fn text(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn remote_callers_cannot_spawn_submit_or_cancel_and_learn_nothing_of_foreign_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let app = crate::mcp::tools::tests::test_app(dir.path());
    let spawn = json!({"action": "spawn", "agent_type": "claude", "prompt": "x"});
    let result = call(registry(), remote(&app, "me"), "agent", Some(spawn)).await.unwrap();
    assert!(text(&result)["error"].as_str().unwrap().contains("agent action=spawn"), "{result}");
    let submit = json!({"action": "submit", "session_id": "s", "input": "x"});
    let result = call(registry(), remote(&app, "me"), "session", Some(submit)).await.unwrap();
    assert!(text(&result)["error"].as_str().unwrap().contains("session action=submit"), "{result}");

    let task = app.agents.tasks.create("s1", Some("me".into()));
    let cancel = json!({"action": "cancel", "task_id": task.task_id});
    let result = call(registry(), remote(&app, "other"), "task", Some(cancel.clone())).await.unwrap();
    assert!(text(&result)["error"].as_str().unwrap().contains("not owned"), "ownership first: {result}");
    let result = call(registry(), remote(&app, "me"), "task", Some(cancel)).await.unwrap();
    assert!(text(&result)["error"].as_str().unwrap().contains("loopback"), "{result}");
    let get = json!({"action": "get", "task_id": task.task_id});
    let result = call(registry(), remote(&app, "me"), "task", Some(get)).await.unwrap();
    assert_eq!(text(&result)["status"], json!("working"), "a remote owner may read: {result}");

    let mut params = Map::new();
    params.insert("taskId".into(), json!(task.task_id));
    let refused = super::mcp_tasks::handle_method(&app, Some("me"), false, "tasks/cancel", &params).await.unwrap_err();
    assert!(refused.message.contains("loopback"), "{}", refused.message);
    let missing = super::mcp_tasks::handle_method(&app, Some("me"), true, "tasks/get", &Map::new()).await.unwrap_err();
    assert!(missing.message.contains("taskId"), "{}", missing.message);
    let listed = super::mcp_tasks::handle_method(&app, Some("me"), true, "tasks/list", &Map::new()).await.unwrap();
    assert_eq!(listed["tasks"][0]["taskId"], json!(task.task_id));
    assert_eq!(app.agents.tasks.get(&task.task_id, Some("me")).unwrap().status, super::tasks::TaskStatus::Working);
}
