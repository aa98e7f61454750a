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

/// MCP: how long a protocol session may sit unused before the reaper forgets it. Clients such as
/// the conformance suite never DELETE, so without expiry sessions would pile up forever.
pub const MCP_SESSION_IDLE_TTL: Duration = Duration::from_secs(60 * 60);
/// MCP: how often the reaper looks for idle sessions. Expiry is therefore late by at most this.
pub const MCP_REAPER_INTERVAL: Duration = Duration::from_secs(60);
/// MCP: most protocol sessions held at once. At the cap, minting one more evicts the least
/// recently used session that has no live GET stream (or refuses with 503 when all have one).
pub const MCP_MAX_SESSIONS: usize = 4096;
/// MCP: longest `mcp-session-id` accepted from a client (ours are 36-character UUIDs); longer or
/// non-visible-ASCII ids are refused with 400 instead of being stored.
pub const MCP_SESSION_ID_MAX_LEN: usize = 128;
/// MCP: notifications queued for one GET stream. A client this far behind is not reading; newer
/// notifications for it are dropped (list_changed is idempotent: the next one says the same).
pub const MCP_STREAM_QUEUE: usize = 64;
/// `session action=wait`: the default wait when `timeout_ms` is absent.
pub const SESSION_WAIT_DEFAULT: Duration = Duration::from_secs(60);
/// `session action=wait`: the advertised cap on `timeout_ms` ...
pub const SESSION_WAIT_CAP_MS: u64 = 300_000;
/// ... and what a request at or above the cap actually runs: 5 s under it, because clients (Codex)
/// abort their own tools/call at exactly 300 s; a wait running the full cap would answer on that
/// deadline and turn `{timed_out:true}` into a client-side error.
pub const SESSION_WAIT_RUN_MAX_MS: u64 = 295_000;
