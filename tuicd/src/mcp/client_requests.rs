//! Requests tuicd puts to an MCP client for an upstream: `sampling/createMessage`,
//! `elicitation/create` and `roots/list`, sent while the client's `tools/call` that caused them
//! runs, on that call's SSE response (the transport lets a server send requests there), and
//! answered by the client's POST of a JSON-RPC response. A client that did not declare the
//! capability a request needs is never asked: the upstream is told which one is missing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::lock::Recover;
use crate::state::App;

/// Where one `tools/call` puts the requests for its client: the messages its SSE response sends
/// before the call's own response.
pub(crate) type Outbox = mpsc::Sender<Value>;

/// The requests forwarded to clients, each with the client capability it needs.
const FORWARDED: [(&str, &str); 3] =
    [("sampling/createMessage", "sampling"), ("elicitation/create", "elicitation"), ("roots/list", "roots")];
/// Requests waiting for a client's answer, across every session. Each waits at most its
/// upstream's `timeout_secs` and a call's upstream sends them one at a time in practice; past
/// this many a new one is refused rather than letting a looping upstream grow the map.
const PENDING_MAX: usize = 256;
/// The JSON-RPC code of a request a client cannot be asked (it lacks the capability, or has no
/// stream to take it): for the upstream, the method is not offered.
const NOT_OFFERED: i64 = -32601;
/// The code of a request tuicd could not send or wait for.
const INTERNAL: i64 = -32603;

/// The capabilities in a client's `initialize` that an upstream's request needs.
pub(crate) fn declared(capabilities: Option<&Value>) -> Vec<&'static str> {
    let Some(capabilities) = capabilities.and_then(Value::as_object) else { return Vec::new() };
    FORWARDED.iter().map(|(_, capability)| *capability).filter(|c| capabilities.contains_key(*c)).collect()
}

/// Requests put to clients and waiting for their answers, by (protocol session, request id).
#[derive(Debug, Default)]
pub(crate) struct ClientRequests {
    pending: Mutex<HashMap<(String, String), oneshot::Sender<Value>>>,
    next: AtomicU64,
}

impl ClientRequests {
    /// Puts `method` to the client of protocol session `session` through its call's `outbox`:
    /// the result the client answered, or the JSON-RPC error object the upstream gets (the
    /// client's own error as it worded it, or why it was not asked).
    pub(crate) async fn ask(
        &self,
        app: &App,
        session: &str,
        outbox: Option<&Outbox>,
        method: &str,
        params: Value,
    ) -> Result<Value, Value> {
        let Some(capability) = FORWARDED.iter().find(|(m, _)| *m == method).map(|(_, c)| *c) else {
            return Err(error(NOT_OFFERED, format!("tuicd does not forward {method} from an upstream to its clients")));
        };
        let client = app.mcp.protocol_sessions.client_name(session).unwrap_or_else(|| "the client".into());
        match app.mcp.protocol_sessions.declares(session, capability) {
            None => return Err(error(NOT_OFFERED, format!("{method}: the MCP session that made the call has ended"))),
            Some(false) => {
                return Err(error(
                    NOT_OFFERED,
                    format!(
                        "{method} needs the \"{capability}\" capability, which the MCP client ({client}) did not declare in its initialize"
                    ),
                ));
            }
            Some(true) => {}
        }
        let Some(outbox) = outbox else {
            return Err(error(
                NOT_OFFERED,
                format!(
                    "{method}: the call that caused it has no response stream to carry a request to the client (a task-augmented call)"
                ),
            ));
        };
        let id = format!("tuicd-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let key = (session.to_owned(), id.clone());
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.pending.locked();
            if pending.len() >= PENDING_MAX {
                return Err(error(
                    INTERNAL,
                    format!("{method}: {PENDING_MAX} requests already wait for clients' answers"),
                ));
            }
            pending.insert(key.clone(), tx);
        }
        // Withdraws the request however this ends (answered, the upstream's deadline, the call gone).
        struct Withdraw<'a>(&'a ClientRequests, (String, String));
        impl Drop for Withdraw<'_> {
            fn drop(&mut self) {
                self.0.pending.locked().remove(&self.1);
            }
        }
        let _withdraw = Withdraw(self, key);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if outbox.send(request).await.is_err() {
            return Err(error(INTERNAL, format!("{method}: the client's call ended before the request could be sent")));
        }
        let Ok(mut answer) = rx.await else {
            return Err(error(INTERNAL, format!("{method}: no answer from the client")));
        };
        if let Some(error) = answer.get_mut("error").map(Value::take) {
            return Err(error);
        }
        match answer.get_mut("result").map(Value::take) {
            Some(result) => Ok(result),
            None => Err(error(INTERNAL, format!("{method}: the client answered with neither result nor error"))),
        }
    }

    /// Hands a client's JSON-RPC response to the request of its session waiting for it; `false`
    /// when none waits (already answered, withdrawn, or never sent).
    pub(crate) fn resolve(&self, session: &str, answer: Value) -> bool {
        let Some(id) = answer.get("id").and_then(Value::as_str) else { return false };
        let waiting = self.pending.locked().remove(&(session.to_owned(), id.to_owned()));
        waiting.is_some_and(|tx| tx.send(answer).is_ok())
    }
}

fn error(code: i64, message: String) -> Value {
    json!({"code": code, "message": message})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_capabilities_an_upstream_request_needs_are_recorded() {
        let capabilities = json!({"sampling": {}, "roots": {"listChanged": true}, "experimental": {}});
        assert_eq!(declared(Some(&capabilities)), ["sampling", "roots"]);
        assert!(declared(Some(&json!({"elicitation": null}))).contains(&"elicitation"));
        assert!(declared(None).is_empty());
        assert!(declared(Some(&json!("not an object"))).is_empty());
    }

    #[test]
    fn an_answer_reaches_only_the_request_of_its_own_session() {
        let requests = ClientRequests::default();
        let (tx, mut rx) = oneshot::channel();
        requests.pending.locked().insert(("a".into(), "tuicd-1".into()), tx);
        let answer = json!({"jsonrpc": "2.0", "id": "tuicd-1", "result": {}});
        assert!(!requests.resolve("b", answer.clone()), "another session's answer is not taken");
        assert!(rx.try_recv().is_err());
        assert!(requests.resolve("a", answer.clone()));
        assert_eq!(rx.try_recv().expect("delivered"), answer);
        assert!(!requests.resolve("a", answer), "answered once");
    }
}
