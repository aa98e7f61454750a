//! The questions an ACP agent puts to a person (permission requests and elicitations): what a
//! connection holds of them, how they are listed, and how a person's answer goes back.

use serde_json::{Value, json};

use super::{Connection, key_of};
use crate::acp::AcpError;
use crate::acp::requests::PermissionAnswer;
use crate::lock::Recover;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InteractionKind {
    Permission,
    Elicitation,
}

impl InteractionKind {
    pub(super) fn name(self) -> &'static str {
        match self {
            InteractionKind::Permission => "permission",
            InteractionKind::Elicitation => "elicitation",
        }
    }
}

/// A question of the agent's waiting on a person.
#[derive(Debug)]
pub(super) struct Interaction {
    /// The agent's JSON-RPC id, as it sent it (echoed in the answer).
    pub(super) id: Value,
    pub(super) kind: InteractionKind,
    pub(super) generation: u64,
    pub(super) session_id: Option<String>,
    pub(super) sequence: u64,
    pub(super) params: Value,
    /// The permission request's option ids (empty for an elicitation).
    pub(super) options: Vec<String>,
}

impl Connection {
    /// The questions waiting on a person, oldest first.
    pub(crate) fn interactions(&self) -> Vec<Value> {
        let state = self.state.locked();
        let mut items: Vec<&Interaction> = state.interactions.values().collect();
        items.sort_by_key(|i| i.sequence);
        items
            .into_iter()
            .map(|i| {
                let mut item = json!({
                    "request_id": key_of(&i.id),
                    "kind": i.kind.name(),
                    "generation": i.generation,
                    "session_id": i.session_id,
                    "sequence": i.sequence,
                });
                match i.kind {
                    InteractionKind::Permission => {
                        item["tool_call"] = i.params["toolCall"].clone();
                        item["options"] = i.params["options"].clone();
                    }
                    InteractionKind::Elicitation => {
                        item["message"] = i.params["message"].clone();
                        item["mode"] = i.params["mode"].clone();
                        item["requested_schema"] = i.params["requestedSchema"].clone();
                        item["url"] = i.params["url"].clone();
                    }
                }
                item
            })
            .collect()
    }

    /// Answers a permission request.
    pub(crate) fn answer_permission(&self, request_id: &str, answer: PermissionAnswer) -> Result<Value, AcpError> {
        let outcome = match &answer {
            PermissionAnswer::Selected(option) => json!({"outcome": "selected", "optionId": option}),
            PermissionAnswer::Cancelled => json!({"outcome": "cancelled"}),
        };
        self.answer(request_id, InteractionKind::Permission, |interaction| {
            if let PermissionAnswer::Selected(option) = &answer
                && !interaction.options.contains(option)
            {
                return Err(AcpError::Invalid(format!(
                    "option_id: {option:?} is not one of this request's options: {}",
                    interaction.options.join(", ")
                )));
            }
            Ok(json!({"outcome": outcome}))
        })
    }

    /// Answers an elicitation: `action` accept (with `content`), decline or cancel.
    pub(crate) fn answer_elicitation(
        &self,
        request_id: &str,
        action: &str,
        content: Option<Value>,
    ) -> Result<Value, AcpError> {
        let result = match (action, content) {
            ("accept", Some(content @ Value::Object(_))) => json!({"action": "accept", "content": content}),
            ("accept", None) => json!({"action": "accept"}),
            ("accept", Some(_)) => return Err(AcpError::Invalid("content: expected an object".into())),
            ("decline" | "cancel", None) => json!({"action": action}),
            ("decline" | "cancel", Some(_)) => {
                return Err(AcpError::Invalid(format!("content: only an accept carries content, not a {action}")));
            }
            (other, _) => {
                return Err(AcpError::Invalid(format!("action: {other:?} is not accept, decline or cancel")));
            }
        };
        self.answer(request_id, InteractionKind::Elicitation, |_| Ok(result))
    }

    fn answer(
        &self,
        request_id: &str,
        kind: InteractionKind,
        result_for: impl FnOnce(&Interaction) -> Result<Value, AcpError>,
    ) -> Result<Value, AcpError> {
        let (interaction, result) = {
            let mut state = self.state.locked();
            let Some(interaction) = state.interactions.get(request_id) else {
                return Err(AcpError::NotFound(format!(
                    "no {} request {request_id:?} is waiting on ACP connection {} (answered already, cancelled, or never asked)",
                    kind.name(),
                    self.id
                )));
            };
            if interaction.kind != kind {
                return Err(AcpError::NotFound(format!(
                    "request {request_id} on ACP connection {} is a {}, not a {}",
                    self.id,
                    interaction.kind.name(),
                    kind.name()
                )));
            }
            let result = result_for(interaction)?;
            let Some(interaction) = state.interactions.remove(request_id) else {
                return Err(AcpError::NotFound(format!("request {request_id} was answered meanwhile")));
            };
            (interaction, result)
        };
        let response = json!({"jsonrpc": "2.0", "id": interaction.id, "result": result});
        let sequence = self.write(interaction.generation, &response)?;
        self.notice(
            interaction.generation,
            sequence,
            "interaction_settled",
            interaction.session_id.clone(),
            Some(request_id.to_owned()),
        );
        Ok(json!({"request_id": request_id, "answered": true, "sequence": sequence, "result": result}))
    }
}
