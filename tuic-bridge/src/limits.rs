//! Every deadline and limit the bridge applies, each with why it has its value.

use std::time::Duration;

/// An ordinary call's read deadline: tuicd answers these in milliseconds; 10 s means "stuck".
pub(crate) const CALL_DEADLINE: Duration = Duration::from_secs(10);
/// Added to a wait's own (clamped) timeout: room for response framing and scheduler latency.
pub(crate) const WAIT_MARGIN: Duration = Duration::from_secs(5);
/// tuicd's default wait when a call names no `timeout_ms`.
pub(crate) const WAIT_DEFAULT_MS: u64 = 60_000;
/// tuicd's advertised wait cap, and what a request at or above it actually runs (see tuicd's
/// limits: 5 s under clients that abort their own call at exactly 300 s).
pub(crate) const WAIT_CAP_MS: u64 = 300_000;
pub(crate) const WAIT_RUN_MAX_MS: u64 = 295_000;
/// `session action=submit`: tuicd's acknowledgement window and clamp, shared through `proto`.
pub(crate) use proto::session::{SUBMIT_ACK_DEFAULT_MS, SUBMIT_ACK_MAX_MS, SUBMIT_ACK_MIN_MS};
/// Added to submit's acknowledgement window: before it, tuicd waits for the terminal's writer lock
/// (another write in flight) and writes the framed input with its 50 ms gap before Enter. A submit
/// cut off by the bridge may already be typed, and a retry would type it twice.
pub(crate) const SUBMIT_MARGIN: Duration = Duration::from_secs(10);
/// `ui action=confirm` and long workspace operations: the daemon's own 300 s answer window plus
/// 5 s, still under nothing the bridge controls (the daemon's 301 s request timeout ends it first).
pub(crate) const LONG_CALL_DEADLINE: Duration = Duration::from_secs(305);
/// Liveness: one MCP `ping` this often (constant-size, unlike re-listing tools) ...
pub(crate) const PING_INTERVAL: Duration = Duration::from_secs(3);
/// ... and this many consecutive failures switch the bridge to offline answers.
pub(crate) const OFFLINE_AFTER_FAILURES: u32 = 3;
/// How long to wait for the GET /mcp stream's response head.
pub(crate) const STREAM_OPEN_DEADLINE: Duration = Duration::from_secs(10);
/// Response head size cap (tuicd's heads are a few hundred bytes).
pub(crate) const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Response body cap: tuicd's own request-body limit is 2 MB; its answers (session output) stay
/// well below this.
pub(crate) const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;
/// Lines queued for stdout; the writer drains them in order.
pub(crate) const STDOUT_QUEUE: usize = 256;
/// Server notifications held while the client's `initialize` is not answered yet (the stream
/// opens at the bridge's start), forwarded in order after the answer. Beyond it newer ones are
/// dropped: tuicd's own per-stream queue has the same size, and list_changed says the same again.
pub(crate) const EARLY_NOTIFICATION_QUEUE: usize = 64;
