//! The one REST error shape: `{"error": "<one sentence>", "code": "<snake_case>"}`.

use serde::{Deserialize, Serialize};

/// Machine-readable error codes. The HTTP status travels beside them; the code says which rule
/// the request broke so that a client can react without parsing the sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    BadRequest,
    InvalidJson,
    InvalidField,
    Unauthorized,
    LoopbackOnly,
    NotFound,
    MethodNotAllowed,
    Gone,
    /// The request names something another live resource already holds (409).
    Conflict,
    PayloadTooLarge,
    TooManyRequests,
    SessionLimit,
    Internal,
    Unavailable,
    /// The request names something outside what the caller may reach (403).
    Forbidden,
    /// A tool the route runs on is missing or not logged in (424); the message names the fix.
    DependencyMissing,
    /// A tool the route ran (`gh`) failed or timed out (502); the message carries its words.
    UpstreamFailed,
    /// The peer the route speaks to (an ACP agent) does not offer what was asked (501).
    Unsupported,
    /// The peer the route speaks to did not answer in time (504).
    Timeout,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: String,
    pub code: ErrorCode,
}
