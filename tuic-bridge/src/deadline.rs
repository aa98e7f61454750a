//! How long to wait for tuicd's answer to one proxied request.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;

use crate::limits::{
    CALL_DEADLINE, LONG_CALL_DEADLINE, SUBMIT_ACK_DEFAULT_MS, SUBMIT_ACK_MAX_MS, SUBMIT_ACK_MIN_MS, SUBMIT_MARGIN,
    WAIT_CAP_MS, WAIT_DEFAULT_MS, WAIT_MARGIN, WAIT_RUN_MAX_MS,
};

/// The deadlines tuicd states per tool (`_meta["tuic/deadline_ms"]` in its `tools/list`), by name.
///
/// An upstream tool's call lasts as long as its upstream's `timeout_secs`, which only tuicd knows,
/// so tuicd states the deadline with the tool and the bridge keeps the latest listing's: one number
/// per tool, read before the call, with no extension logic to get wrong, and it holds for a silent
/// call as well as for one that sends progress.
#[derive(Debug, Default)]
pub(crate) struct Stated(HashMap<String, Duration>);

impl Stated {
    /// The deadlines a `tools/list` result states; they replace the previous listing's.
    pub(crate) fn from_listing(result: &Value) -> Self {
        let tools = result.get("tools").and_then(Value::as_array).into_iter().flatten();
        Self(
            tools
                .filter_map(|tool| {
                    let name = tool.get("name")?.as_str()?;
                    let ms = tool.get("_meta")?.get(proto::TOOL_DEADLINE_META)?.as_u64()?;
                    Some((name.to_owned(), Duration::from_millis(ms)))
                })
                .collect(),
        )
    }

    fn get(&self, name: &str) -> Option<Duration> {
        self.0.get(name).copied()
    }
}

/// Every deadline outlasts tuicd's own bound for the call, so the bridge never gives up on a call
/// tuicd is still carrying out: 10 s for ordinary calls; a wait's own clamped timeout plus 5 s; a
/// submit's clamped acknowledgement window plus 10 s; 305 s for `ui action=confirm` and
/// `screenshot` (which waits for a GUI client) and long workspace operations; for a tool tuicd
/// stated a deadline for (an upstream tool, `call_tool`), at least that. Collapsed `call_tool`
/// calls are judged by the tool they wrap.
pub(crate) fn for_request(method: &str, params: Option<&Value>, stated: &Stated) -> Duration {
    if method != "tools/call" {
        return CALL_DEADLINE;
    }
    let Some(params) = params else { return CALL_DEADLINE };
    let outer = params.get("name").and_then(Value::as_str).unwrap_or("");
    let (mut name, mut args) = (outer, params.get("arguments"));
    if name == "call_tool" {
        name = args.and_then(|a| a.get("tool_name")).and_then(Value::as_str).unwrap_or("");
        args = args.and_then(|a| a.get("arguments"));
    }
    let native = by_action(name, args);
    [outer, name].into_iter().filter_map(|n| stated.get(n)).fold(native, Duration::max)
}

/// A native tool's deadline from its action and arguments.
fn by_action(name: &str, args: Option<&Value>) -> Duration {
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
        for_request("tools/call", Some(&json!({"name": name, "arguments": args})), &Stated::default())
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
        assert_eq!(for_request("ping", None, &Stated::default()), Duration::from_secs(10));
    }

    #[test]
    fn a_deadline_tuicd_states_for_a_tool_is_taken_for_its_calls_and_for_call_tool() {
        let listing = json!({"tools": [
            {"name": "session", "inputSchema": {}},
            {"name": "up__slow", "_meta": {"tuic/deadline_ms": 65_000, "vendor": 1}},
            {"name": "call_tool", "_meta": {"tuic/deadline_ms": 35_000}},
        ]});
        let stated = Stated::from_listing(&listing);
        let call = |params: Value| for_request("tools/call", Some(&params), &stated);
        assert_eq!(call(json!({"name": "up__slow", "arguments": {}})), Duration::from_secs(65));
        assert_eq!(call(json!({"name": "up__other"})), Duration::from_secs(10), "an unlisted tool: the default");
        assert_eq!(call(json!({"name": "session", "arguments": {"action": "list"}})), Duration::from_secs(10));
        // Through call_tool: the target's stated deadline, else call_tool's own, else the target's rule.
        assert_eq!(call(json!({"name": "call_tool", "arguments": {"tool_name": "up__slow"}})), Duration::from_secs(65));
        assert_eq!(call(json!({"name": "call_tool", "arguments": {"tool_name": "up__x"}})), Duration::from_secs(35));
        let wait = json!({"name": "call_tool", "arguments": {"tool_name": "session", "arguments": {"action": "wait"}}});
        assert_eq!(call(wait), Duration::from_secs(65));
        assert_eq!(for_request("ping", None, &stated), Duration::from_secs(10));
    }
}
