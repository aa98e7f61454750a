//! JSON-RPC 2.0 wire types for MCP: classifying an incoming message and building responses.
//! No IO and no knowledge of tools or HTTP.
//!
//! The hot path has no `Value` tree for the envelope: [`classify`] reads a body straight into the
//! members it decides on ([`read`]), and [`result_body`] prints a response straight into bytes
//! ([`write`]).

// Kept over serde derives: worth >=10% of MCP `session status` p50 in an A/B (benches/mcp.rs);
// see docs/dev/perf-log.md.
mod read;
mod write;

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value, json};

/// JSON-RPC error codes used by the endpoint (the MCP schema's constants).
pub(crate) mod code {
    pub(crate) const PARSE_ERROR: i64 = -32700;
    pub(crate) const INVALID_REQUEST: i64 = -32600;
    pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
    pub(crate) const INVALID_PARAMS: i64 = -32602;
    pub(crate) const INTERNAL_ERROR: i64 = -32603;
}

/// The revisions `initialize` echoes when a client asks for them: the seed's list and every
/// revision whose requests tuicd serves, since a server that supports the requested version must
/// echo it (older clients, such as Gemini CLI's bundled SDK, refuse any other answer).
pub(crate) const NEGOTIABLE_VERSIONS: [&str; 5] =
    ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The revision this endpoint implements, answered for anything else.
pub(crate) const DEFAULT_VERSION: &str = proto::PROTOCOL_VERSION;
/// Every `MCP-Protocol-Version` header value accepted on a request. Wider than
/// [`NEGOTIABLE_VERSIONS`]: a client may send any revision it legitimately negotiated elsewhere
/// (the conformance SSE scenarios send 2025-03-26 on a 2025-11-25 session).
pub(crate) const ACCEPTED_HEADER_VERSIONS: [&str; 5] =
    ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// What `initialize` answers for a requested revision.
pub(crate) fn negotiate(requested: Option<&str>) -> &'static str {
    requested.and_then(|r| NEGOTIABLE_VERSIONS.iter().find(|v| **v == r).copied()).unwrap_or(DEFAULT_VERSION)
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }

    pub(crate) fn method_not_found(method: &str) -> Self {
        Self::new(code::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }
}

/// The method whose params [`classify`] reads into typed fields.
pub(crate) const TOOLS_CALL: &str = "tools/call";

/// One classified client message. Borrows the body it was read from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Incoming<'a> {
    /// Has a method and an id: gets exactly one response.
    Request { id: Value, method: Cow<'a, str>, params: Option<Params<'a>> },
    /// Has a method and no id: gets no response (HTTP 202).
    Notification { method: Cow<'a, str> },
    /// A client's answer to a server request (HTTP 202).
    Response,
}

/// A request's params, always a JSON object on the wire.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Params<'a> {
    Object(Map<String, Value>),
    /// `tools/call` params read into the two members it uses. Only ever built for `tools/call`.
    Call(CallParams<'a>),
}

impl<'a> Params<'a> {
    /// The params as a `Value` map.
    pub(crate) fn into_object(self) -> Map<String, Value> {
        match self {
            Params::Object(map) => map,
            Params::Call(call) => {
                let mut map = Map::new();
                if let Some(name) = call.name {
                    map.insert("name".into(), name.into_value());
                }
                if let Some(arguments) = call.arguments {
                    map.insert("arguments".into(), arguments);
                }
                if let Some(task) = call.task {
                    map.insert("task".into(), task.into_value());
                }
                if let Some(meta) = call.meta {
                    map.insert("_meta".into(), meta);
                }
                map
            }
        }
    }

    /// The params as `tools/call` reads them.
    pub(crate) fn into_call(self) -> CallParams<'a> {
        match self {
            Params::Call(call) => call,
            Params::Object(mut map) => CallParams {
                name: map.remove("name").map(|name| match name {
                    Value::String(s) => Member::Str(Cow::Owned(s)),
                    _ => Member::Other,
                }),
                arguments: map.remove("arguments"),
                task: map.remove("task").and_then(TaskParam::from_value),
                meta: map.remove("_meta"),
            },
        }
    }
}

/// `tools/call` params: the tool's name and its arguments, each as the body gave them, and the
/// `task` member of a task-augmented call.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct CallParams<'a> {
    pub name: Option<Member<'a>>,
    pub arguments: Option<Value>,
    pub task: Option<TaskParam>,
    /// `_meta` as sent (its `progressToken` reaches a proxied upstream call).
    pub meta: Option<Value>,
}

/// `tools/call`'s `task` member (MCP Tasks, 2025-11-25): the client asks for the call to run as a
/// task and to be answered with a `CreateTaskResult`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TaskParam {
    /// `{"ttl": <ms>?}`: the retention the client asks for (the receiver may keep its own).
    Requested { ttl_ms: Option<u64> },
    /// Present but not of that shape; kept to be named in the error.
    Invalid(Value),
}

impl TaskParam {
    /// Reads the member; `null` is the same as absent.
    pub(crate) fn from_value(value: Value) -> Option<Self> {
        let ttl = match &value {
            Value::Null => return None,
            Value::Object(map) => map.get("ttl"),
            _ => return Some(TaskParam::Invalid(value)),
        };
        Some(match ttl {
            None | Some(Value::Null) => TaskParam::Requested { ttl_ms: None },
            Some(ttl) => match ttl.as_u64() {
                Some(ms) => TaskParam::Requested { ttl_ms: Some(ms) },
                None => TaskParam::Invalid(value),
            },
        })
    }

    fn into_value(self) -> Value {
        match self {
            TaskParam::Requested { ttl_ms: Some(ms) } => json!({ "ttl": ms }),
            TaskParam::Requested { ttl_ms: None } => json!({}),
            TaskParam::Invalid(value) => value,
        }
    }
}

/// A member that matters only when it is a string.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Member<'a> {
    Str(Cow<'a, str>),
    /// Anything else (the value itself is not kept).
    Other,
}

impl Member<'_> {
    pub(crate) fn is(&self, expected: &str) -> bool {
        matches!(self, Member::Str(s) if s == expected)
    }

    fn into_value(self) -> Value {
        match self {
            Member::Str(s) => Value::String(s.into_owned()),
            Member::Other => Value::Null,
        }
    }
}

/// Classifies a request body. `Err` carries the error to answer with `id: null`.
pub(crate) fn classify(body: &[u8]) -> Result<Incoming<'_>, RpcError> {
    let parse_error = |e: serde_json::Error| {
        RpcError::new(code::PARSE_ERROR, format!("Parse error: the body is not valid JSON: {e}"))
    };
    let fields = match read::read(body).map_err(parse_error)? {
        // Rare (a duplicate `method` member): read the body again, as a `Value`.
        read::Shape::Object(fields) if fields.call_params_misread() => match serde_json::from_slice(body) {
            Ok(Value::Object(object)) => read::from_value(object),
            _ => return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: a JSON object was expected")),
        },
        read::Shape::Object(fields) => fields,
        read::Shape::Array => {
            return Err(RpcError::new(
                code::INVALID_REQUEST,
                "Invalid Request: batches are not supported; send one message per POST",
            ));
        }
        read::Shape::Other => {
            return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: a JSON object was expected"));
        }
    };
    if fields.jsonrpc != Some(true) {
        return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\""));
    }
    let method = match fields.method {
        None => None,
        Some(Member::Str(m)) => Some(m),
        Some(Member::Other) => {
            return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"method\" must be a string"));
        }
    };
    match (method, fields.id) {
        (Some(method), None) => Ok(Incoming::Notification { method }),
        (Some(method), Some(id @ (Value::String(_) | Value::Number(_)))) => match fields.params {
            Some(Err(())) => Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"params\" must be an object")),
            Some(Ok(params)) => Ok(Incoming::Request { id, method, params: Some(params) }),
            None => Ok(Incoming::Request { id, method, params: None }),
        },
        (Some(_), Some(_)) => {
            Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"id\" must be a string or an integer"))
        }
        (None, _) if fields.result_or_error => Ok(Incoming::Response),
        (None, _) => {
            Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: no \"method\", \"result\" or \"error\""))
        }
    }
}

/// What a method answered: a result `Value`, or a tool's text result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    Value(Value),
    Tool(ToolText),
}

/// A tool call's result: one text block (compact JSON) and whether it reports a failure.
///
/// The text is kept escaped as the inside of a JSON string, which is how the response carries
/// it: tools print their answer straight into that form ([`escaped_json`]), so the text is never
/// escaped in a pass of its own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolText {
    escaped: String,
    pub is_error: bool,
}

impl ToolText {
    /// `value` printed as compact JSON.
    pub(crate) fn json<T: Serialize + ?Sized>(value: &T, is_error: bool) -> Self {
        Self::escaped(escaped_json(value).unwrap_or_else(|_| "{}".into()), is_error)
    }

    /// A text already escaped as the inside of a JSON string (what [`escaped_json`] prints).
    pub(crate) fn escaped(escaped: String, is_error: bool) -> Self {
        Self { escaped, is_error }
    }

    /// Any text, escaped here.
    #[cfg(test)]
    pub(crate) fn plain(text: &str, is_error: bool) -> Self {
        Self::escaped(write::escape(text), is_error)
    }

    /// The text, as the inside of a JSON string.
    pub(crate) fn as_escaped(&self) -> &str {
        &self.escaped
    }

    /// The text itself.
    pub(crate) fn text(&self) -> String {
        write::unescape(&self.escaped)
    }

    /// The MCP content envelope as a `Value`: `{"content": [{"type": "text", "text": ...}], "isError": ...}`,
    /// with `structuredContent` for an array (see [`Self::array`]).
    pub(crate) fn into_value(self) -> Value {
        let mut value = json!({"content": [{"type": "text", "text": self.text()}], "isError": self.is_error});
        if let Some(array) = self.array() {
            value["structuredContent"] = json!({"result": array});
        }
        value
    }

    /// The text, when it is a JSON array. Such a result also carries `structuredContent:
    /// {"result": [...]}`: Gemini CLI puts the JSON of a result's first text block into
    /// `structuredContent` when a result has none, and its SDK then refuses the array (the field
    /// must be an object), so without it every list answer failed there.
    pub(crate) fn array(&self) -> Option<Value> {
        if !self.escaped.trim_start().starts_with('[') {
            return None;
        }
        serde_json::from_str::<Value>(&self.text()).ok().filter(Value::is_array)
    }
}

pub(crate) use write::{escaped_json, result_body};

/// The JSON-RPC error response, printed.
pub(crate) fn error_body(id: Option<&Value>, error: &RpcError) -> Vec<u8> {
    serde_json::to_vec(&error_message(id, error)).unwrap_or_else(|_| b"{}".to_vec())
}

pub(crate) fn error_message(id: Option<&Value>, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": error})
}

pub(crate) fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

/// A tool call's result in the MCP content envelope: one text block of compact JSON.
pub(crate) fn tool_result(value: &Value, is_error: bool) -> Value {
    ToolText::json(value, is_error).into_value()
}

/// Reads `params` as an object (absent params are an empty object).
pub(crate) fn params_object(params: Option<Params<'_>>) -> Map<String, Value> {
    params.map(Params::into_object).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_echoes_only_the_seed_revisions() {
        assert_eq!(negotiate(Some("2026-07-28")), "2026-07-28");
        assert_eq!(negotiate(Some("2025-03-26")), "2025-03-26");
        assert_eq!(negotiate(Some("2025-06-18")), "2025-06-18", "a supported version is echoed");
        assert_eq!(negotiate(Some("2024-11-05")), "2024-11-05");
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

#[cfg(test)]
mod classify_tests;
