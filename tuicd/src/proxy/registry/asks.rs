//! Requests an upstream sends while it serves a call (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`): put to the client whose call caused them, and that
//! client's answer (or error) sent back to the upstream. A request that belongs to no one call is
//! answered with an error saying why.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Caller, Client, Entry};

/// The code of a request its client did not answer in time.
const NO_ANSWER: i64 = -32603;

/// Answers `request` (which has an `id` and a `method`) on its own task, so the transport's
/// reader goes on reading while the client thinks: the caller's answer within the upstream's
/// `timeout_secs`, or the error naming why nobody answered.
pub(super) fn answer(entry: &Arc<Entry>, client: Arc<Client>, caller: Result<Caller, String>, request: Value) {
    let name = entry.server.name.clone();
    let timeout = entry.timeout();
    tokio::spawn(async move {
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let method = request.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
        let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
        let outcome = match caller {
            Err(why) => Err(crate::proxy::wire::not_forwarded(&method, &name, &why)),
            Ok(caller) => match tokio::time::timeout(timeout, (caller.ask)(method.clone(), params)).await {
                Ok(outcome) => outcome,
                Err(_) => Err(json!({"code": NO_ANSWER,
                    "message": format!("the MCP client did not answer {method} within upstream {name}'s timeout_secs ({timeout:?})")})),
            },
        };
        if let Err(error) = &outcome {
            tracing::info!(source = "upstream", upstream = %name, method, error = %error["message"], "request from the upstream answered with an error");
        }
        let mut answer = json!({"jsonrpc": "2.0", "id": id});
        match outcome {
            Ok(result) => answer["result"] = result,
            Err(error) => answer["error"] = error,
        }
        if let Err(error) = client.respond(&answer).await {
            tracing::debug!(source = "upstream", upstream = %name, method, %error, "answer to the upstream's request not delivered");
        }
    });
}
