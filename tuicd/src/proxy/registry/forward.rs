//! A request other than `tools/call` sent to one upstream on its shared client: `resources/*`,
//! `prompts/*`, `completion/complete`. Its answer (or its JSON-RPC error) comes back as it is.

use std::sync::Arc;

use serde_json::Value;

use super::{CallError, Client, Entry, EntryState, Status, Upstreams};
use crate::lock::Recover;
use crate::proxy::wire::{RequestOpts, UpstreamError};

impl Upstreams {
    /// Sends `method` with `params` to the ready upstream named `upstream`, within its
    /// `timeout_secs`. A transport failure counts toward its breaker as a failed call does.
    pub(crate) async fn request(&self, upstream: &str, method: &str, params: Value) -> Result<Value, CallError> {
        let (entry, client) = self.ready_client(upstream)?;
        let opts = RequestOpts::within(entry.timeout());
        let result = client.request(method, params, opts).await;
        result.map_err(|error| {
            if matches!(error, UpstreamError::Timeout(_) | UpstreamError::Io(_) | UpstreamError::Protocol(_)) {
                let _ = entry.commands.try_send(super::actor::Command::CallFailed(error.to_string()));
            }
            CallError::Upstream { name: entry.server.name.clone(), error }
        })
    }

    /// The entry and client of the upstream named `upstream`, when it is ready.
    fn ready_client(&self, upstream: &str) -> Result<(Arc<Entry>, Arc<Client>), CallError> {
        let entry = self.named(upstream)?;
        let name = entry.server.name.clone();
        let state = entry.state.locked();
        refuse_unless_ready(&name, &state)?;
        let Some(client) = state.client.clone() else {
            return Err(CallError::Unavailable { name, status: "connecting", last_error: None });
        };
        drop(state);
        Ok((entry, client))
    }

    /// The upstream named `upstream`, or the error that lists the names there are.
    pub(super) fn named(&self, upstream: &str) -> Result<Arc<Entry>, CallError> {
        self.by_name(upstream).ok_or_else(|| {
            let valid: Vec<String> = self.all().iter().map(|e| e.server.name.clone()).collect();
            CallError::UnknownUpstream { name: upstream.to_owned(), valid: valid.join(", ") }
        })
    }
}

/// Why a call cannot go to the upstream `name` in `state` now, unless it is ready.
pub(super) fn refuse_unless_ready(name: &str, state: &EntryState) -> Result<(), CallError> {
    match state.status {
        Status::Ready => Ok(()),
        status @ (Status::NeedsAuth | Status::Authenticating) => {
            Err(CallError::NeedsAuth { name: name.to_owned(), status: status.as_str() })
        }
        status => Err(CallError::Unavailable {
            name: name.to_owned(),
            status: status.as_str(),
            last_error: state.last_error.clone(),
        }),
    }
}
