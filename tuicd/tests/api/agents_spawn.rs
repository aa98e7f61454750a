//! `agent action=spawn`, task handles (`task` tool and `tasks/*`), the progress journal and the
//! `/agents` routes, end to end with the fake agent CLI.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::agents::fake_agent;
use crate::harness::*;
use crate::mcp_client::*;

const ORCH: &str = "0b7e4d4e-1111-4a4a-8a8a-000000000001";
const OTHER: &str = "0b7e4d4e-2222-4a4a-8a8a-000000000002";

async fn spawn_as(daemon: &Daemon, who: &str, extra: Value) -> Value {
    let mut args = json!({"action": "spawn", "binary_path": fake_agent(), "agent_type": "claude",
        "prompt": "first task", "cwd": daemon.dir.path()});
    merge(&mut args, extra);
    let (is_error, spawned) = call_as(daemon, "agent", args, &[("x-tuic-session", who)]).await;
    assert!(!is_error, "{spawned}");
    spawned
}

async fn task_as(daemon: &Daemon, who: &str, action: &str, task_id: &str) -> (bool, Value) {
    call_as(daemon, "task", json!({"action": action, "task_id": task_id}), &[("x-tuic-session", who)]).await
}

async fn text_of(daemon: &Daemon, id: &str) -> String {
    let out = ok(daemon, "session", json!({"action": "output", "session_id": id, "limit": 100000})).await;
    out["data"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn agent_spawn_delivers_the_prompt_and_the_task_follows_the_session_to_failure() {
    let daemon = Daemon::start().await;
    let spawned = spawn_as(&daemon, ORCH, json!({"name": "worker"})).await;
    let (id, task_id) = (spawned["session_id"].as_str().unwrap(), spawned["task_id"].as_str().unwrap());
    assert_eq!(spawned["poll_interval_ms"], json!(1000));
    assert_eq!((spawned["name"].clone(), spawned["prompt_delivery"].clone()), (json!("worker"), json!("argv")));
    assert_eq!(spawned["pty_description"], json!("first task"), "derived from the prompt");
    // The prompt went in as the final argument: the agent works it and completes.
    let waited = wait_until("the first task completes", DEADLINE, || async {
        let w = ok(&daemon, "session", json!({"action": "wait", "session_id": id, "timeout_ms": 5000})).await;
        (w["agent_state"] == json!("completed")).then_some(w)
    })
    .await;
    assert_eq!(waited["suggested_actions"], json!(["Run tests", "Open PR"]));
    assert!(text_of(&daemon, id).await.contains("done: first task"));

    let (is_error, task) = task_as(&daemon, ORCH, "get", task_id).await;
    assert!(!is_error, "{task}");
    assert_eq!((task["status"].clone(), task["session_id"].clone()), (json!("working"), json!(id)));
    let (is_error, foreign) = task_as(&daemon, OTHER, "get", task_id).await;
    assert!(is_error && foreign["error"].as_str().unwrap().contains("not owned by the calling identity"), "{foreign}");
    let (is_error, foreign) = task_as(&daemon, OTHER, "cancel", task_id).await;
    assert!(is_error && foreign["error"].as_str().unwrap().contains("not owned"), "{foreign}");
    let (_, unknown) = task_as(&daemon, ORCH, "get", "nope").await;
    assert!(unknown["error"].as_str().unwrap().contains("unknown or expired task_id 'nope'"));

    // The MCP Tasks front door sees the same handle, for its owner only.
    let reply = rpc(&daemon, "tasks/get", json!({"taskId": task_id}), &[("x-tuic-session", ORCH)]).await;
    assert_eq!(reply.body["result"]["status"], json!("working"), "{}", reply.body);
    for key in ["createdAt", "lastUpdatedAt"] {
        let at = reply.body["result"][key].as_str().unwrap_or_default();
        let iso = at.len() == 24 && at.ends_with('Z') && at.as_bytes()[10] == b'T' && at[..4].parse::<u32>().is_ok();
        assert!(iso, "{key} is not ISO 8601: {}", reply.body);
    }
    let reply = rpc(&daemon, "tasks/list", json!({}), &[("x-tuic-session", OTHER)]).await;
    assert_eq!(reply.body["result"]["tasks"], json!([]));

    // tasks/result blocks while the task works; the agent exits 3, and it answers the failed result.
    let blocked = rpc(&daemon, "tasks/result", json!({"taskId": task_id}), &[("x-tuic-session", ORCH)]);
    let quit = ok(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "quit now"}));
    let (reply, _) = tokio::join!(blocked, quit);
    assert_eq!(reply.body["result"]["isError"], json!(true), "{}", reply.body);
    assert_eq!(reply.body["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], json!(task_id));

    // Failed with error_detail, and a later cancel changes nothing.
    let task = wait_until("the task fails", DEADLINE, || async {
        let (_, t) = task_as(&daemon, ORCH, "get", task_id).await;
        (t["status"] == json!("failed")).then_some(t)
    })
    .await;
    assert_eq!(task["error_detail"], json!("agent session exited with code 3"));
    let (_, cancel) = task_as(&daemon, ORCH, "cancel", task_id).await;
    assert_eq!((cancel["cancelled"].clone(), cancel["status"].clone()), (json!(false), json!("failed")));
    let reply = rpc(&daemon, "tasks/result", json!({"taskId": task_id}), &[("x-tuic-session", ORCH)]).await;
    assert_eq!(reply.body["result"]["isError"], json!(true), "{}", reply.body);
    let reply = rpc(&daemon, "tasks/cancel", json!({"taskId": task_id}), &[("x-tuic-session", ORCH)]).await;
    assert_eq!(reply.body["error"]["code"], json!(-32602), "a terminal task cannot be cancelled: {}", reply.body);
    let init = initialize(&daemon, &[]).await;
    let tasks = &init.body["result"]["capabilities"]["tasks"];
    assert!(tasks["list"].is_object() && tasks["cancel"].is_object(), "{}", init.body);
}

#[tokio::test]
async fn agent_spawn_defers_the_prompt_for_prefill_only_agents_and_cancel_is_immutable() {
    let daemon = Daemon::start().await;
    let spawned =
        spawn_as(&daemon, ORCH, json!({"agent_type": "codex", "prompt": "deferred job", "pty_description": null}))
            .await;
    let id = spawned["session_id"].as_str().unwrap().to_owned();
    assert_eq!(spawned["prompt_delivery"], json!("deferred"), "{spawned}");
    assert!(spawned.get("pty_description").is_none(), "null keeps the PTY descriptionless");
    wait_until("the deferred prompt is typed in and worked", DEADLINE, || async {
        text_of(&daemon, &id).await.contains("done: deferred job").then_some(())
    })
    .await;
    let metrics = ok(&daemon, "agent", json!({"action": "metrics"})).await;
    assert_eq!((metrics["spawned"].clone(), metrics["deferred_prompts_delivered"].clone()), (json!(1), json!(1)));
    let stats = ok(&daemon, "agent", json!({"action": "stats"})).await;
    assert_eq!(stats["by_agent_type"]["codex"], json!(1), "{stats}");
    let task_id = spawned["task_id"].as_str().unwrap();
    let (_, cancel) = task_as(&daemon, ORCH, "cancel", task_id).await;
    assert_eq!((cancel["cancelled"].clone(), cancel["status"].clone()), (json!(true), json!("cancelled")));
    ok(&daemon, "session", json!({"action": "kill", "session_id": id})).await;
    ok(&daemon, "session", json!({"action": "wait", "session_id": id, "until": "exited"})).await;
    let (_, task) = task_as(&daemon, ORCH, "get", task_id).await;
    assert_eq!(task["status"], json!("cancelled"), "the exit never overwrites a cancel: {task}");
}

#[tokio::test]
async fn agent_tool_bad_input_is_refused_and_changes_nothing() {
    let daemon = Daemon::start().await;
    let error = fails(&daemon, "agent", json!({"action": "fly"})).await;
    assert!(error.contains("Unknown action 'fly'") && error.contains("spawn, detect, stats, metrics"), "{error}");
    let error = fails(&daemon, "agent", json!({"action": "spawn", "agent_type": "nobody", "prompt": "x"})).await;
    assert!(error.contains("unknown agent_type 'nobody'") && error.contains("claude"), "{error}");
    let error = fails(&daemon, "agent", json!({"action": "spawn", "agent_type": "claude"})).await;
    assert!(error.contains("prompt"), "{error}");
    let error = fails(&daemon, "agent", json!({"action": "spawn", "prompt": "x"})).await;
    assert!(error.contains("agent_type, binary_path"), "{error}");
    let error =
        fails(&daemon, "agent", json!({"action": "spawn", "prompt": "x", "binary_path": "/nonexistent/agent"})).await;
    assert!(error.contains("/nonexistent/agent"), "{error}");
    let error = fails(&daemon, "agent", json!({"action": "spawn", "prompt": 5, "agent_type": "claude"})).await;
    assert!(error.contains("prompt"), "{error}");
    let metrics = ok(&daemon, "agent", json!({"action": "metrics"})).await;
    assert_eq!((metrics["spawned"].clone(), metrics["spawn_failures"].clone()), (json!(0), json!(1)));
    assert_eq!(ok(&daemon, "session", json!({"action": "list"})).await, json!([]));
    let error = fails(&daemon, "task", json!({"action": "get"})).await;
    assert!(error.contains("task_id"), "{error}");
    let detected = ok(&daemon, "agent", json!({"action": "detect"})).await;
    let (status, rest) = daemon.get("/agents/detect").await;
    assert_eq!((status, detected), (StatusCode::OK, rest), "one list for MCP and REST");
}

#[tokio::test]
async fn agent_routes_detect_all_and_open_in_app() {
    let daemon = Daemon::start().await;
    let (status, found) = daemon.post("/agents/detect-all", json!({"binaries": ["sh", "no-such-agent-xyz"]})).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert!(found[0]["path"].as_str().unwrap().ends_with("/sh"));
    assert_eq!(found[1], json!({"name": "no-such-agent-xyz"}));
    let (status, error) = daemon.post("/agents/detect-all", json!({"binaries": ["../sh"]})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error["error"].as_str().unwrap().contains("'../sh'"));
    let (status, error) = daemon.post("/agents/open-in-app", json!({"path": "/no/such/file"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error["error"].as_str().unwrap().contains("/no/such/file"));
    let (status, error) = daemon.post("/agents/open-in-app", json!({"path": "/", "app": "toaster"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error["error"].as_str().unwrap().contains("toaster"));
    let (status, answer) = daemon.post("/agents/open-in-app", json!({"path": "/", "app": "ide", "line": 3})).await;
    if status != StatusCode::OK {
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
        assert!(answer["error"].as_str().unwrap().contains("no desktop opener"), "{answer}");
    }
}

/// The MCP Tasks way to launch an agent: a task-augmented `tools/call` answers a `CreateTaskResult`
/// for the handle the spawn created, and `tasks/result` answers the spawn's tool result once the
/// agent's run ends.
#[tokio::test]
async fn a_task_augmented_spawn_answers_a_create_task_result_and_its_result_at_the_end() {
    let daemon = Daemon::start().await;
    let init = initialize(&daemon, &[]).await;
    let tasks = &init.body["result"]["capabilities"]["tasks"];
    assert!(tasks["requests"]["tools"]["call"].is_object(), "tasks.requests.tools.call: {}", init.body);
    let listed = rpc(&daemon, "tools/list", json!({}), &[]).await;
    let tools = listed.body["result"]["tools"].as_array().unwrap().clone();
    let execution = |name: &str| tools.iter().find(|t| t["name"] == json!(name)).unwrap()["execution"].clone();
    assert_eq!(execution("agent"), json!({"taskSupport": "optional"}));
    assert_eq!(execution("session"), Value::Null, "no taskSupport: forbidden");

    let who = [("x-tuic-session", ORCH)];
    let args = json!({"action": "spawn", "binary_path": fake_agent(), "agent_type": "claude",
        "prompt": "first task", "cwd": daemon.dir.path()});
    let params = json!({"name": "agent", "arguments": args, "task": {"ttl": 60000}});
    let reply = rpc(&daemon, "tools/call", params, &who).await;
    let result = &reply.body["result"];
    assert!(result.get("content").is_none(), "a CreateTaskResult, not the tool result: {}", reply.body);
    let task = &result["task"];
    let task_id = task["taskId"].as_str().expect("taskId").to_owned();
    assert_eq!((task["status"].clone(), task["pollInterval"].clone()), (json!("working"), json!(1000)));
    assert_eq!(task["ttl"], json!(86_400_000), "the receiver's own ttl is stated");
    assert!(task["createdAt"].as_str().is_some_and(|at| at.ends_with('Z')), "{task}");
    let immediate = result["_meta"]["io.modelcontextprotocol/model-immediate-response"].as_str().expect("text");
    let spawned: Value = serde_json::from_str(immediate).unwrap();
    assert_eq!(spawned["task_id"], json!(task_id));
    let id = spawned["session_id"].as_str().unwrap().to_owned();
    let reply = rpc(&daemon, "tasks/get", json!({"taskId": task_id}), &who).await;
    assert_eq!(reply.body["result"]["status"], json!("working"), "{}", reply.body);

    // tasks/result blocks until the agent's run ends, then answers the spawn's result with its end.
    let blocked = rpc(&daemon, "tasks/result", json!({"taskId": task_id}), &who);
    let quit = async {
        wait_until("the first task completes", DEADLINE, || async {
            let w = ok(&daemon, "session", json!({"action": "wait", "session_id": id, "timeout_ms": 5000})).await;
            (w["agent_state"] == json!("completed")).then_some(())
        })
        .await;
        ok(&daemon, "session", json!({"action": "submit", "session_id": id, "input": "quit now"})).await
    };
    let (reply, _) = tokio::join!(blocked, quit);
    let result = &reply.body["result"];
    assert_eq!(result["isError"], json!(true), "{}", reply.body);
    assert_eq!(result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], json!(task_id));
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!((text["session_id"].clone(), text["task_id"].clone()), (json!(id), json!(task_id)), "{text}");
    assert_eq!(
        (text["exit_code"].clone(), text["error"].clone()),
        (json!(3), json!("agent session exited with code 3"))
    );
}

#[tokio::test]
async fn task_augmentation_is_refused_where_it_is_not_supported_and_changes_nothing() {
    let daemon = Daemon::start().await;
    let task_call = |tool: &str, args: Value, task: Value| {
        let params = json!({"name": tool, "arguments": args, "task": task});
        rpc(&daemon, "tools/call", params, &[("x-tuic-session", ORCH)])
    };
    let reply = task_call("session", json!({"action": "list"}), json!({})).await;
    assert_eq!(reply.body["error"]["code"], json!(-32601), "{}", reply.body);
    assert!(reply.body["error"]["message"].as_str().unwrap().contains("'session' does not support task"));
    let reply = task_call("agent", json!({"action": "stats"}), json!({})).await;
    assert_eq!(reply.body["error"]["code"], json!(-32601), "{}", reply.body);
    assert!(reply.body["error"]["message"].as_str().unwrap().contains("only action=spawn"), "{}", reply.body);
    let spawn = json!({"action": "spawn", "binary_path": fake_agent(), "agent_type": "claude", "prompt": "x"});
    let reply = task_call("agent", spawn, json!("soon")).await;
    assert_eq!(reply.body["error"]["code"], json!(-32602), "{}", reply.body);
    assert!(reply.body["error"]["message"].as_str().unwrap().contains("\"task\" must be an object"));
    let reply = task_call("agent", json!({"action": "spawn", "agent_type": "claude", "prompt": " "}), json!({})).await;
    assert_eq!(reply.body["error"]["code"], json!(-32602), "{}", reply.body);
    assert!(reply.body["error"]["message"].as_str().unwrap().contains("prompt must not be empty"), "{}", reply.body);
    assert_eq!(ok(&daemon, "session", json!({"action": "list"})).await, json!([]));
    let reply = rpc(&daemon, "tasks/list", json!({}), &[("x-tuic-session", ORCH)]).await;
    assert_eq!(reply.body["result"]["tasks"], json!([]));
}
