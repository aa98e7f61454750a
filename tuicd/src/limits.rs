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

// Inter-agent messaging (`messaging`). Values are the seed's; each says why.

/// Messages one agent's inbox retains. Beyond it the oldest peer message is evicted (FIFO) and
/// counted in `missed_count`; server-authored lifecycle mail is evicted only when nothing else is left,
/// because a parent that loses "child exited" can wait forever.
pub const INBOX_CAPACITY: usize = 100;
/// Largest message body `agent action=send` accepts. Large enough for a report, small enough that
/// 100 of them per inbox stay bounded (6.4 MB worst case per agent).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Bodies above this are not typed into a terminal; a pointer to `agent action=inbox` is typed
/// instead, because a long single line overruns agent composers and scrollback.
pub const INJECT_INLINE_MAX_BYTES: usize = 2 * 1024;
/// `agent action=inbox` page size when the caller gives no `limit`.
pub const INBOX_DEFAULT_LIMIT: usize = 50;
/// `agent action=wait` without `timeout_ms`.
pub const WAIT_DEFAULT: Duration = Duration::from_secs(60);
/// The advertised `timeout_ms` maximum. A request at or above it runs as [`WAIT_EFFECTIVE_MAX`].
pub const WAIT_ADVERTISED_MAX_MS: u64 = 300_000;
/// What a maximal wait really runs: 5 s under the cap, because a client (Codex) aborts its own
/// tools/call at exactly 300 s and would see a client error instead of `{timed_out:true}`.
pub const WAIT_EFFECTIVE_MAX: Duration = Duration::from_millis(295_000);
/// An ambiguous payload-free wake notice expires after this and may be retried once.
pub const WAKE_NOTICE_EXPIRY: Duration = Duration::from_secs(5);
/// Notice attempts per unread-mail group before its wake budget is exhausted (first try + one retry).
pub const WAKE_ATTEMPTS_PER_GROUP: u8 = 2;
/// A lifecycle summary longer than this falls back to the generic notice: it must fit one composer line.
pub const LIFECYCLE_SUMMARY_MAX_CHARS: usize = 240;
/// Entries one terminal's injection FIFO (peer messages plus user commands) holds; the oldest peer
/// entry is dropped beyond it, which loses nothing because the inbox stays authoritative.
pub const INJECTION_QUEUE_CAPACITY: usize = 256;
