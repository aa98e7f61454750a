//! What the engine tells the session: typed change events (published as `parsed` events) and the
//! snapshot that `session action=status` / `list` carry.
//!
//! Variant and field names are the reference's `ParsedEvent` wire names (tuic-wire 2.6) where one
//! exists; `agent-state`, `command-finished` and the `turn_epoch` of `user-input` are new here,
//! because the reference published agent state only inside the `state` snapshot.

use serde::Serialize;

/// Observed PTY activity. Not task completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ShellState {
    Busy,
    Idle,
}

/// What a detected agent is doing (tuic-wire 2.4 `agent_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AgentState {
    Starting,
    Working,
    AwaitingInput,
    Idle,
    Completed,
    /// The CLI runs but nothing it shows or announces is known: no ready prompt, working
    /// indicator, dialog or announcement for [`crate::limits::AGENT_UNRECOGNISED`]
    /// (`state_reason` says so). Never settled: a wait for idle times out on it.
    Unknown,
}

/// One option of a choice prompt, e.g. `❯ 1. Yes` or Aider's `(Y)es`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ChoiceOption {
    /// What to type to pick it: the number, or the letter of a `(Y)es` style prompt.
    pub key: String,
    pub label: String,
    pub highlighted: bool,
    /// Declining or stopping options ("No, and tell Claude ...", "Reject").
    pub destructive: bool,
    /// A trailing parenthesised key hint, e.g. `esc` or `shift+tab`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// What to write to pick it when that is not `key` alone: `key` then Enter for a program
    /// reading a line (a non-agent program waiting on the terminal in canonical mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send: Option<String>,
}

/// A confident multiple-choice question on screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ChoicePrompt {
    pub title: String,
    pub options: Vec<ChoiceOption>,
    /// `cancel` when the prompt says Esc dismisses it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dismiss_key: Option<String>,
    /// `tab` when the prompt says Tab amends the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amend_key: Option<String>,
}

/// The agent's declared intent (`intent: text (title)` or OSC 7770 `intent=`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Intent {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A change the session publishes as a `parsed` event, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub(crate) enum AgentEvent {
    ShellState {
        state: ShellState,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent_type: Option<&'static str>,
    },
    /// New on this wire: the derived `agent_state` changed.
    AgentState {
        state: AgentState,
        turn_epoch: u64,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        background_work: bool,
    },
    Question {
        prompt_text: String,
        confident: bool,
    },
    ChoicePrompt(ChoicePrompt),
    /// The explicit end-of-task marker for the current turn.
    Suggest {
        items: Vec<String>,
    },
    Intent(Intent),
    /// OSC 9;4 progress: state 0 (none) ..= 4 (paused), value 0..=100.
    Progress {
        state: u8,
        value: u8,
    },
    /// A line submitted into the composer by any writer; it opened `turn_epoch`. Only its
    /// length: what a person types (a password at a `sudo` prompt too) is never published to
    /// every `/events` subscriber nor kept in the event history.
    UserInput {
        chars: usize,
        turn_epoch: u64,
    },
    /// New on this wire: OSC 133;D, a shell command finished.
    CommandFinished {
        #[serde(skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
}

/// What the composer holds, as far as the bytes written into it tell (never the app's own view).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ComposerState {
    Empty,
    Partial,
    /// Edited with keys whose effect cannot be known from bytes (arrows, history, Alt-keys).
    Unknown,
}

/// The engine's current view, for `session action=status` / `list` (tuic-wire 2.4 names).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct AgentStatus {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell_state: Option<ShellState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_state: Option<AgentState>,
    pub awaiting_input: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question_text: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub question_confident: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choice_prompt: Option<ChoicePrompt>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub background_work: bool,
    /// Idle proven by an explicit marker or a stable ready prompt, not by silence alone.
    /// Submit and injection require it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub idle_confirmed: bool,
    pub turn_epoch: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_intent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent_title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_actions: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_exit_code: Option<i32>,
    pub composer_state: ComposerState,
    /// Why `agent_state` is `unknown`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialise_with_the_reference_wire_names() {
        let shell = AgentEvent::ShellState { state: ShellState::Busy, agent_type: Some("claude") };
        assert_eq!(
            serde_json::to_string(&shell).unwrap(),
            r#"{"type":"shell-state","state":"busy","agent_type":"claude"}"#
        );
        let intent = AgentEvent::Intent(Intent { text: "Reading auth module".into(), title: Some("Auth".into()) });
        assert_eq!(
            serde_json::to_string(&intent).unwrap(),
            r#"{"type":"intent","text":"Reading auth module","title":"Auth"}"#
        );
        let state = AgentEvent::AgentState { state: AgentState::AwaitingInput, turn_epoch: 2, background_work: false };
        assert_eq!(
            serde_json::to_string(&state).unwrap(),
            r#"{"type":"agent-state","state":"awaiting_input","turn_epoch":2}"#
        );
        let choice = AgentEvent::ChoicePrompt(ChoicePrompt {
            title: "Proceed?".into(),
            options: vec![],
            dismiss_key: Some("cancel".into()),
            amend_key: None,
        });
        assert_eq!(
            serde_json::to_string(&choice).unwrap(),
            r#"{"type":"choice-prompt","title":"Proceed?","options":[],"dismiss_key":"cancel"}"#
        );
    }
}
