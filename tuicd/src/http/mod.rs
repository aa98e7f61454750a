//! The HTTP types: request and response types, the error type, body helpers and the SSE
//! encoder. Names no route and no transport: the router (`server/router.rs`) sits above them.

pub mod body;
pub mod error;
pub mod sse;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;

pub use error::ApiError;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// Every response body: buffered JSON, an SSE stream, or empty.
pub type Body = UnsyncBoxBody<Bytes, BoxError>;
/// Every request body is capped at [`crate::limits::MAX_BODY_BYTES`] (see `server/service.rs`).
pub type Request = http::Request<http_body_util::Limited<hyper::body::Incoming>>;
pub type Response = http::Response<Body>;
pub type ApiResult = Result<Response, ApiError>;

/// Who is calling: which listener the request came through and from where. Inserted into each
/// request's extensions by the listener; loopback-only actions check it.
#[derive(Debug, Clone)]
pub struct Caller {
    pub transport: Transport,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The Unix socket / named pipe: file permissions are the boundary.
    Ipc,
    /// The opt-in TCP listener, after Basic Auth.
    Tcp { peer: std::net::SocketAddr, tls: bool },
}

impl Caller {
    pub fn ipc() -> Self {
        Self { transport: Transport::Ipc }
    }

    /// A remote caller on the TCP listener.
    pub fn tcp(peer: std::net::SocketAddr, tls: bool) -> Self {
        Self { transport: Transport::Tcp { peer, tls } }
    }

    /// True for the IPC socket and for TCP peers on a loopback address.
    pub fn is_loopback(&self) -> bool {
        match self.transport {
            Transport::Ipc => true,
            Transport::Tcp { peer, .. } => peer.ip().is_loopback(),
        }
    }

    /// Refuses `action` to remote callers with a clear error.
    pub fn require_loopback(&self, action: &str) -> Result<(), ApiError> {
        if self.is_loopback() { Ok(()) } else { Err(ApiError::LoopbackOnly(action.to_owned())) }
    }
}
