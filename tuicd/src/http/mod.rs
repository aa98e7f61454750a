//! The HTTP types: request and response types, the error type, body helpers and the SSE
//! encoder. Names no route and no transport: the router (`server/router.rs`) sits above them.

pub(crate) mod body;
pub(crate) mod error;
pub(crate) mod sse;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;

pub(crate) use error::ApiError;

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// Every response body: buffered JSON, an SSE stream, or empty.
pub(crate) type Body = UnsyncBoxBody<Bytes, BoxError>;
/// Every request body is capped at [`crate::limits::MAX_BODY_BYTES`] (see `server/service.rs`).
pub(crate) type Request = http::Request<http_body_util::Limited<hyper::body::Incoming>>;
pub(crate) type Response = http::Response<Body>;
pub(crate) type ApiResult = Result<Response, ApiError>;

/// Who is calling: which listener the request came through and from where. Inserted into each
/// request's extensions by the listener; loopback-only actions check it.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub transport: Transport,
    /// The connection's socket when it is plain (IPC or TCP without TLS), so the WebSocket stream
    /// can let the session's reader thread write output frames to it (`routes/stream_direct.rs`).
    /// Valid while the request is being served: the connection owns it.
    pub socket: Option<std::os::fd::RawFd>,
    /// The process on the other end of the Unix socket (`SO_PEERCRED`, taken at accept): who
    /// may answer a person's confirmation is decided by its ancestry.
    pub peer_pid: Option<u32>,
    /// What the caller may do: the owner's everything, or what its token grants. Set by the
    /// transport once the request's credentials are checked; the router's table reads it.
    pub grant: crate::principals::Grant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// The Unix socket: file permissions are the boundary.
    Ipc,
    /// The opt-in TCP listener, after Basic Auth.
    Tcp { peer: std::net::SocketAddr, tls: bool },
}

impl Caller {
    pub(crate) fn ipc() -> Self {
        Self { transport: Transport::Ipc, socket: None, peer_pid: None, grant: crate::principals::Grant::Owner }
    }

    /// A remote caller on the TCP listener.
    pub(crate) fn tcp(peer: std::net::SocketAddr, tls: bool) -> Self {
        Self {
            transport: Transport::Tcp { peer, tls },
            socket: None,
            peer_pid: None,
            grant: crate::principals::Grant::Owner,
        }
    }

    /// The same caller, on the plain socket `fd`.
    pub(crate) fn on_socket(self, fd: std::os::fd::RawFd) -> Self {
        Self { socket: Some(fd), ..self }
    }

    /// True for the IPC socket and for TCP peers on a loopback address.
    pub(crate) fn is_loopback(&self) -> bool {
        match self.transport {
            Transport::Ipc => true,
            Transport::Tcp { peer, .. } => peer.ip().is_loopback(),
        }
    }

    /// Refuses `action` to remote callers with a clear error.
    pub(crate) fn require_loopback(&self, action: &str) -> Result<(), ApiError> {
        if self.is_loopback() { Ok(()) } else { Err(ApiError::LoopbackOnly(action.to_owned())) }
    }
}
