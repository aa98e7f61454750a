//! Pending authorization flows, keyed by their `state`. Each flow owns its state nonce, PKCE
//! verifier and callback port; nothing is shared between flows, so concurrent authorizations
//! never wait on each other. Ended flows are remembered (bounded) so a late redirect learns why.
//! Pure: time comes in as an argument.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use super::fetch::Client;
use crate::limits::OAUTH_ENDED_MAX;

/// One authorization in progress.
#[derive(Debug, Clone)]
pub(crate) struct PendingFlow {
    pub upstream_id: String,
    pub name: String,
    /// The upstream URL, the key its tokens are stored under.
    pub server_url: String,
    pub verifier: String,
    pub redirect_uri: String,
    pub token_endpoint: String,
    pub client: Client,
    /// The RFC 8707 `resource` sent with the authorization and token requests.
    pub resource: String,
    pub started: Instant,
    /// The upstream's status before the flow, restored by a cancel.
    pub previous_status: Option<String>,
    /// The `scope` the authorization request asked for, if any.
    pub scope: Option<String>,
}

/// Why a flow is no longer pending, as the late-redirect page says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    Completed,
    Failed,
    Expired,
    Cancelled,
    /// A newer authorization of the same upstream replaced it.
    Superseded,
}

impl Ended {
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Self::Completed => "this authorization was already completed",
            Self::Failed => "this authorization already failed",
            Self::Expired => "this authorization request expired (it waits 5 minutes for the redirect)",
            Self::Cancelled => "this authorization was cancelled",
            Self::Superseded => "a newer authorization of the same upstream replaced this one",
        }
    }
}

/// Why a callback finds no pending flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    Ended(Ended),
    Unknown,
}

#[derive(Debug, Default)]
pub(crate) struct Flows {
    pending: HashMap<String, PendingFlow>,
    ended: VecDeque<(String, Ended)>,
}

impl Flows {
    /// Records `flow` under `state`; a flow of the same upstream still pending is superseded and
    /// returned, and the new flow inherits the status it would restore.
    pub(crate) fn insert(&mut self, state: String, mut flow: PendingFlow) -> Option<PendingFlow> {
        let old = self.pending.iter().find(|(_, f)| f.upstream_id == flow.upstream_id).map(|(s, _)| s.clone());
        let superseded = old.and_then(|s| self.end(&s, Ended::Superseded));
        if let Some(old) = &superseded {
            flow.previous_status = old.previous_status.clone();
        }
        self.pending.insert(state, flow);
        superseded
    }

    /// Takes the flow `state` names, for its callback.
    pub(crate) fn take(&mut self, state: &str) -> Result<PendingFlow, Missing> {
        match self.pending.remove(state) {
            Some(flow) => Ok(flow),
            None => {
                Err(self.ended.iter().find(|(s, _)| s == state).map_or(Missing::Unknown, |(_, e)| Missing::Ended(*e)))
            }
        }
    }

    /// Records how the flow `state` ended (after `take`).
    pub(crate) fn record(&mut self, state: &str, how: Ended) {
        if self.ended.len() >= OAUTH_ENDED_MAX {
            self.ended.pop_front();
        }
        self.ended.push_back((state.to_owned(), how));
    }

    /// Ends the pending flow `state` as `how`, if it is still pending.
    pub(crate) fn end(&mut self, state: &str, how: Ended) -> Option<PendingFlow> {
        let flow = self.pending.remove(state)?;
        self.record(state, how);
        Some(flow)
    }

    /// The state of the pending flow of upstream `name`.
    pub(crate) fn state_of(&self, name: &str) -> Option<String> {
        self.pending.iter().find(|(_, f)| f.name == name).map(|(s, _)| s.clone())
    }

    /// Drops every flow older than `timeout` at `now`, returning them for their rollback.
    pub(crate) fn sweep(&mut self, now: Instant, timeout: Duration) -> Vec<PendingFlow> {
        let expired: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, f)| now.saturating_duration_since(f.started) >= timeout)
            .map(|(s, _)| s.clone())
            .collect();
        expired.iter().filter_map(|s| self.end(s, Ended::Expired)).collect()
    }

    #[cfg(test)]
    pub(crate) fn pending_count(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::oauth::tokens::ClientAuth;

    fn flow(id: &str, started: Instant) -> PendingFlow {
        PendingFlow {
            upstream_id: id.into(),
            name: format!("n-{id}"),
            server_url: "http://a/mcp".into(),
            verifier: "v".into(),
            redirect_uri: "http://127.0.0.1:1/callback".into(),
            token_endpoint: "http://a/token".into(),
            client: Client { id: "c".into(), secret: None, auth: ClientAuth::None },
            resource: "http://a/mcp".into(),
            started,
            previous_status: None,
            scope: None,
        }
    }

    #[test]
    fn flows_of_two_upstreams_are_independent() {
        let now = Instant::now();
        let mut flows = Flows::default();
        assert!(flows.insert("s1".into(), flow("a", now)).is_none());
        assert!(flows.insert("s2".into(), flow("b", now)).is_none());
        assert_eq!(flows.take("s2").unwrap().upstream_id, "b");
        assert_eq!(flows.take("s1").unwrap().upstream_id, "a");
        assert_eq!(flows.take("s3").unwrap_err(), Missing::Unknown);
    }

    #[test]
    fn a_second_flow_of_one_upstream_supersedes_the_first() {
        let now = Instant::now();
        let mut flows = Flows::default();
        flows.insert("s1".into(), PendingFlow { previous_status: Some("ready".into()), ..flow("a", now) });
        let second = PendingFlow { previous_status: Some("authenticating".into()), ..flow("a", now) };
        assert_eq!(flows.insert("s2".into(), second).unwrap().upstream_id, "a");
        assert_eq!(flows.take("s2").unwrap().previous_status.as_deref(), Some("ready"));
        flows.insert("s2".into(), flow("a", now));
        assert_eq!(flows.take("s1").unwrap_err(), Missing::Ended(Ended::Superseded));
        assert_eq!(flows.state_of("n-a").as_deref(), Some("s2"));
    }

    #[test]
    fn the_sweep_drops_only_flows_past_the_timeout_and_remembers_why() {
        let start = Instant::now();
        let mut flows = Flows::default();
        flows.insert("old".into(), flow("a", start));
        flows.insert("new".into(), flow("b", start + Duration::from_secs(200)));
        let swept = flows.sweep(start + Duration::from_secs(300), Duration::from_secs(300));
        assert_eq!(swept.len(), 1);
        assert_eq!(swept[0].upstream_id, "a");
        assert_eq!(flows.pending_count(), 1);
        assert_eq!(flows.take("old").unwrap_err(), Missing::Ended(Ended::Expired));
    }

    #[test]
    fn the_memory_of_ended_flows_is_bounded() {
        let mut flows = Flows::default();
        for i in 0..OAUTH_ENDED_MAX + 5 {
            flows.record(&format!("s{i}"), Ended::Completed);
        }
        assert_eq!(flows.take("s0").unwrap_err(), Missing::Unknown);
        assert_eq!(flows.take(&format!("s{}", OAUTH_ENDED_MAX + 4)).unwrap_err(), Missing::Ended(Ended::Completed));
    }
}
