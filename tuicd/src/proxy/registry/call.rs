//! A proxied `tools/call`: the checks at dispatch, the shared client, progress and logging
//! routed to the caller, metrics.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::mpsc;

use super::step_up::Decision;
use super::{Caller, Client, Entry, Status, Upstreams};
use crate::limits::UPSTREAM_NOTIFY_QUEUE;
use crate::lock::Recover;
use crate::proxy::wire::{RequestOpts, UpstreamError};

/// Why a proxied call was not answered by the upstream's tool.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum CallError {
    #[error("Unknown upstream '{name}'. Valid upstreams: {valid}")]
    UnknownUpstream { name: String, valid: String },
    #[error("Unknown tool '{tool}' on upstream '{upstream}'. Valid tools: {valid}")]
    UnknownTool { upstream: String, tool: String, valid: String },
    #[error(
        "upstream '{name}' needs authorization ({status}): authorize it with `tuicd upstream authorize {name}` or POST /mcp/upstreams/{name}/authorize"
    )]
    NeedsAuth { name: String, status: &'static str },
    #[error(
        "upstream '{name}' needs authorization for scope \"{scope}\" (it answered 403 insufficient_scope): authorize it with `tuicd upstream authorize {name}` or POST /mcp/upstreams/{name}/authorize"
    )]
    NeedsScope { name: String, scope: String },
    #[error("upstream '{name}' is {status} and cannot take calls{}", last_error.as_ref().map(|e| format!(" (last error: {e})")).unwrap_or_default())]
    Unavailable { name: String, status: &'static str, last_error: Option<String> },
    #[error("upstream '{name}': {error}")]
    Upstream { name: String, error: UpstreamError },
}

impl Upstreams {
    /// Calls `tool` (the upstream's own name) on the upstream named `upstream`. `params` is the
    /// `tools/call` params to send (`name` is set here); its `_meta.progressToken` is rewritten,
    /// the progress and log notifications of the call go to `caller`, and the requests the
    /// upstream sends while it runs are put to it.
    pub(crate) async fn call(
        &self,
        upstream: &str,
        tool: &str,
        mut params: Value,
        caller: Option<Caller>,
    ) -> Result<Value, CallError> {
        let entry = self.named(upstream)?;
        let name = entry.server.name.clone();
        let client = {
            let state = entry.state.locked();
            super::forward::refuse_unless_ready(&name, &state)?;
            let admitted = |t: &str| entry.admits(t);
            let listed = state.tools.iter().any(|t| t.get("name").and_then(Value::as_str) == Some(tool));
            if !listed || !admitted(tool) {
                let valid: Vec<&str> = state
                    .tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .filter(|t| admitted(t))
                    .collect();
                return Err(CallError::UnknownTool { upstream: name, tool: tool.to_owned(), valid: valid.join(", ") });
            }
            state.client.clone()
        };
        let Some(client) = client else {
            return Err(CallError::Unavailable { name, status: "connecting", last_error: None });
        };
        if let Some(object) = params.as_object_mut() {
            object.insert("name".into(), Value::String(tool.to_owned()));
        }
        let _progress = self.hub.progress.rewrite(&mut params, caller.as_ref().map(|c| &c.notify));
        let _listening = Listening::new(&entry, &self.hub, caller.clone());
        // Every call takes the messages its transport relates to it (an HTTP call's response
        // stream; on stdio, a message while it is the only call in flight), with or without a
        // caller to hand them to.
        let related = Some(self.relay(&entry, &client, caller));
        let opts = RequestOpts { timeout: entry.timeout(), related };
        let started = Instant::now();
        let result = client.request("tools/call", params, opts).await;
        let stepped = match &result {
            Err(UpstreamError::NeedsOAuth { .. }) => {
                // The credential was refused even after its one recovery: the upstream waits for
                // an authorization (and the OAuth consent watcher asks for one).
                entry.set_status(&self.hub, Status::NeedsAuth);
                None
            }
            Err(UpstreamError::InsufficientScope { scope, .. }) => {
                let decision = entry.step_up(&self.hub, scope.as_deref());
                // The connection's credential cannot serve: drop it until a person authorizes.
                let _ = entry.commands.try_send(super::actor::Command::Park);
                Some(decision)
            }
            _ => None,
        };
        let mut state = entry.state.locked();
        state.metrics.call_count += 1;
        state.metrics.last_latency_ms = Some(started.elapsed().as_millis() as u64);
        match (result, stepped) {
            (Ok(value), _) => {
                // A served call: the step-ups in a row start again from zero, and the upstream
                // answers, whatever the failures before.
                state.step_up.in_a_row = 0;
                state.breaker.success();
                Ok(value)
            }
            (Err(_), Some(decision)) => {
                state.metrics.error_count += 1;
                Err(match decision {
                    Decision::Authorize(scope) => CallError::NeedsScope { name, scope },
                    Decision::Refuse(reason) => {
                        CallError::Unavailable { name, status: Status::Failed.as_str(), last_error: Some(reason) }
                    }
                })
            }
            (Err(error), None) => {
                state.metrics.error_count += 1;
                // A stdio process that exited is named by its supervisor, with its last stderr
                // lines; this call's shorter account must not replace that.
                let exited = matches!(error, UpstreamError::Closed(_)) && matches!(*client, super::Client::Stdio(_));
                if !exited {
                    state.last_error = Some(error.to_string());
                }
                if matches!(
                    error,
                    UpstreamError::Timeout(_)
                        | UpstreamError::Closed(_)
                        | UpstreamError::Io(_)
                        | UpstreamError::Protocol(_)
                ) {
                    let _ = entry.commands.try_send(super::actor::Command::CallFailed(error.to_string()));
                }
                Err(CallError::Upstream { name, error })
            }
        }
    }

    /// A sender for the transport's messages related to the call: progress goes through the
    /// token routes (to restore the caller's token), a request from the upstream is put to the
    /// caller, any other notification goes to the caller as it is.
    fn relay(&self, entry: &Arc<Entry>, client: &Arc<Client>, caller: Option<Caller>) -> mpsc::Sender<Value> {
        let (tx, mut rx) = mpsc::channel::<Value>(UPSTREAM_NOTIFY_QUEUE);
        let (hub, entry, client) = (self.hub.clone(), entry.clone(), client.clone());
        tokio::spawn(async move {
            while let Some(message) = rx.recv().await {
                if message.get("id").is_some() {
                    let caller = caller
                        .clone()
                        .ok_or_else(|| "the tool call it belongs to has no MCP protocol session to ask".into());
                    super::asks::answer(&entry, client.clone(), caller, message);
                } else if message.get("method").and_then(Value::as_str) == Some("notifications/progress") {
                    hub.progress.route(message);
                } else if let Some(caller) = &caller {
                    (caller.notify)(message);
                }
            }
        });
        tx
    }
}

/// A call in flight: counted for the shutdown drain, and its caller (when it has one) takes the
/// messages of its upstream no request names while it is the only call in flight.
struct Listening {
    entry: Arc<Entry>,
    hub: Arc<super::Hub>,
    id: u64,
}

impl Listening {
    fn new(entry: &Arc<Entry>, hub: &Arc<super::Hub>, caller: Option<Caller>) -> Self {
        let id = entry.next_call.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        entry.callers.locked().insert(id, caller);
        hub.calls.send_modify(|n| *n += 1);
        Self { entry: entry.clone(), hub: hub.clone(), id }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.entry.callers.locked().remove(&self.id);
        self.hub.calls.send_modify(|n| *n = n.saturating_sub(1));
    }
}
