//! JSON-RPC 2.0 wire types for MCP: classifying an incoming message and building responses.
//! No IO and no knowledge of tools or HTTP.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
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

/// The method whose params are read into [`CallParams`].
pub const TOOLS_CALL: &str = "tools/call";

/// The members of a message that decide what it is. `id` and `params` stay raw JSON: the id is
/// echoed back as the client wrote it, and params are read by the method that takes them. Members
/// not named here are skipped (checked for syntax only).
#[derive(Debug, Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A member that is present, `null` included (a plain `Option` reads `null` as absent).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// One classified client message. Borrows the body it was read from.
#[derive(Debug, Clone)]
pub enum Incoming<'a> {
    /// Has a method and an id: gets exactly one response.
    Request { id: &'a RawValue, method: String, params: Option<Params<'a>> },
    /// Has a method and no id: gets no response (HTTP 202).
    Notification { method: String },
    /// A client's answer to a server request (HTTP 202).
    Response,
}

/// A request's params: a JSON object, still raw.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a>(&'a RawValue);

impl<'a> Params<'a> {
    /// The params as a `Value` map.
    pub fn into_object(self) -> Result<Map<String, Value>, RpcError> {
        serde_json::from_str(self.0.get()).map_err(|e| RpcError::invalid_params(format!("params: {e}")))
    }

    /// The params as `tools/call` reads them.
    pub fn into_call(self) -> Result<CallParams, RpcError> {
        serde_json::from_str(self.0.get()).map_err(|e| RpcError::invalid_params(format!("tools/call: {e}")))
    }
}

/// `tools/call` params: the tool's name and its arguments, each as the body gave them (their types
/// are checked by the caller, which names what was wrong).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct CallParams {
    #[serde(default, deserialize_with = "present")]
    pub name: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub arguments: Option<Value>,
}

/// Classifies a request body. `Err` carries the error to answer with `id: null`.
pub fn classify(body: &[u8]) -> Result<Incoming<'_>, RpcError> {
    let invalid = |what: &str| RpcError::new(code::INVALID_REQUEST, format!("Invalid Request: {what}"));
    let parse_error = |e: serde_json::Error| {
        RpcError::new(code::PARSE_ERROR, format!("Parse error: the body is not valid JSON: {e}"))
    };
    let lead = body.iter().find(|b| !b.is_ascii_whitespace());
    if lead != Some(&b'{') {
        // Not a message: parsed whole only to tell a syntax error from a wrong shape.
        serde_json::from_slice::<Value>(body).map_err(parse_error)?;
        return Err(match lead {
            Some(b'[') => invalid("batches are not supported; send one message per POST"),
            _ => invalid("a JSON object was expected"),
        });
    }
    // JSON text is UTF-8 (RFC 8259): checked once here, as the parser skips members it does not read.
    let text = std::str::from_utf8(body).map_err(|e| {
        RpcError::new(code::PARSE_ERROR, format!("Parse error: the body is not valid JSON: it is not UTF-8 ({e})"))
    })?;
    let envelope: Envelope<'_> = match serde_json::from_str(text) {
        Ok(envelope) => envelope,
        // Well-formed, but a member is given twice.
        Err(e) if e.is_data() => return Err(invalid(&e.to_string())),
        Err(e) => return Err(parse_error(e)),
    };
    if envelope.jsonrpc.and_then(string).as_deref() != Some("2.0") {
        return Err(invalid("\"jsonrpc\" must be \"2.0\""));
    }
    let method = match envelope.method {
        None => None,
        Some(raw) => Some(string(raw).ok_or_else(|| invalid("\"method\" must be a string"))?),
    };
    match (method, envelope.id) {
        (Some(method), None) => Ok(Incoming::Notification { method }),
        (Some(method), Some(id))
            if id.get().starts_with(['"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']) =>
        {
            match envelope.params {
                Some(params) if !params.get().starts_with('{') => Err(invalid("\"params\" must be an object")),
                params => Ok(Incoming::Request { id, method, params: params.map(Params) }),
            }
        }
        (Some(_), Some(_)) => Err(invalid("\"id\" must be a string or an integer")),
        (None, _) if envelope.result.is_some() || envelope.error.is_some() => Ok(Incoming::Response),
        (None, _) => Err(invalid("no \"method\", \"result\" or \"error\"")),
    }
}

/// A raw member's string value; `None` when it is not a string.
fn string(raw: &RawValue) -> Option<String> {
    serde_json::from_str(raw.get()).ok()
}

/// What a method answered: a result `Value`, or a tool's text result.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Value(Value),
    Tool(ToolText),
}

/// A tool call's result: one text block (compact JSON) and whether it reports a failure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolText {
    content: [TextContent; 1],
    #[serde(rename = "isError")]
    pub is_error: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct TextContent {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
}

impl ToolText {
    /// `value` printed as compact JSON.
    pub fn json<T: Serialize + ?Sized>(value: &T, is_error: bool) -> Self {
        Self::plain(serde_json::to_string(value).unwrap_or_else(|_| "{}".into()), is_error)
    }

    /// Any text.
    pub fn plain(text: impl Into<String>, is_error: bool) -> Self {
        Self { content: [TextContent { kind: "text", text: text.into() }], is_error }
    }

    /// The text itself.
    pub fn text(&self) -> &str {
        &self.content[0].text
    }

    /// The MCP content envelope as a `Value`: `{"content": [{"type": "text", "text": ...}], "isError": ...}`.
    pub fn into_value(self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A JSON-RPC response, result or error.
#[derive(Serialize)]
struct Response<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RpcError>,
}

/// The JSON-RPC result response, printed.
pub fn result_body(id: &RawValue, result: &Reply) -> Vec<u8> {
    let printed = match result {
        Reply::Value(value) => {
            serde_json::to_vec(&Response { jsonrpc: "2.0", id: Some(id), result: Some(value), error: None })
        }
        Reply::Tool(tool) => {
            serde_json::to_vec(&Response { jsonrpc: "2.0", id: Some(id), result: Some(tool), error: None })
        }
    };
    printed.unwrap_or_else(|_| b"{}".to_vec())
}

/// The JSON-RPC error response, printed (`id: null` when the request's id is unknown).
pub fn error_body(id: Option<&RawValue>, error: &RpcError) -> Vec<u8> {
    let response = Response::<()> { jsonrpc: "2.0", id, result: None, error: Some(error) };
    serde_json::to_vec(&response).unwrap_or_else(|_| b"{}".to_vec())
}

pub fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

/// A tool call's result in the MCP content envelope: one text block of compact JSON.
pub fn tool_result(value: &Value, is_error: bool) -> Value {
    ToolText::json(value, is_error).into_value()
}

/// Reads `params` as an object (absent params are an empty object).
pub fn params_object(params: Option<Params<'_>>) -> Result<Map<String, Value>, RpcError> {
    params.map(Params::into_object).transpose().map(Option::unwrap_or_default)
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
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap(),
            Incoming::Notification { method } if method == "notifications/initialized"
        ));
        assert!(matches!(classify(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#).unwrap(), Incoming::Response));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#).unwrap(),
            Incoming::Request { method, .. } if method == "ping"
        ));
    }
}

#[cfg(test)]
mod classify_tests;
