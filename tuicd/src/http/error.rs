//! One closed error enum and the one place that turns it into a response. Internal details are
//! logged, not sent.

use http::{HeaderValue, Method, StatusCode, header};
use proto::{ErrorBody, ErrorCode};

use super::Response;
use super::body::json_response;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    InvalidJson(String),
    #[error("{0}")]
    InvalidField(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{method} is not allowed here; allowed: {allowed}")]
    MethodNotAllowed { method: Method, allowed: String },
    #[error("request body is larger than the {limit} byte limit")]
    PayloadTooLarge { limit: usize },
    #[error("{0}")]
    Unauthorized(String),
    #[error("too many failed logins from this address; retry in {retry_after_secs} s")]
    TooManyRequests { retry_after_secs: u64 },
    #[error("{0} is only allowed from this machine (loopback), not over remote access")]
    LoopbackOnly(String),
    #[error("{0}")]
    Gone(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    SessionLimit(String),
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    DependencyMissing(String),
    #[error("{0}")]
    UpstreamFailed(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Timeout(String),
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    pub(crate) fn method_not_allowed(method: &Method, allowed: &[Method]) -> Self {
        let allowed = allowed.iter().map(Method::as_str).collect::<Vec<_>>().join(", ");
        Self::MethodNotAllowed { method: method.clone(), allowed }
    }

    pub(crate) fn status_and_code(&self) -> (StatusCode, ErrorCode) {
        use ApiError::*;
        match self {
            BadRequest(_) => (StatusCode::BAD_REQUEST, ErrorCode::BadRequest),
            InvalidJson(_) => (StatusCode::BAD_REQUEST, ErrorCode::InvalidJson),
            InvalidField(_) => (StatusCode::BAD_REQUEST, ErrorCode::InvalidField),
            NotFound(_) => (StatusCode::NOT_FOUND, ErrorCode::NotFound),
            MethodNotAllowed { .. } => (StatusCode::METHOD_NOT_ALLOWED, ErrorCode::MethodNotAllowed),
            PayloadTooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::PayloadTooLarge),
            Unauthorized(_) => (StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized),
            TooManyRequests { .. } => (StatusCode::TOO_MANY_REQUESTS, ErrorCode::TooManyRequests),
            LoopbackOnly(_) => (StatusCode::FORBIDDEN, ErrorCode::LoopbackOnly),
            Gone(_) => (StatusCode::GONE, ErrorCode::Gone),
            Conflict(_) => (StatusCode::CONFLICT, ErrorCode::Conflict),
            SessionLimit(_) => (StatusCode::TOO_MANY_REQUESTS, ErrorCode::SessionLimit),
            Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, ErrorCode::Unavailable),
            Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::Internal),
            Forbidden(_) => (StatusCode::FORBIDDEN, ErrorCode::Forbidden),
            TooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::PayloadTooLarge),
            DependencyMissing(_) => (StatusCode::FAILED_DEPENDENCY, ErrorCode::DependencyMissing),
            UpstreamFailed(_) => (StatusCode::BAD_GATEWAY, ErrorCode::UpstreamFailed),
            Unsupported(_) => (StatusCode::NOT_IMPLEMENTED, ErrorCode::Unsupported),
            Timeout(_) => (StatusCode::GATEWAY_TIMEOUT, ErrorCode::Timeout),
        }
    }

    pub(crate) fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        if let ApiError::Internal(e) = &self {
            tracing::error!(error = %format!("{e:#}"), "request failed");
        }
        let body = ErrorBody { error: self.to_string(), code };
        let mut response = json_response(status, &body);
        let headers = response.headers_mut();
        match &self {
            ApiError::MethodNotAllowed { allowed, .. } => {
                if let Ok(v) = HeaderValue::from_str(allowed) {
                    headers.insert(header::ALLOW, v);
                }
            }
            ApiError::Unauthorized(_) => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"tuic\", charset=\"UTF-8\""),
                );
            }
            ApiError::TooManyRequests { retry_after_secs } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            }
            _ => {}
        }
        response
    }
}

impl From<crate::session::SessionError> for ApiError {
    fn from(e: crate::session::SessionError) -> Self {
        use crate::session::SessionError::*;
        match e {
            NotFound(_) => ApiError::NotFound(e.to_string()),
            InvalidField(msg) => ApiError::InvalidField(msg),
            Limit { .. } => ApiError::SessionLimit(e.to_string()),
            IdentityInUse(..) => ApiError::Conflict(e.to_string()),
            Exited { .. } => ApiError::Gone(e.to_string()),
            HandingOver => ApiError::Unavailable(e.to_string()),
            // The program could not be executed or the PTY not opened: say which, to the caller.
            Spawn(_) => ApiError::BadRequest(e.to_string()),
        }
    }
}

impl From<crate::fsgate::GateError> for ApiError {
    fn from(e: crate::fsgate::GateError) -> Self {
        use crate::fsgate::GateError::*;
        match e {
            Invalid { .. } => ApiError::InvalidField(e.to_string()),
            Outside { .. } => ApiError::Forbidden(e.to_string()),
            Missing { .. } => ApiError::NotFound(e.to_string()),
            Io { .. } => ApiError::BadRequest(e.to_string()),
        }
    }
}

impl From<crate::fsgate::FileError> for ApiError {
    fn from(e: crate::fsgate::FileError) -> Self {
        match e {
            crate::fsgate::FileError::TooLarge { .. } => ApiError::TooLarge(e.to_string()),
            _ => ApiError::BadRequest(e.to_string()),
        }
    }
}

impl From<crate::github::GhError> for ApiError {
    fn from(e: crate::github::GhError) -> Self {
        use crate::github::GhError::*;
        match e {
            Missing | NotLoggedIn(_) => ApiError::DependencyMissing(e.to_string()),
            Invalid(m) => ApiError::InvalidField(m),
            NotConfirmed(m) => ApiError::Forbidden(m),
            Failed { .. } => ApiError::UpstreamFailed(e.to_string()),
        }
    }
}
