//! How long to wait for tuicd's answer to one proxied request.

use std::time::Duration;

use serde_json::Value;

use crate::limits::{
    CALL_DEADLINE, LONG_CALL_DEADLINE, SUBMIT_ACK_DEFAULT_MS, SUBMIT_ACK_MAX_MS, SUBMIT_ACK_MIN_MS, SUBMIT_MARGIN,
    WAIT_CAP_MS, WAIT_DEFAULT_MS, WAIT_MARGIN, WAIT_RUN_MAX_MS,
};

/// Every deadline outlasts tuicd's own bound for the call, so the bridge never gives up on a call
/// tuicd is still carrying out: 10 s for ordinary calls; a wait's own clamped timeout plus 5 s; a
/// submit's clamped acknowledgement window plus 10 s; 305 s for `ui action=confirm` and
/// `screenshot` (which waits for a GUI client) and long workspace operations. Collapsed
/// `call_tool` calls are judged by the tool they wrap.
pub(crate) fn for_request(method: &str, params: Option<&Value>) -> Duration {
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
        ("session", "submit") => {
            let requested = args.and_then(|a| a.get("timeout_ms")).and_then(Value::as_u64);
            let window = requested.unwrap_or(SUBMIT_ACK_DEFAULT_MS).clamp(SUBMIT_ACK_MIN_MS, SUBMIT_ACK_MAX_MS);
            Duration::from_millis(window) + SUBMIT_MARGIN
        }
        ("ui", "confirm" | "screenshot") | ("repo", "worktree_create" | "worktree_remove") => LONG_CALL_DEADLINE,
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
    fn a_submit_gets_its_clamped_acknowledgement_window_plus_the_margin() {
        assert_eq!(call("session", json!({"action": "submit"})), Duration::from_secs(13));
        assert_eq!(call("session", json!({"action": "submit", "timeout_ms": 10_000})), Duration::from_secs(20));
        assert_eq!(call("session", json!({"action": "submit", "timeout_ms": 999_999})), Duration::from_secs(20));
        assert_eq!(call("session", json!({"action": "submit", "timeout_ms": 1})), Duration::from_millis(10_250));
        assert_eq!(
            call("call_tool", json!({"tool_name": "session", "arguments": {"action": "submit", "timeout_ms": 5000}})),
            Duration::from_secs(15)
        );
    }

    #[test]
    fn confirm_and_worktree_ops_get_305_s_and_the_rest_10_s() {
        assert_eq!(call("ui", json!({"action": "confirm"})), Duration::from_secs(305));
        // tuicd waits up to 30 s for a GUI client's screenshot: more than the ordinary 10 s.
        assert_eq!(call("ui", json!({"action": "screenshot"})), Duration::from_secs(305));
        assert_eq!(call("repo", json!({"action": "worktree_remove"})), Duration::from_secs(305));
        assert_eq!(call("session", json!({"action": "list"})), Duration::from_secs(10));
        assert_eq!(for_request("ping", None), Duration::from_secs(10));
    }
}
