//! Every deadline and limit the bridge applies, each with why it has its value.

use std::time::Duration;

/// An ordinary call's read deadline: tuicd answers these in milliseconds; 10 s means "stuck".
pub const CALL_DEADLINE: Duration = Duration::from_secs(10);
/// Added to a wait's own (clamped) timeout: room for response framing and scheduler latency.
pub const WAIT_MARGIN: Duration = Duration::from_secs(5);
/// tuicd's default wait when a call names no `timeout_ms`.
pub const WAIT_DEFAULT_MS: u64 = 60_000;
/// tuicd's advertised wait cap, and what a request at or above it actually runs (see tuicd's
/// limits: 5 s under clients that abort their own call at exactly 300 s).
pub const WAIT_CAP_MS: u64 = 300_000;
pub const WAIT_RUN_MAX_MS: u64 = 295_000;
/// `ui action=confirm` and long workspace operations: the daemon's own 300 s answer window plus
/// 5 s, still under nothing the bridge controls (the daemon's 301 s request timeout ends it first).
pub const LONG_CALL_DEADLINE: Duration = Duration::from_secs(305);
/// Liveness: one MCP `ping` this often (constant-size, unlike re-listing tools) ...
pub const PING_INTERVAL: Duration = Duration::from_secs(3);
/// ... and this many consecutive failures switch the bridge to offline answers.
pub const OFFLINE_AFTER_FAILURES: u32 = 3;
/// How long to wait for the GET /mcp stream's response head.
pub const STREAM_OPEN_DEADLINE: Duration = Duration::from_secs(10);
/// Response head size cap (tuicd's heads are a few hundred bytes).
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Response body cap: tuicd's own request-body limit is 2 MB; its answers (session output) stay
/// well below this.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;
/// Lines queued for stdout; the writer drains them in order.
pub const STDOUT_QUEUE: usize = 256;
