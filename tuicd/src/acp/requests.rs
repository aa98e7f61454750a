//! What a person asks of an ACP connection, as the routes hand it over: a permission answer, a
//! session option, a session operation (and the capability it needs), ego's extensions, and a
//! prompt's content checked against the protocol's types.

use agent_client_protocol_schema::{AgentCapabilities, ContentBlock};
use serde_json::{Value, json};

use super::AcpError;

/// How a person answers a permission request.
#[derive(Debug)]
pub(crate) enum PermissionAnswer {
    Selected(String),
    Cancelled,
}

/// A session's option to set.
#[derive(Debug)]
pub(crate) enum ConfigChange {
    Option { config_id: String, value: Value },
    Mode(String),
}

/// The session operations that map one-to-one onto an ACP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionOp {
    Load,
    Resume,
    Fork,
    Close,
    Delete,
}

impl SessionOp {
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "load" => SessionOp::Load,
            "resume" => SessionOp::Resume,
            "fork" => SessionOp::Fork,
            "close" => SessionOp::Close,
            _ => return None,
        })
    }

    pub(super) fn method(self) -> &'static str {
        match self {
            SessionOp::Load => "session/load",
            SessionOp::Resume => "session/resume",
            SessionOp::Fork => "session/fork",
            SessionOp::Close => "session/close",
            SessionOp::Delete => "session/delete",
        }
    }

    /// `raw` is the capabilities as the agent sent them: `delete` is newer than the typed schema.
    pub(super) fn advertised(self, caps: &AgentCapabilities, raw: &Value) -> bool {
        let session = &caps.session_capabilities;
        match self {
            SessionOp::Load => caps.load_session,
            SessionOp::Resume => session.resume.is_some(),
            SessionOp::Fork => session.fork.is_some(),
            SessionOp::Close => session.close.is_some(),
            SessionOp::Delete => raw["sessionCapabilities"]["delete"].is_object(),
        }
    }
}

/// ego's own extensions: sent as `_ego/session/<name>`; an agent without them says method-not-found.
pub(crate) const EXTENSIONS: [(&str, &str); 3] =
    [("pause", "_ego/session/pause"), ("resume-turn", "_ego/session/resume_turn"), ("compact", "_ego/session/compact")];

/// The prompt of a request body: a string (one text block) or ACP content blocks.
pub(crate) fn prompt_blocks(prompt: Value) -> Result<Vec<ContentBlock>, AcpError> {
    match prompt {
        Value::String(text) if text.trim().is_empty() => Err(AcpError::Invalid("prompt: empty".into())),
        Value::String(text) => Ok(vec![
            serde_json::from_value(json!({"type": "text", "text": text}))
                .map_err(|e| AcpError::Invalid(format!("prompt: {e}")))?,
        ]),
        Value::Array(blocks) if blocks.is_empty() => Err(AcpError::Invalid("prompt: no content blocks".into())),
        Value::Array(blocks) => blocks
            .into_iter()
            .enumerate()
            .map(|(i, block)| {
                serde_json::from_value(block)
                    .map_err(|e| AcpError::Invalid(format!("prompt[{i}]: not an ACP content block: {e}")))
            })
            .collect(),
        _ => Err(AcpError::Invalid("prompt: expected a string or an array of ACP content blocks".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_text_or_typed_content_blocks() {
        assert_eq!(prompt_blocks(json!("hi")).unwrap().len(), 1);
        let blocks = prompt_blocks(json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])).unwrap();
        assert_eq!(blocks.len(), 2);
        let err = prompt_blocks(json!([{"type": "text"}])).unwrap_err().to_string();
        assert!(err.starts_with("prompt[0]: not an ACP content block"), "{err}");
        assert!(prompt_blocks(json!("  ")).is_err());
        assert!(prompt_blocks(json!(5)).unwrap_err().to_string().contains("expected a string"));
    }

    #[test]
    fn session_ops_need_the_capability_the_agent_advertised() {
        let none = AgentCapabilities::default();
        assert!(!SessionOp::Load.advertised(&none, &Value::Null));
        let raw = json!({"loadSession": true, "sessionCapabilities": {"resume": {}, "close": {}}});
        let caps: AgentCapabilities = serde_json::from_value(raw.clone()).unwrap();
        assert!(SessionOp::Load.advertised(&caps, &raw));
        assert!(SessionOp::Resume.advertised(&caps, &raw));
        assert!(SessionOp::Close.advertised(&caps, &raw));
        assert!(!SessionOp::Fork.advertised(&caps, &raw));
        assert!(!SessionOp::Delete.advertised(&caps, &raw));
        let raw = json!({"sessionCapabilities": {"delete": {}, "fork": {}}});
        let caps: AgentCapabilities = serde_json::from_value(raw.clone()).unwrap();
        assert!(SessionOp::Delete.advertised(&caps, &raw));
        assert!(SessionOp::Fork.advertised(&caps, &raw));
    }
}
