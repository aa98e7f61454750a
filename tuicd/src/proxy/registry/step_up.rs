//! Scope step-up: an upstream that answers 403 `insufficient_scope` waits for an authorization
//! that asks for more scope, a bounded number of times.
//!
//! The next authorization asks for the union of what the current credential was granted (when
//! the grant did not say: what was last asked) and what the challenge names. Re-authorizing
//! cannot help when the credential already holds all of it, and a server that keeps asking is
//! not followed forever (`UPSTREAM_STEP_UPS_IN_A_ROW`): either way the upstream is `failed`
//! until its configuration changes or a person authorizes it explicitly.

use super::{Entry, Hub, Status};
use crate::limits::UPSTREAM_STEP_UPS_IN_A_ROW;
use crate::lock::Recover;

/// An upstream's step-up state.
#[derive(Debug, Default)]
pub(super) struct StepUp {
    /// The scope the next authorization asks for, once a step-up named one.
    pub scope: Option<String>,
    /// Step-ups since the last successful call.
    pub in_a_row: u32,
    /// The upstream failed for a scope it keeps refusing: health ticks leave it alone until a
    /// person authorizes it (a reconnect) or its configuration changes.
    pub refused: bool,
}

/// What a step-up decides.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Decision {
    /// Wait for an authorization asking for this scope (`needs_auth`).
    Authorize(String),
    /// Re-authorizing would not help: the upstream is `failed` for this reason.
    Refuse(String),
}

/// The decision for a 403 whose challenge names `challenge`, given the scope the current
/// credential was `granted` (or asked with), the scope a step-up `asked` last, and the step-ups
/// already made in a row. Pure.
pub(super) fn decide(granted: Option<&str>, asked: Option<&str>, challenge: Option<&str>, in_a_row: u32) -> Decision {
    let held = granted.or(asked);
    let wanted = union(held, challenge);
    let refusing = challenge.filter(|c| !c.trim().is_empty()).unwrap_or("an unnamed scope");
    if held.is_some_and(|held| covers(held, &wanted)) {
        return Decision::Refuse(format!(
            "insufficient_scope: the upstream keeps refusing the request for lack of {refusing:?}, which the \
             current authorization already holds ({:?}); authorizing again would not help",
            held.unwrap_or_default()
        ));
    }
    if in_a_row + 1 >= UPSTREAM_STEP_UPS_IN_A_ROW {
        return Decision::Refuse(format!(
            "insufficient_scope: the upstream refused {} times in a row for lack of {refusing:?}; not asking again",
            in_a_row + 1
        ));
    }
    Decision::Authorize(wanted)
}

/// The space-separated union of two scope lists, `a`'s order first, without repeats.
pub(crate) fn union(a: Option<&str>, b: Option<&str>) -> String {
    let mut out: Vec<&str> = Vec::new();
    for scope in a.into_iter().chain(b).flat_map(str::split_whitespace) {
        if !out.contains(&scope) {
            out.push(scope);
        }
    }
    out.join(" ")
}

/// Whether every scope of `wanted` is among `held`.
fn covers(held: &str, wanted: &str) -> bool {
    wanted.split_whitespace().all(|w| held.split_whitespace().any(|h| h == w))
}

impl Entry {
    /// A 403 `insufficient_scope` naming `challenge`: moves the upstream to `needs_auth`, the
    /// next authorization asking for more scope, or to `failed` when that would not help.
    pub(super) fn step_up(&self, hub: &Hub, challenge: Option<&str>) -> Decision {
        let granted = (hub.bearer_for)(&self.server).and_then(|b| b.granted_scope());
        let decision = {
            let mut state = self.state.locked();
            let step_up = &mut state.step_up;
            let decision = decide(granted.as_deref(), step_up.scope.as_deref(), challenge, step_up.in_a_row);
            step_up.in_a_row += 1;
            match &decision {
                Decision::Authorize(scope) => {
                    step_up.scope = Some(scope.clone());
                    state.last_error =
                        Some(format!("insufficient_scope: needs {scope:?}; authorize this upstream again"));
                }
                Decision::Refuse(reason) => {
                    step_up.refused = true;
                    state.last_error = Some(reason.clone());
                }
            }
            decision
        };
        tracing::warn!(source = "upstream", upstream = %self.server.name, ?decision, "403 insufficient_scope");
        match decision {
            Decision::Authorize(_) => self.set_status(hub, Status::NeedsAuth),
            Decision::Refuse(_) => self.set_status(hub, Status::Failed),
        }
        decision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_up_asks_for_the_granted_scope_and_the_challenge_s() {
        let d = decide(Some("mcp:basic"), None, Some("mcp:basic mcp:write"), 0);
        assert_eq!(d, Decision::Authorize("mcp:basic mcp:write".into()));
        // Unknown grant: what was asked last stands in for it.
        let d = decide(None, Some("a b"), Some("c"), 1);
        assert_eq!(d, Decision::Authorize("a b c".into()));
        assert_eq!(decide(None, None, Some("x"), 0), Decision::Authorize("x".into()));
    }

    #[test]
    fn a_scope_already_held_or_a_third_step_up_in_a_row_fails_instead() {
        let Decision::Refuse(reason) = decide(Some("mcp:admin"), None, Some("mcp:admin"), 0) else { panic!() };
        assert!(reason.contains("insufficient_scope") && reason.contains("\"mcp:admin\""), "{reason}");
        assert!(matches!(decide(Some("a b"), None, None, 0), Decision::Refuse(_)), "nothing more to ask for");
        assert!(matches!(decide(Some("a"), None, Some("b"), 1), Decision::Authorize(_)));
        let Decision::Refuse(reason) = decide(Some("a"), None, Some("b"), 2) else { panic!() };
        assert!(reason.contains("3 times") && reason.contains("\"b\""), "{reason}");
    }

    #[test]
    fn the_union_keeps_order_and_drops_repeats() {
        assert_eq!(union(Some("a  b"), Some("b c a")), "a b c");
        assert_eq!(union(None, None), "");
        assert!(covers("a b c", "c a") && !covers("a", "a b") && covers("a", ""));
    }
}
