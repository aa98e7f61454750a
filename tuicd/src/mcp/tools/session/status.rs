//! `session action=status`: the session's info with the agent engine's view under `state`,
//! `agent_state` and `background_work` lifted to the top level, and the PTY description.

use proto::session::SessionInfo;
use serde_json::Value;

use super::params::Target;
use super::session_error;
use crate::agent::AgentStatus;
use crate::mcp::tools::{CallContext, ToolError, to_value};

pub fn status(ctx: &CallContext, p: Target) -> Result<Value, ToolError> {
    let session = ctx.app.sessions.resolve(&p.session_id).map_err(session_error)?;
    let (info, agent) = session.info_and_status();
    let description = ctx.app.mcp.pty_description(&session.id);
    answer(info, &agent, description)
}

fn answer(mut info: SessionInfo, agent: &AgentStatus, pty_description: Option<String>) -> Result<Value, ToolError> {
    info.state = Some(to_value(agent)?);
    let Value::Object(mut map) = to_value(&info)? else {
        return Err(ToolError::new("could not encode the result: the session info is not an object"));
    };
    for key in ["agent_state", "background_work"] {
        if let Some(value) = map.get("state").and_then(|state| state.get(key)).cloned() {
            map.insert(key.into(), value);
        }
    }
    if let Some(description) = pty_description {
        map.insert("pty_description".into(), Value::String(description));
    }
    Ok(Value::Object(map))
}

#[cfg(test)]
mod tests {
    use proto::session::ShellState;

    use super::*;
    use crate::agent::{AgentState, ChoiceOption, ChoicePrompt, ComposerState};

    /// A session and agent view with every optional field set.
    fn full() -> (SessionInfo, AgentStatus) {
        let info = SessionInfo {
            session_id: "s-1".into(),
            tuic_session: "7c1f7f4e-2f7a-4a52-9a8e-0e1f1b2c3d4e".into(),
            alias: "tu-1".into(),
            cwd: "/tmp/\"quoted\" dir".into(),
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
        };
        (info, agent)
    }

    #[test]
    fn the_agent_view_is_nested_and_its_state_lifted_to_the_top() {
        let (info, agent) = full();
        let answer = answer(info.clone(), &agent, Some("fix it".into())).unwrap();
        assert_eq!(answer["session_id"], "s-1");
        assert_eq!(answer["state"], serde_json::to_value(&agent).unwrap());
        assert_eq!(answer["agent_state"], answer["state"]["agent_state"]);
        assert_eq!(answer["background_work"], true);
        assert_eq!(answer["pty_description"], "fix it");
        assert_eq!(answer["state"]["choice_prompt"]["options"][0]["label"], "Yes");
        let quiet = AgentStatus { agent_state: None, background_work: false, ..agent };
        let answer = answer_of(info, &quiet);
        for absent in ["agent_state", "background_work", "pty_description"] {
            assert!(answer.get(absent).is_none(), "{absent} is omitted, never null: {answer}");
        }
    }

    fn answer_of(info: SessionInfo, agent: &AgentStatus) -> Value {
        answer(info, agent, None).unwrap()
    }
}
