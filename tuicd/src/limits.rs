//! Every limit the daemon enforces, in one place. Each constant says why it has its value.

use std::time::Duration;

/// Outer request deadline (408). One second above the longest in-handler deadline
/// ([`UI_CONFIRM_TIMEOUT`]), so a handler always answers with its own body first.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(301);
/// The `ui action=confirm` answer window; the bridge waits 305 s for it.
pub const UI_CONFIRM_TIMEOUT: Duration = Duration::from_secs(300);
/// Largest request body any route buffers (413 above it).
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
/// Responses above this size are compressed (gzip or brotli, as the client accepts).
pub const COMPRESSION_MIN_BYTES: u64 = 860;
/// Concurrent connections per listener; further accepts wait for a slot.
pub const MAX_CONNECTIONS: usize = 1024;
/// How long shutdown waits for in-flight requests before it gives up on them.
pub const SHUTDOWN_DRAIN: Duration = Duration::from_secs(10);

/// Unix socket bind: attempts, and the pause between them. Each attempt removes a stale file.
pub const SOCKET_BIND_ATTEMPTS: u32 = 3;
pub const SOCKET_BIND_RETRY: Duration = Duration::from_millis(100);
/// `sun_path` is 104 bytes on macOS and 108 on Linux; paths are kept under the smaller.
pub const SOCKET_PATH_MAX: usize = 104;
/// How long `tuicd status` and the liveness probe wait for a daemon to answer.
pub const SOCKET_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The configured TCP port and this many following ones are tried when it is taken.
pub const TCP_PORT_ATTEMPTS: u16 = 3;

/// bcrypt cost for new password hashes (about 300 ms per verify in release).
pub const BCRYPT_COST: u32 = 12;
/// Successful Basic credentials remembered so that bcrypt runs once per credential, not per request.
pub const AUTH_CACHE_CAPACITY: usize = 64;
/// Client addresses tracked by the failed-login limiter; the oldest is dropped beyond it.
pub const AUTH_LIMITER_CAPACITY: usize = 4096;

/// `/events`: events retained for `Last-Event-ID` replay, and the live channel's depth.
pub const EVENT_HISTORY: usize = 1024;
pub const EVENT_CHANNEL_CAPACITY: usize = 256;
/// SSE keep-alive comment interval, and the reconnect delay advertised to clients.
pub const SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);
pub const SSE_RETRY_MS: u64 = 5000;
