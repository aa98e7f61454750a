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
    /// A browser rule refused the request: a foreign `Origin` or `Host`, or a form-like request.
    Forbidden,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: String,
    pub code: ErrorCode,
}
