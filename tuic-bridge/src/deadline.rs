//! How long to wait for tuicd's answer to one proxied request.

use std::time::Duration;

use serde_json::Value;

use crate::limits::{CALL_DEADLINE, LONG_CALL_DEADLINE, WAIT_CAP_MS, WAIT_DEFAULT_MS, WAIT_MARGIN, WAIT_RUN_MAX_MS};

/// 10 s for ordinary calls; a wait's own clamped timeout plus 5 s; 305 s for `ui action=confirm`
/// and long workspace operations. Collapsed `call_tool` calls are judged by the tool they wrap.
pub fn for_request(method: &str, params: Option<&Value>) -> Duration {
    if method != "tools/call" {
        return CALL_DEADLINE;
    }
    let Some(params) = params else { return CALL_DEADLINE };
    let mut name = params.get("name").and_then(Value::as_str).unwrap_or("");
    let mut args = params.get("arguments");
    if name == "call_tool" {
        name = args.and_then(|a| a.get("tool_name")).and_then(Value::as_str).unwrap_or("");
        args = args.and_then(|a| a.get("arguments"));
    }
    let action = args.and_then(|a| a.get("action")).and_then(Value::as_str).unwrap_or("");
    match (name, action) {
        (_, "wait") => {
            let requested = args.and_then(|a| a.get("timeout_ms")).and_then(Value::as_u64).unwrap_or(WAIT_DEFAULT_MS);
            let runs = if requested >= WAIT_CAP_MS { WAIT_RUN_MAX_MS } else { requested };
            Duration::from_millis(runs) + WAIT_MARGIN
        }
        ("ui", "confirm") | ("repo", "worktree_create" | "worktree_remove") => LONG_CALL_DEADLINE,
        _ => CALL_DEADLINE,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(name: &str, args: Value) -> Duration {
        for_request("tools/call", Some(&json!({"name": name, "arguments": args})))
    }

    #[test]
    fn waits_get_their_clamped_timeout_plus_the_margin() {
        assert_eq!(call("session", json!({"action": "wait"})), Duration::from_secs(65));
        assert_eq!(call("session", json!({"action": "wait", "timeout_ms": 2000})), Duration::from_secs(7));
        assert_eq!(call("agent", json!({"action": "wait", "timeout_ms": 999_999})), Duration::from_secs(300));
        assert_eq!(
            call("call_tool", json!({"tool_name": "session", "arguments": {"action": "wait", "timeout_ms": 1000}})),
            Duration::from_secs(6)
        );
    }

    #[test]
    fn confirm_and_worktree_ops_get_305_s_and_the_rest_10_s() {
        assert_eq!(call("ui", json!({"action": "confirm"})), Duration::from_secs(305));
        assert_eq!(call("repo", json!({"action": "worktree_remove"})), Duration::from_secs(305));
        assert_eq!(call("session", json!({"action": "list"})), Duration::from_secs(10));
        assert_eq!(for_request("ping", None), Duration::from_secs(10));
    }
}
