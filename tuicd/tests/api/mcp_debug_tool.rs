//! MCP `debug` (the daemon's own log ring, sessions, agent detection, help, and invoke_js refused)
//! and `plugin_dev_guide`.

use serde_json::json;

use crate::mcp_client::{fails, ok};
use crate::mcp_config_tool::daemon;
use crate::session_util::create_id;

#[tokio::test]
async fn logs_come_from_the_daemons_own_tracing_events_filtered_by_source_level_and_limit() {
    let daemon = daemon().await;
    let logs = ok(&daemon, "debug", json!({"action": "logs", "source": "server"})).await;
    let events = logs["events"].as_array().unwrap();
    assert!(
        events.iter().any(|e| e["message"].as_str().unwrap().contains("IPC listener bound") && e["level"] == "info"),
        "{logs}"
    );
    assert!(events.iter().all(|e| e["source"] == "server"), "{logs}");
    let errors = ok(&daemon, "debug", json!({"action": "logs", "level": "error"})).await;
    assert!(errors["events"].as_array().unwrap().iter().all(|e| e["level"] == "error"), "{errors}");
    let one = ok(&daemon, "debug", json!({"action": "logs", "limit": 1})).await;
    assert_eq!(one["events"].as_array().unwrap().len(), 1, "{one}");
    assert!(one["held"].as_u64().unwrap() >= 1);

    for (args, named) in [
        (json!({"action": "logs", "level": "loud"}), "level 'loud'"),
        (json!({"action": "logs", "limit": 0}), "limit must be 1..1000"),
        (json!({"action": "logs", "limit": 5000}), "limit must be 1..1000"),
        (json!({"action": "logs", "limit": "ten"}), "limit"),
        (json!({"action": "logs", "source": 3}), "source"),
        (json!({"action": "tail"}), "Unknown action 'tail'"),
    ] {
        let error = fails(&daemon, "debug", args.clone()).await;
        assert!(error.contains(named), "{args}: {error}");
    }
}

#[tokio::test]
async fn sessions_and_agent_detection_show_every_live_session() {
    let daemon = daemon().await;
    let id = create_id(&daemon, json!({})).await;
    let sessions = ok(&daemon, "debug", json!({"action": "sessions"})).await;
    let row = sessions["sessions"].as_array().unwrap().iter().find(|s| s["session_id"] == id).unwrap().clone();
    assert!(row["alias"].is_string() && row["tuic_session"].is_string() && row["pid"].is_u64(), "{row}");
    let detection = ok(&daemon, "debug", json!({"action": "agent_detection"})).await;
    assert!(detection["installed"].is_array(), "{detection}");
    let row = detection["sessions"].as_array().unwrap().iter().find(|s| s["session_id"] == id).unwrap().clone();
    assert!(row["engine"]["turn_epoch"].is_u64(), "the engine's view of the session: {row}");
    for action in ["sessions", "agent_detection", "help"] {
        let error = fails(&daemon, "debug", json!({"action": action, "all": true})).await;
        assert!(error.contains("unknown field `all`"), "{action}: {error}");
    }
}

#[tokio::test]
async fn invoke_js_says_there_is_no_webview_and_help_and_the_plugin_guide_answer_text() {
    let daemon = daemon().await;
    let error = fails(&daemon, "debug", json!({"action": "invoke_js", "script": "1+1"})).await;
    assert!(error.contains("no WebView"), "{error}");
    let help = ok(&daemon, "debug", json!({"action": "help"})).await;
    let text = help["content"].as_str().unwrap();
    for action in ["action=logs", "action=sessions", "action=agent_detection", "action=invoke_js"] {
        assert!(text.contains(action), "help names {action}: {text}");
    }
    let guide = ok(&daemon, "plugin_dev_guide", json!({})).await;
    let text = guide["content"].as_str().unwrap();
    assert!(text.contains("/api/plugins/output-watchers") && text.contains("/api/plugins/:plugin_id/data/"), "{text}");
    let error = fails(&daemon, "plugin_dev_guide", json!({"topic": "x"})).await;
    assert!(error.contains("topic"), "{error}");
}
