//! JSON-RPC 2.0 wire types for MCP: classifying an incoming message and building responses.
//! No IO and no knowledge of tools or HTTP.

use serde::Serialize;
use serde_json::{Map, Value, json};

/// JSON-RPC error codes used by the endpoint (the MCP schema's constants).
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// The revisions `initialize` echoes when a client asks for them (the seed's list).
pub const NEGOTIABLE_VERSIONS: [&str; 3] = ["2026-07-28", "2025-11-25", "2025-03-26"];
/// The revision this endpoint implements, answered for anything else.
pub const DEFAULT_VERSION: &str = proto::PROTOCOL_VERSION;
/// Every `MCP-Protocol-Version` header value accepted on a request. Wider than
/// [`NEGOTIABLE_VERSIONS`]: a client may send any revision it legitimately negotiated elsewhere
/// (the conformance SSE scenarios send 2025-03-26 on a 2025-11-25 session).
pub const ACCEPTED_HEADER_VERSIONS: [&str; 5] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// What `initialize` answers for a requested revision.
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested.and_then(|r| NEGOTIABLE_VERSIONS.iter().find(|v| **v == r).copied()).unwrap_or(DEFAULT_VERSION)
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(code::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }
}

/// One classified client message.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// Has a method and an id: gets exactly one response.
    Request { id: Value, method: String, params: Option<Value> },
    /// Has a method and no id: gets no response (HTTP 202).
    Notification { method: String },
    /// A client's answer to a server request (HTTP 202).
    Response,
}

/// Classifies a request body. `Err` carries the error to answer with `id: null`.
pub fn classify(body: &[u8]) -> Result<Incoming, RpcError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| RpcError::new(code::PARSE_ERROR, format!("Parse error: the body is not valid JSON: {e}")))?;
    let Value::Object(mut object) = value else {
        let what = if value.is_array() {
            "batches are not supported; send one message per POST"
        } else {
            "a JSON object was expected"
        };
        return Err(RpcError::new(code::INVALID_REQUEST, format!("Invalid Request: {what}")));
    };
    match object.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"")),
    }
    let method = match object.remove("method") {
        None => None,
        Some(Value::String(m)) => Some(m),
        Some(_) => return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"method\" must be a string")),
    };
    match (method, object.remove("id")) {
        (Some(method), None) => Ok(Incoming::Notification { method }),
        (Some(method), Some(id @ (Value::String(_) | Value::Number(_)))) => {
            let params = object.remove("params");
            if params.as_ref().is_some_and(|p| !p.is_object()) {
                return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"params\" must be an object"));
            }
            Ok(Incoming::Request { id, method, params })
        }
        (Some(_), Some(_)) => {
            Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"id\" must be a string or an integer"))
        }
        (None, _) if object.contains_key("result") || object.contains_key("error") => Ok(Incoming::Response),
        (None, _) => {
            Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: no \"method\", \"result\" or \"error\""))
        }
    }
}

pub fn result_message(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error_message(id: Option<&Value>, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": error})
}

pub fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

/// A tool call's result in the MCP content envelope: one text block of compact JSON.
pub fn tool_result(value: &Value, is_error: bool) -> Value {
    tool_text_result(serde_json::to_string(value).unwrap_or_else(|_| "{}".into()), is_error)
}

/// [`tool_result`] for a result already printed as compact JSON.
pub fn tool_text_result(text: String, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
}

/// Reads `params` as an object (absent params are an empty object).
pub fn params_object(params: Option<Value>) -> Map<String, Value> {
    match params {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_echoes_only_the_seed_revisions() {
        assert_eq!(negotiate(Some("2026-07-28")), "2026-07-28");
        assert_eq!(negotiate(Some("2025-03-26")), "2025-03-26");
        assert_eq!(negotiate(Some("2025-06-18")), "2025-11-25");
        assert_eq!(negotiate(Some("1999-01-01")), "2025-11-25");
        assert_eq!(negotiate(None), "2025-11-25");
    }

    #[test]
    fn messages_are_classified_with_the_right_error_codes() {
        assert_eq!(classify(b"{nope").unwrap_err().code, code::PARSE_ERROR);
        assert_eq!(classify(b"[1]").unwrap_err().code, code::INVALID_REQUEST);
        assert_eq!(classify(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).unwrap_err().code, code::INVALID_REQUEST);
        assert_eq!(classify(br#"{"id":1,"method":"x"}"#).unwrap_err().code, code::INVALID_REQUEST);
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap(),
            Incoming::Notification { method: "notifications/initialized".into() }
        );
        assert_eq!(classify(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#).unwrap(), Incoming::Response);
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#).unwrap(),
            Incoming::Request { method, .. } if method == "ping"
        ));
    }
}
