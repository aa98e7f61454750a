//! Progress tokens of proxied calls in flight. One upstream serves every caller, and callers pick
//! their tokens independently, so each call's `_meta.progressToken` is replaced by one unique
//! across all callers; the upstream's `notifications/progress` carrying it goes back to that
//! caller with the caller's own token.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::Deliver;
use crate::lock::Recover;

#[derive(Default)]
pub(super) struct ProgressRoutes {
    routes: Mutex<HashMap<String, Route>>,
    next: AtomicU64,
}

struct Route {
    original: Value,
    caller: Deliver,
}

/// A registered token; dropping it ends the route.
pub(super) struct Registered<'a> {
    routes: &'a ProgressRoutes,
    token: String,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.routes.routes.locked().remove(&self.token);
    }
}

impl ProgressRoutes {
    /// Replaces `params._meta.progressToken` (when the caller sent one) with a fresh token routed
    /// to `caller`; without a caller to reach, the token is removed.
    pub(super) fn rewrite<'a>(&'a self, params: &mut Value, caller: Option<&Deliver>) -> Option<Registered<'a>> {
        let meta = params.get_mut("_meta")?.as_object_mut()?;
        let original = meta.remove("progressToken")?;
        let caller = caller?.clone();
        let token = format!("tuicd-{}", self.next.fetch_add(1, Ordering::Relaxed));
        meta.insert("progressToken".into(), Value::String(token.clone()));
        self.routes.locked().insert(token.clone(), Route { original, caller });
        Some(Registered { routes: self, token })
    }

    /// Sends a `notifications/progress` to the caller whose token it carries, with that token.
    pub(super) fn route(&self, mut message: Value) {
        let Some(token) = message.pointer("/params/progressToken").map(token_key) else { return };
        let Some((original, caller)) = self.routes.locked().get(&token).map(|r| (r.original.clone(), r.caller.clone()))
        else {
            tracing::debug!(source = "upstream", token, "progress for no call in flight; dropped");
            return;
        };
        if let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) {
            params.insert("progressToken".into(), original);
        }
        caller(message);
    }
}

fn token_key(token: &Value) -> String {
    match token {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    /// A caller that keeps what it is sent.
    fn collector() -> (Deliver, Arc<Mutex<Vec<Value>>>) {
        let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
        let keep = seen.clone();
        (Arc::new(move |m| keep.locked().push(m)), seen)
    }

    #[test]
    fn two_callers_with_the_same_token_each_get_their_own_progress() {
        let routes = ProgressRoutes::default();
        let (a_tx, a_seen) = collector();
        let (b_tx, b_seen) = collector();
        let mut a = json!({"name": "x", "_meta": {"progressToken": 1}});
        let mut b = json!({"name": "x", "_meta": {"progressToken": 1}});
        let _ra = routes.rewrite(&mut a, Some(&a_tx)).expect("a routed");
        let rb = routes.rewrite(&mut b, Some(&b_tx)).expect("b routed");
        let (ta, tb) = (a["_meta"]["progressToken"].clone(), b["_meta"]["progressToken"].clone());
        assert_ne!(ta, tb);
        routes.route(json!({"method": "notifications/progress", "params": {"progressToken": tb, "progress": 1}}));
        let got = b_seen.locked().pop().expect("b got its progress");
        assert_eq!(got["params"]["progressToken"], json!(1));
        assert!(a_seen.locked().is_empty());
        drop(rb);
        routes.route(json!({"method": "notifications/progress", "params": {"progressToken": tb, "progress": 2}}));
        assert!(b_seen.locked().is_empty(), "a finished call's route is gone");
    }

    #[test]
    fn a_call_without_a_caller_stream_sends_no_token_upstream() {
        let routes = ProgressRoutes::default();
        let mut params = json!({"_meta": {"progressToken": "p"}});
        assert!(routes.rewrite(&mut params, None).is_none());
        assert!(params["_meta"].get("progressToken").is_none());
    }
}
