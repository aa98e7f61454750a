//! `session action=status`, serialised straight to its JSON text.
//!
//! The answer is the session's info with the agent engine's view under `state`, `agent_state`
//! and `background_work` lifted to the top level, and the PTY description. These views print it
//! without building a `serde_json::Value` tree (sorted maps) first, and print the same bytes one
//! would: their fields are declared in alphabetical order, the order a `Value` object prints its
//! keys in (the tests compare both ways).

use proto::session::{SessionInfo, ShellState};
use serde::Serialize;
use serde_json::Value;

use super::params::Target;
use super::session_error;
use crate::agent::{AgentState, AgentStatus, ComposerState};
use crate::mcp::model::escaped_json;
use crate::mcp::tools::{CallContext, ToolError};

/// The `status` answer. Keys in alphabetical order; optional values omitted, never null.
#[derive(Debug, Serialize)]
struct StatusAnswer<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_state: Option<AgentState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_type: Option<&'a str>,
    alias: &'a str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    background_work: bool,
    cols: u16,
    cwd: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    exited: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    paused: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pty_description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repo: Option<&'a str>,
    rows: u16,
    session_id: &'a str,
    shell: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    shell_state: Option<ShellState>,
    state: StateView<'a>,
    total_lines: u64,
    total_written: u64,
    tuic_session: &'a str,
}

/// [`AgentStatus`] with its keys in alphabetical order.
#[derive(Debug, Serialize)]
struct StateView<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_intent: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_state: Option<AgentState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_type: Option<&'static str>,
    awaiting_input: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    background_work: bool,
    /// Nested objects of its own: printed through a `Value` so that their keys sort too. Rare
    /// (only while a choice prompt is on screen).
    #[serde(skip_serializing_if = "Option::is_none")]
    choice_prompt: Option<Value>,
    composer_state: ComposerState,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    idle_confirmed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    intent_title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    progress: Option<u8>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    question_confident: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    question_text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shell_state: Option<crate::agent::ShellState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state_reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    suggested_actions: Option<&'a [String]>,
    turn_epoch: u64,
}

/// The answer's JSON text, escaped for the result's text block ([`escaped_json`]).
pub(super) fn status(ctx: &CallContext, p: Target) -> Result<String, ToolError> {
    let session = ctx.app.sessions.resolve(&p.session_id).map_err(session_error)?;
    let (info, agent) = session.info_and_status();
    let agent = agent.ok_or_else(|| ToolError::new(format!("session {} has no agent engine attached", session.id)))?;
    let description = ctx.app.mcp.pty_description(&session.id);
    render(&info, &agent, description.as_deref(), |answer| escaped_json(answer))
}

/// Prints the answer with `print` (the tests print it plainly too).
fn render(
    info: &SessionInfo,
    agent: &AgentStatus,
    pty_description: Option<&str>,
    print: impl FnOnce(&StatusAnswer<'_>) -> serde_json::Result<String>,
) -> Result<String, ToolError> {
    let choice_prompt = match &agent.choice_prompt {
        Some(prompt) => Some(crate::mcp::tools::to_value(prompt)?),
        None => None,
    };
    let state = StateView {
        agent_intent: agent.agent_intent.as_deref(),
        agent_state: agent.agent_state,
        agent_type: agent.agent_type,
        awaiting_input: agent.awaiting_input,
        background_work: agent.background_work,
        choice_prompt,
        composer_state: agent.composer_state,
        idle_confirmed: agent.idle_confirmed,
        intent_title: agent.intent_title.as_deref(),
        last_exit_code: agent.last_exit_code,
        progress: agent.progress,
        question_confident: agent.question_confident,
        question_text: agent.question_text.as_deref(),
        shell_state: agent.shell_state,
        state_reason: agent.state_reason.as_deref(),
        suggested_actions: agent.suggested_actions.as_deref(),
        turn_epoch: agent.turn_epoch,
    };
    let answer = StatusAnswer {
        agent_state: agent.agent_state,
        agent_type: info.agent_type.as_deref(),
        alias: &info.alias,
        background_work: agent.background_work,
        cols: info.cols,
        cwd: &info.cwd,
        display_name: info.display_name.as_deref(),
        exit_code: info.exit_code,
        exited: info.exited,
        paused: info.paused,
        pid: info.pid,
        pty_description,
        repo: info.repo.as_deref(),
        rows: info.rows,
        session_id: &info.session_id,
        shell: &info.shell,
        shell_state: info.shell_state,
        state,
        total_lines: info.total_lines,
        total_written: info.total_written,
        tuic_session: &info.tuic_session,
    };
    print(&answer).map_err(|e| ToolError::new(format!("could not encode the result: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::event::{ChoiceOption, ChoicePrompt};

    /// What `status` answered when it built a `Value`: the info with `state`, `agent_state` and
    /// `background_work` lifted from it, and the description.
    fn through_value(info: &SessionInfo, agent: &AgentStatus, pty_description: Option<&str>) -> String {
        let mut info = info.clone();
        info.state = serde_json::to_value(agent).ok();
        let Value::Object(mut map) = serde_json::to_value(&info).unwrap() else { unreachable!() };
        for key in ["agent_state", "background_work"] {
            if let Some(value) = map["state"].get(key).cloned() {
                map.insert(key.into(), value);
            }
        }
        if let Some(description) = pty_description {
            map.insert("pty_description".into(), Value::String(description.into()));
        }
        serde_json::to_string(&map).unwrap()
    }

    /// Every field named, so that a field added to either type fails to compile here until the
    /// views above carry it.
    fn full() -> (SessionInfo, AgentStatus) {
        let info = SessionInfo {
            session_id: "s-1".into(),
            tuic_session: "7c1f7f4e-2f7a-4a52-9a8e-0e1f1b2c3d4e".into(),
            alias: "tu-1".into(),
            cwd: "/tmp/\"quoted\" dir".into(),
            repo: Some("/tmp/\"quoted\" dir".into()),
            shell: "/bin/sh".into(),
            display_name: Some("build ✓".into()),
            agent_type: Some("claude".into()),
            rows: 24,
            cols: 80,
            pid: Some(4242),
            shell_state: Some(ShellState::Busy),
            paused: true,
            exited: true,
            exit_code: Some(-1),
            total_written: 123_456,
            total_lines: 789,
            state: None,
        };
        let agent = AgentStatus {
            agent_type: Some("claude"),
            shell_state: Some(crate::agent::ShellState::Idle),
            agent_state: Some(AgentState::AwaitingInput),
            awaiting_input: true,
            question_text: Some("Proceed?\n(y/n)".into()),
            question_confident: true,
            choice_prompt: Some(ChoicePrompt {
                title: "Pick".into(),
                options: vec![ChoiceOption {
                    key: "1".into(),
                    label: "Yes".into(),
                    highlighted: true,
                    destructive: false,
                    hint: Some("esc".into()),
                    send: None,
                }],
                dismiss_key: Some("cancel".into()),
                amend_key: None,
            }),
            background_work: true,
            idle_confirmed: true,
            turn_epoch: 7,
            agent_intent: Some("Reading auth".into()),
            intent_title: Some("Auth".into()),
            suggested_actions: Some(vec!["run tests".into()]),
            progress: Some(40),
            last_exit_code: Some(2),
            composer_state: ComposerState::Partial,
            state_reason: Some("nothing matches".into()),
        };
        (info, agent)
    }

    /// The text, printed plainly and escaped as `status` sends it (which must be the same text).
    fn plain(info: &SessionInfo, agent: &AgentStatus, pty_description: Option<&str>) -> String {
        let text = render(info, agent, pty_description, |a| serde_json::to_string(a)).unwrap();
        let escaped = render(info, agent, pty_description, |a| escaped_json(a)).unwrap();
        assert_eq!(crate::mcp::model::ToolText::escaped(escaped, false).text(), text);
        text
    }

    #[test]
    fn the_text_is_what_the_value_tree_printed() {
        let (info, agent) = full();
        assert_eq!(plain(&info, &agent, Some("fix it")), through_value(&info, &agent, Some("fix it")));
        let bare_info = SessionInfo {
            display_name: None,
            agent_type: None,
            pid: None,
            shell_state: None,
            paused: false,
            exited: false,
            exit_code: None,
            repo: None,
            ..info
        };
        let bare_agent = AgentStatus {
            agent_type: None,
            shell_state: None,
            agent_state: None,
            awaiting_input: false,
            question_text: None,
            question_confident: false,
            choice_prompt: None,
            background_work: false,
            idle_confirmed: false,
            agent_intent: None,
            intent_title: None,
            suggested_actions: None,
            progress: None,
            last_exit_code: None,
            composer_state: ComposerState::Empty,
            ..agent
        };
        assert_eq!(plain(&bare_info, &bare_agent, None), through_value(&bare_info, &bare_agent, None));
    }
}
