//! Every limit the daemon enforces, in one place. Each constant says why it has its value.

use std::time::Duration;

/// Outer request deadline (408). One second above the longest in-handler deadline
/// ([`UI_CONFIRM_TIMEOUT`]), so a handler always answers with its own body first.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(301);
/// The `ui action=confirm` answer window; the bridge waits 305 s for it.
pub const UI_CONFIRM_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a waiting confirmation outlives its last connected answerer: enough for a client to
/// reconnect its `/events` stream, short enough that nobody waits 300 s for a closed window.
pub const UI_CONFIRM_ORPHAN_GRACE: Duration = Duration::from_secs(10);
/// Confirmations waiting at once; a person answers a handful, never hundreds.
pub const UI_CONFIRM_PENDING_MAX: usize = 64;
/// A confirmation's message: shown whole, never cut, so a larger one is refused before it is
/// published. Room for [`AI_TERMINAL_CONFIRM_MAX_BYTES`] with every byte escaped (`\x01`).
pub const UI_CONFIRM_MESSAGE_MAX_BYTES: usize = 96 * 1024;
/// Resolved confirmation ids remembered, so a late second answer is told it came too late.
pub const UI_CONFIRM_RECENT: usize = 256;
/// Largest request body any route buffers (413 above it).
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
/// Responses above this size are compressed (gzip or brotli, as the client accepts).
pub const COMPRESSION_MIN_BYTES: u64 = 860;
/// Concurrent connections per listener. The IPC listener's further accepts wait for a slot; the TCP
/// listener closes its oldest unauthenticated connection instead (`server/admission.rs`).
pub const MAX_CONNECTIONS: usize = 1024;
/// Times a connection is polled again at once when it woke itself during a poll (hyper's request
/// body channel does, once per request with a body) before it yields to the scheduler instead.
pub const CONNECTION_INLINE_REPOLLS: usize = 4;
/// How long shutdown waits for in-flight requests before it gives up on them.
pub const SHUTDOWN_DRAIN: Duration = Duration::from_secs(10);

/// Unix socket bind: attempts, and the pause between them. Each attempt removes a stale file.
pub const SOCKET_BIND_ATTEMPTS: u32 = 3;
pub const SOCKET_BIND_RETRY: Duration = Duration::from_millis(100);
/// How long `tuicd status` and the liveness probe wait for a daemon to answer.
pub const SOCKET_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The configured TCP port and this many following ones are tried when it is taken.
pub const TCP_PORT_ATTEMPTS: u16 = 3;

/// bcrypt cost for new password hashes (about 300 ms per verify in release).
pub const BCRYPT_COST: u32 = 12;
/// bcrypt reads only the first 72 bytes of a password; longer ones are refused (by
/// `POST /auth/hash-password` and `tuicd hash-password`) rather than silently truncated.
pub const BCRYPT_MAX_PASSWORD_BYTES: usize = 72;
/// Scoped access tokens (`tuicd token create`) kept at once; creating one more is refused.
pub const TOKENS_MAX: usize = 256;
/// A token's name: what `tuicd token list` shows and the journal names.
pub const TOKEN_NAME_MAX_CHARS: usize = 64;
/// A token created without `--ttl` lasts this long; `--ttl never` keeps it until revoked.
pub const TOKEN_DEFAULT_TTL: std::time::Duration = std::time::Duration::from_secs(30 * 86_400);
/// Successful Basic credentials remembered so that bcrypt runs once per credential, not per request.
pub const AUTH_CACHE_CAPACITY: usize = 64;
/// Client addresses tracked by the failed-login limiter; the oldest is dropped beyond it.
pub const AUTH_LIMITER_CAPACITY: usize = 4096;
/// bcrypt verifications running at once. One: a burst of guesses can occupy at most one core of
/// a two-core machine, and the other stays free to serve everyone else.
pub const BCRYPT_CONCURRENCY: usize = 1;
/// How long a login waits for the bcrypt slot before it is answered 429 (a burst from elsewhere
/// is at most a few verifications long, since each address is limited before bcrypt runs).
pub const BCRYPT_QUEUE_WAIT: Duration = Duration::from_secs(2);

/// Remote access (TCP) only: a client must send a whole request head within this, and an idle
/// HTTP/1 keep-alive connection is closed after it (hyper runs one timer for both), so a slow or
/// silent socket cannot hold a connection slot.
pub const TCP_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A TCP connection that has not authenticated a request within this after it was accepted is
/// closed. Covers what the header timer does not: the HTTP/2 preface, protocol sniffing, TLS.
pub const TCP_AUTHENTICATE_WITHIN: Duration = Duration::from_secs(10);
/// HTTP/2 pings on an idle authenticated TCP connection, so a vanished peer frees its slot.
pub const TCP_H2_KEEP_ALIVE: Duration = Duration::from_secs(30);
/// TCP connections one address (an IPv6 /64 counts as one) may hold. Far above a GUI, a phone page
/// and a browser together; far below [`MAX_CONNECTIONS`], so one address cannot fill the listener.
pub const TCP_CONNECTIONS_PER_ADDRESS: usize = 64;

/// `/events`: events retained for `Last-Event-ID` replay, and the live channel's depth.
pub const EVENT_HISTORY: usize = 1024;
pub const EVENT_CHANNEL_CAPACITY: usize = 256;
/// SSE keep-alive comment interval, and the reconnect delay advertised to clients.
pub const SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);
pub const SSE_RETRY_MS: u64 = 5000;

/// Agent-state engine (`agent/`). Timers are the reference's, measured there against real agents.
/// A plain shell is idle after this much silence; an agent after the longer one, because agents
/// pause between tool calls for well over half a second while still working.
pub const SHELL_IDLE: Duration = Duration::from_millis(500);
pub const AGENT_IDLE: Duration = Duration::from_millis(2500);
/// An agent's ready prompt must stay on screen, with nothing else moving, this long to be a
/// *confirmed* idle (what submit and injection require); a prompt flashing between tool calls is not.
pub const AGENT_READY_CONFIRM: Duration = Duration::from_millis(1500);
/// An agent CLI that shows nothing its adapter recognises (no ready prompt, working indicator,
/// dialog or announcement) for this long after its first output is `unknown`, with the reason,
/// instead of working or starting forever. Real CLIs show their composer within a few seconds.
pub const AGENT_UNRECOGNISED: Duration = Duration::from_secs(20);
/// Output this soon after a keystroke is the echo of that keystroke, not the agent starting work.
pub const INPUT_ECHO_WINDOW: Duration = Duration::from_millis(500);
/// How often the session should call `AgentTracker::tick`; the silence timers resolve to this.
pub const AGENT_TICK_INTERVAL: Duration = Duration::from_millis(250);
/// Longest text line the marker parser assembles; a longer line cannot be a marker, so the
/// rest of it is dropped until the next line break (bounded memory under `yes`-style output).
pub const MARKER_LINE_MAX_BYTES: usize = 4096;
/// Longest OSC / DCS string kept; longer ones are discarded up to their terminator.
pub const MARKER_OSC_MAX_BYTES: usize = 4096;
/// A `suggest: [ ... ]` marker may be soft-wrapped by the agent's renderer over this many extra
/// lines, and at most this many bytes in all; past either it is not a marker.
pub const SUGGEST_WRAP_MAX_LINES: usize = 4;
pub const SUGGEST_WRAP_MAX_BYTES: usize = 512;
/// Items in one suggestion marker (plain text needs at least two, OSC 7770 at least one), and
/// the longest item kept.
pub const SUGGEST_MAX_ITEMS: usize = 4;
pub const SUGGEST_ITEM_MAX_CHARS: usize = 120;
/// The `intent:` text and its `(title)`, in characters; longer text is cut, a longer title is
/// treated as part of the text.
pub const INTENT_MAX_CHARS: usize = 200;
pub const INTENT_TITLE_MAX_CHARS: usize = 40;
/// Bottom screen rows searched for a choice prompt or a composer (the reference verified 20).
pub const SCREEN_SCAN_ROWS: usize = 20;
/// Options in one choice prompt; a longer "numbered list" is prose, not a dialog.
pub const CHOICE_MAX_OPTIONS: usize = 9;
/// The composer text an `InputLineBuffer` keeps; beyond it the composer is known non-empty only.
pub const INPUT_LINE_MAX_BYTES: usize = 64 * 1024;
/// `session action=submit` acknowledgement window: default, and the clamp for `timeout_ms`.
/// (The values live in `proto::session`, which the bridge shares for its call deadline.)
pub const SUBMIT_ACK_TIMEOUT_DEFAULT: Duration = Duration::from_millis(proto::session::SUBMIT_ACK_DEFAULT_MS);
pub const SUBMIT_ACK_TIMEOUT_MIN: Duration = Duration::from_millis(proto::session::SUBMIT_ACK_MIN_MS);
pub const SUBMIT_ACK_TIMEOUT_MAX: Duration = Duration::from_millis(proto::session::SUBMIT_ACK_MAX_MS);
/// How long a submit waits to see a known agent CLI take the line (announce or show work, its
/// composer emptied) before it sends the Enter once more; the same again after that one retry.
/// Real CLIs react to Enter within a frame or two; this leaves room for a loaded machine.
pub const SUBMIT_START_WAIT: Duration = Duration::from_millis(2500);
/// How often that wait re-reads the engine when no output arrives (silence timers move).
pub const SUBMIT_START_POLL: Duration = Duration::from_millis(50);
/// How long a message pushed as a Claude Code channel notification may take to show in its
/// transcript before it is typed into the terminal instead (Claude Code draws it within a frame
/// when its channels are on; it drops it silently when they are off).
pub const CHANNEL_ECHO_WAIT: Duration = Duration::from_secs(5);
/// The screen text searched for that echo.
pub const CHANNEL_ECHO_SCAN_BYTES: usize = 16 * 1024;
/// Parents followed from a socket peer up to a tuicd terminal's child before giving up.
pub const PROCESS_ANCESTRY_MAX: usize = 64;
/// A `pty_description` derived from a spawn prompt keeps this many characters.
pub const PTY_DESCRIPTION_MAX_CHARS: usize = 160;
// Inter-agent messaging (`messaging`). Values are the seed's; each says why.

/// Messages one agent's inbox retains. Beyond it the oldest peer message is evicted (FIFO) and
/// counted in `missed_count`; server-authored lifecycle mail is evicted only when nothing else is left,
/// because a parent that loses "child exited" can wait forever.
pub const INBOX_CAPACITY: usize = 100;
/// The longest peer name `agent action=register` and `agent action=spawn` accept, in characters:
/// a name is a label other agents read in their instructions and peer lists, not a message.
pub const PEER_NAME_MAX_CHARS: usize = 64;
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
/// Largest Compose command (`POST /sessions/:id/compose`): the same bound as a peer message.
pub const COMPOSE_COMMAND_MAX_BYTES: usize = MAX_MESSAGE_BYTES;
/// Entries one terminal's injection FIFO (peer messages plus user commands) holds; the oldest peer
/// entry is dropped beyond it, which loses nothing because the inbox stays authoritative.
pub const INJECTION_QUEUE_CAPACITY: usize = 256;
/// A peer identity's owning MCP session counts as live (not reclaimable by another bridge) while
/// it holds a GET stream or made a request within this grace (the seed's MCP_OWNER_ACTIVITY_GRACE).
pub const MCP_OWNER_ACTIVITY_GRACE: Duration = Duration::from_secs(6);
/// MCP: how long a protocol session may sit unused before the reaper forgets it. Clients such as
/// the conformance suite never DELETE, so without expiry sessions would pile up forever.
pub const MCP_SESSION_IDLE_TTL: Duration = Duration::from_secs(60 * 60);
/// MCP: how often the reaper looks for idle sessions. Expiry is therefore late by at most this.
pub const MCP_REAPER_INTERVAL: Duration = Duration::from_secs(60);
/// MCP: the reaper never runs more often than this, whatever a (test-only) short TTL asks.
pub const MCP_REAPER_MIN_INTERVAL: Duration = Duration::from_millis(100);
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

/// Sessions: raw output kept per session for `format=raw` reads and WebSocket catch-up. 2 MiB is
/// the reference's figure; it covers several screens of a busy build log. It grows lazily, so an
/// idle session holds only what it has written.
pub const SESSION_RING_BYTES: usize = 2 * 1024 * 1024;
/// An output chunk at least this long stays in the ring as the reader made it (an allocation of its
/// exact size, shared with the broadcast, so a flood is not copied again); shorter ones are
/// gathered into one buffer of the ring, sealed at this size, so a trickle of echoes is not one
/// allocation each.
pub const RING_SHARE_FROM: usize = 32 * 1024;
/// Log lines (rows scrolled off the screen, ANSI stripped) kept per session; the line cursor keeps
/// counting past evictions.
pub const SESSION_LOG_LINES: usize = 10_000;
/// The screen model appends a run of plain lines to its log directly (`session/plain_lines.rs`)
/// when the run holds at least this many rows (and two screens) before its last screen of rows,
/// which vt100 parses; shorter runs are not worth the switch.
pub const PLAIN_RUN_MIN_ROWS: usize = 64;
/// The most one read cycle gathers: the largest output chunk, hence the largest output frame. The
/// kernel hands over at most 4 KiB per `read()`, so this sets how many consumer wake-ups and
/// frames a flood costs: against 64 KiB (the reference's figure) 128 KiB halves them and lowers
/// the daemon's CPU per flood, while 256 KiB chunks lower the throughput (docs/dev/perf-log.md).
pub const PTY_READ_CHUNK: usize = 128 * 1024;
/// The most one `read()` of the PTY asks for. The kernel's line discipline holds only 4 KiB and
/// restarts its flush worker (which moves the child's output into those 4 KiB) only at the end of
/// a read that drained it: a read of everything there is leaves the worker idle while the reader
/// copies and the reader idle while the worker refills. A read of part of it restarts the worker
/// at once, so the two copy at the same time (see docs/dev/perf-log.md).
pub const PTY_READ_SLICE: usize = 2 * 1024;
/// A read cycle that has gathered this much waits up to [`PTY_COALESCE_WAIT`] for more before
/// handing the chunk on (a flood then reaches the streams in [`PTY_READ_CHUNK`] frames; a lone
/// echo, far smaller, goes out at once). Once a cycle has filled its buffer or got more by
/// waiting, any amount waits, until a wait times out (see `session/reader.rs`).
pub const PTY_COALESCE_FROM: usize = 8 * 1024;
pub const PTY_COALESCE_WAIT: Duration = Duration::from_millis(1);
/// Stack reserved for each session's PTY reader thread. Its frames are shallow (read, ring push,
/// broadcast, capture, a log line); only touched pages count towards RSS, so an idle session's
/// thread costs a few KiB of memory whatever this is.
pub const PTY_READER_STACK_BYTES: usize = 128 * 1024;
/// Writes queued for the writer task; a caller waits when a child stops reading its input, but the
/// reader (and every other session) never does.
pub const PTY_INPUT_QUEUE: usize = 256;
/// Output chunks the per-session broadcast holds for its slowest subscriber (at most 8 MiB of
/// [`PTY_READ_CHUNK`] chunks, and only while a relaying subscriber lags: a chunk every subscriber
/// has seen is dropped). A subscriber that falls further behind is resynced from the ring, so this
/// bounds memory, not correctness.
pub const SESSION_BROADCAST_CAPACITY: usize = 64;
/// After the child exits, how long the reader may keep draining output that a grandchild still
/// writes to the PTY before the session is closed anyway.
pub const PTY_DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);
/// Shutdown: how long the sessions get to close (SIGHUP, SIGKILL, then at most
/// [`PTY_DRAIN_AFTER_EXIT`] of output) before the daemon SIGKILLs the process group of each one
/// left, says so in the log, and goes on without it.
pub const SHUTDOWN_SESSIONS: Duration = Duration::from_secs(5);
/// Shutdown: how long the runtime waits, after the drain, for tasks still running (a blocking
/// call, a stuck stream) before the process exits without them (logged).
pub const SHUTDOWN_TASKS: Duration = Duration::from_secs(2);
/// An exited session's output and exit code stay readable this long (a tombstone).
pub const SESSION_TOMBSTONE_TTL: Duration = Duration::from_secs(5 * 60);
/// Exited sessions kept as tombstones at once; the oldest is dropped beyond it, so a crash loop of
/// short-lived sessions cannot grow memory for five minutes.
pub const SESSION_TOMBSTONE_MAX: usize = 200;
/// Terminal size bounds (rows and cols), as in the reference.
pub const TERMINAL_SIZE_MIN: u16 = 1;
pub const TERMINAL_SIZE_MAX: u16 = 500;
/// Default terminal size when a create request gives none.
pub const DEFAULT_ROWS: u16 = 24;
pub const DEFAULT_COLS: u16 = 80;
/// `shell_state` turns from busy to idle after this much output silence (the reference's value).
pub const SHELL_IDLE_AFTER: Duration = Duration::from_millis(500);
/// `GET /sessions/:id/output?format=raw` default `limit` in bytes (seed value).
pub const OUTPUT_DEFAULT_BYTES: usize = 8192;
/// A client-chosen `session_id` is at most this long (it appears in URLs and file names).
pub const SESSION_ID_MAX_LEN: usize = 64;
/// WebSocket: raw catch-up is sent in frames of at most this many bytes.
pub const WS_CATCH_UP_CHUNK: usize = 64 * 1024;
/// WebSocket: the most a socket read takes in for client frames (keystrokes; a paste's frame
/// reserves its full length anyway). tungstenite zero-fills this much before every read attempt,
/// and the stream task polls for client frames after each frame it sends: its 128 KiB default
/// cost a 128 KiB memset per output frame under a flood.
pub const WS_READ_BUFFER: usize = 4 * 1024;
/// Raw PTY capture files (`.tcap`) stop growing at this size per session (seed value).
pub const CAPTURE_MAX_BYTES: u64 = 512 * 1024;
/// `/process/stats` samples CPU from the previous call; calls closer than this reuse the last
/// figures (sysinfo cannot measure CPU over a shorter window).
pub const PROCESS_SAMPLE_MIN_INTERVAL: Duration = Duration::from_millis(250);

/// Agents in sessions (`agent_runtime/`). After the last output or input a session keeps ticking its
/// tracker this long, so every silence timer resolves; then it stops (an idle session has no timer).
pub const AGENT_TICK_LINGER: Duration = Duration::from_secs(6);
/// The background-work process probe runs at most this often, only while a session ticks.
pub const BACKGROUND_PROBE_INTERVAL: Duration = Duration::from_secs(1);
/// `agent action=spawn`: a deferred prompt not injected within this is reported (seed value).
pub const DEFERRED_PROMPT_WATCHDOG: Duration = Duration::from_secs(30);
/// Task handles: retained this long after creation, at most this many (oldest dropped first).
pub const TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);
pub const TASK_MAX: usize = 4096;
/// `poll_interval_ms` every task handle advertises (seed value).
pub const TASK_POLL_INTERVAL_MS: u64 = 1000;
/// How long `tasks/result` blocks for a task to end: the longest blocking wait, so the answer (a
/// result, or "call again") always beats the request timeout.
pub const TASK_RESULT_WAIT: Duration = Duration::from_millis(SESSION_WAIT_RUN_MAX_MS);
/// Progress journal: longest `text` accepted, longest line read back (longer lines are skipped),
/// and most entries one `progress_list` returns.
pub const PROGRESS_TEXT_MAX_CHARS: usize = 2000;
pub const PROGRESS_LINE_MAX_BYTES: usize = 16 * 1024;
pub const PROGRESS_LIST_MAX: usize = 1000;
/// The screen model follows the ring in batches of at most this many bytes, releasing its lock
/// between them so that screen reads stay responsive during a flood.
pub const SCREEN_BATCH: usize = 256 * 1024;
/// When the screen model is this far behind the ring, it skips to the last [`SCREEN_BATCH`] bytes.
/// 1 MiB of 80-column output is about 13,000 rows, more than the log keeps: a parser held to its
/// budget ([`SCREEN_PARSE_SHARE`]) under a flood jumps to the recent past instead of falling ever
/// further behind, so the screen stays current.
pub const SCREEN_MAX_BACKLOG: usize = 1024 * 1024;
/// WebSocket: live output chunks already queued for a client are coalesced into one frame up to
/// this size (fewer frames and syscalls under a flood; a lone keystroke echo is sent at once).
pub const WS_BATCH_BYTES: usize = 256 * 1024;
/// While output keeps coming, the screen model parses for at most 1/this of wall time (see
/// `session/budget.rs`); interactive output and bursts of up to [`SCREEN_PARSE_BURST`] of parsing
/// (160 KB of full 80-column lines, 1.4 MB when they are plain) are parsed at once. At 1/50,
/// sustained output of full 80-column lines is parsed in full up to ~0.3 MB/s (~3 MB/s when they
/// are plain lines, see `session/plain_lines.rs`), and a flood still refreshes the screen several
/// times a second, while the parser takes 2% of a core from the child and the kernel's tty work,
/// which a flood keeps saturated.
pub const SCREEN_PARSE_SHARE: u32 = 50;
pub const SCREEN_PARSE_BURST: Duration = Duration::from_millis(10);

/// `debug action=logs`: the daemon keeps its last this many tracing events in memory, and at most
/// [`LOG_RING_BYTES`] of them (a burst of long messages evicts older events sooner); one event's
/// message is cut at [`LOG_EVENT_MAX_BYTES`]. Enough to see what led up to a problem without
/// holding a log file's worth of memory.
pub const LOG_RING_EVENTS: usize = 1000;
pub const LOG_RING_BYTES: usize = 512 * 1024;
pub const LOG_EVENT_MAX_BYTES: usize = 4 * 1024;
/// `debug action=logs` returns this many events when no `limit` is given.
pub const LOG_READ_DEFAULT: usize = 50;
/// `config` prompt libraries (`ai-prompts/`, `prompts/` in the config dir): a prompt's name is at
/// most this long (it is a file name), its content at most this many bytes, and a library holds at
/// most this many prompts (a save past it is refused; listing reads no more).
pub const PROMPT_NAME_MAX_LEN: usize = 64;
pub const PROMPT_MAX_BYTES: usize = 64 * 1024;
pub const PROMPT_LIBRARY_MAX: usize = 500;
/// `ui action=screenshot`: how long the asking call waits for a GUI client's PNG, the largest PNG
/// accepted (its base64 fills the [`MAX_BODY_BYTES`] body), requests waiting at once, and how
/// many screenshot files the config dir keeps (older ones are deleted as new ones arrive).
pub const UI_SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(30);
pub const UI_SCREENSHOT_MAX_BYTES: usize = MAX_BODY_BYTES / 4 * 3 - 1024;
pub const UI_SCREENSHOT_PENDING_MAX: usize = 8;
pub const UI_SCREENSHOT_KEEP: usize = 20;
/// `ui` toast, tab and confirm text: a title and a message a person reads at a glance, a tab id
/// (clients key tabs by it), a tab URL, and a tab's inline HTML. Every event stays in the event
/// history ([`EVENT_HISTORY`]), so a tab's HTML is held to a size the history can keep.
pub const UI_TITLE_MAX_CHARS: usize = 200;
pub const UI_MESSAGE_MAX_CHARS: usize = 4000;
pub const UI_TAB_ID_MAX_LEN: usize = 64;
pub const UI_TAB_URL_MAX_BYTES: usize = 4096;
pub const UI_TAB_HTML_MAX_BYTES: usize = 64 * 1024;
/// `ai_terminal_read_screen` lines: the seed's default and maximum.
pub const AI_TERMINAL_LINES_DEFAULT: usize = 50;
pub const AI_TERMINAL_LINES_MAX: usize = 500;
/// `ai_terminal_drive_agent` lines returned by default.
pub const AI_TERMINAL_DRIVE_LINES_DEFAULT: usize = 80;
/// Text an `ai_terminal` read considers: enough for 500 long lines, bounded for the regex.
pub const AI_TERMINAL_TEXT_MAX_BYTES: usize = 256 * 1024;
/// `ai_terminal_wait_for` defaults: the seed's 10 s and 500 ms of stable screen.
pub const AI_TERMINAL_WAIT_DEFAULT_MS: u64 = 10_000;
pub const AI_TERMINAL_STABILITY_DEFAULT_MS: u64 = 500;
/// `ai_terminal_drive_agent` waits this long for the turn by default.
pub const AI_TERMINAL_DRIVE_DEFAULT_MS: u64 = 30_000;
/// `ai_terminal_run_command`: the seed's 2 min default. Its 10 min maximum is held to the request
/// deadline: one call answers within [`WAIT_EFFECTIVE_MAX`], so a longer request runs that long.
pub const AI_TERMINAL_RUN_DEFAULT_MS: u64 = 120_000;
pub const AI_TERMINAL_RUN_MAX_MS: u64 = 600_000;
/// Captured output per stream of `ai_terminal_run_command`; the rest is counted, not kept.
pub const AI_TERMINAL_RUN_OUTPUT_MAX: usize = 1024 * 1024;
/// What one `ai_terminal_*` confirmation may carry (a command, typed text, a file's new content,
/// an edit's two strings): a person reads all of it before confirming, so it is never cut, and
/// more than this is refused before asking; the agent writes a file and asks to run that instead.
pub const AI_TERMINAL_CONFIRM_MAX_BYTES: usize = 16 * 1024;
/// Text an agent may send in one `ai_terminal_send_input` / `drive_agent` command.
pub const AI_TERMINAL_INPUT_MAX_BYTES: usize = 64 * 1024;
/// Compiled size of an `ai_terminal` regex (`wait_for`, `drive_agent` wait_pattern).
pub const AI_TERMINAL_REGEX_SIZE: usize = 1024 * 1024;
/// `agent action=wait`: once fresh mail is seen, the wait keeps gathering while more arrives
/// within [`WAIT_GATHER_QUIET`] of the last, for at most [`WAIT_GATHER_MAX`], so a burst (three
/// children finishing within milliseconds) comes back in one answer instead of one per call.
pub const WAIT_GATHER_QUIET: Duration = Duration::from_millis(100);
pub const WAIT_GATHER_MAX: Duration = Duration::from_millis(500);
/// `agent action=wait sessions=[...]`: most sessions one wait watches, and the text tail of each
/// one's output its answer carries (the rest stays readable with `session action=output`).
pub const WAIT_SET_MAX_SESSIONS: usize = 16;
pub const WAIT_SET_OUTPUT_BYTES: usize = 1500;
/// Plugin output watchers (`POST /api/plugins/output-watchers`): frontends with a set, patterns
/// per frontend, bytes per pattern, and the compiled size of each (the `regex` crate's
/// `size_limit`), so one frontend cannot make the daemon compile or run an unbounded automaton.
pub const WATCHER_FRONTENDS_MAX: usize = 16;
pub const WATCHER_PATTERNS_MAX: usize = 64;
pub const WATCHER_PATTERN_MAX_BYTES: usize = 1024;
pub const WATCHER_REGEX_SIZE_LIMIT: usize = 256 * 1024;
/// A line longer than this is matched by its first bytes only; the partial line a session keeps
/// between batches is cut there too.
pub const WATCHER_LINE_MAX_BYTES: usize = 4096;
/// Matches one batch of output may emit on `/events`; the rest of the batch is skipped, so a flood
/// of matching lines cannot flood the event bus.
pub const WATCHER_MATCHES_PER_BATCH: usize = 32;
/// `GET /api/plugins/:id/data/*path`: the largest data file served.
pub const PLUGIN_DATA_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// One git read (`/repo/*`, `repo action=status`): long enough for `git status` on a large cold
/// work tree, short enough that a wedged git (a hung filesystem) never holds a request for long.
pub const GIT_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// One git write (`worktree add/remove`, `branch -d`, a rebase): a checkout of a large tree.
/// Below [`REQUEST_TIMEOUT`] with room for warming and the setup script.
pub const GIT_WRITE_TIMEOUT: Duration = Duration::from_secs(120);
/// Bytes of one git call's output kept; beyond it git is stopped and the answer says
/// `truncated` (a 100,000-file status is about 4 MB).
pub const GIT_OUTPUT_MAX_BYTES: usize = 8 * 1024 * 1024;
/// Bytes of git's stderr kept (its error message).
pub const GIT_STDERR_MAX_BYTES: usize = 16 * 1024;
/// Entries `/repo/changed-files` answers at most; more set `truncated`.
pub const CHANGED_FILES_MAX: usize = 10_000;
/// Repositories `repo action=status` reads at once (each one or two git processes).
pub const REPO_STATUS_CONCURRENCY: usize = 8;
/// `/worktrees/run-script` and a worktree's setup script: wall time, then the script's process
/// group is killed.
pub const WORKTREE_SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);
/// Bytes of a script's combined output kept (its tail beyond it is dropped and `truncated` set).
pub const WORKTREE_SCRIPT_OUTPUT_MAX_BYTES: usize = 64 * 1024;
/// Warming a new worktree: ignored build directories larger than this in total are not copied
/// when the file system cannot clone (reflink) them; they are skipped and reported so.
pub const WARM_COPY_MAX_BYTES: u64 = 512 * 1024 * 1024;

/// Absolute-path file routes (`fsgate`): the read cap for remote (TCP) callers, and for callers on
/// this machine (seed values; the remote one keeps a metered link from pulling 250 MB).
pub const FS_READ_CAP_REMOTE: u64 = 10 * 1024 * 1024;
pub const FS_READ_CAP_LOOPBACK: u64 = 250 * 1024 * 1024;
/// The longest path the gate looks at (Linux's PATH_MAX); a longer one is refused unread.
pub const FS_PATH_MAX_BYTES: usize = 4096;
/// `/fs/transfer`: most paths in one request, and most entries one recursive copy walks.
pub const FS_TRANSFER_MAX_PATHS: usize = 1000;
pub const FS_TRANSFER_MAX_ENTRIES: usize = 100_000;
/// Each `gh` call is killed after this long (a hung network call must not hold a request).
pub const GH_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Most stdout or stderr kept from one `gh` call; the rest is dropped unread.
pub const GH_OUTPUT_MAX_BYTES: usize = 8 * 1024 * 1024;
/// `ai_terminal_read_file`: the seed's page of 200 lines, at most 2000, and its 10 MB file limit
/// (the file tools neither read nor write a larger one).
pub const AI_TERMINAL_READ_LINES_DEFAULT: usize = 200;
pub const AI_TERMINAL_READ_LINES_MAX: usize = 2000;
pub const AI_TERMINAL_FILE_MAX_BYTES: u64 = 10 * 1024 * 1024;
/// `ai_terminal_list_files` answers at most this many entries (the seed's 500).
pub const AI_TERMINAL_LIST_MAX: usize = 500;
/// `ai_terminal_search_files`: the seed's 50 matches; context lines on each side at most 10; a
/// matched line longer than 500 bytes is cut; the walk stops after 60 s with what it found.
pub const AI_TERMINAL_SEARCH_MAX_MATCHES: usize = 50;
pub const AI_TERMINAL_CONTEXT_LINES_MAX: usize = 10;
pub const AI_TERMINAL_SEARCH_LINE_MAX: usize = 500;
pub const AI_TERMINAL_SEARCH_BUDGET: Duration = Duration::from_secs(60);

/// Upstream MCP proxy (`mcp-upstreams.json`).
/// Most upstream servers in the file, and the longest upstream name (it prefixes tool names).
pub const UPSTREAM_MAX: usize = 64;
pub const UPSTREAM_NAME_MAX: usize = 64;
/// The longest name a client is shown for one upstream tool: 64 (what Claude Code's API accepts
/// for a tool name) less `mcp__tuic__`, the prefix Claude Code adds. Longer `{name}__{tool}` names
/// are shortened with a stable hash suffix.
pub const UPSTREAM_TOOL_NAME_MAX: usize = 64 - "mcp__tuic__".len();
/// The longest `tool_aliases` value (it is listed after `{name}__`, and shortened when the two
/// together are longer than [`UPSTREAM_TOOL_NAME_MAX`]).
pub const UPSTREAM_ALIAS_MAX: usize = UPSTREAM_TOOL_NAME_MAX;
/// An upstream request's deadline when its entry sets none (`timeout_secs`).
pub const UPSTREAM_DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Added to an upstream's `timeout_secs` in the deadline a listed tool states to its clients
/// (`proto::TOOL_DEADLINE_META`): room for the answer to cross tuicd and the bridge after the
/// upstream's own deadline, so tuicd's timeout answer arrives before the client gives up.
pub const UPSTREAM_CALL_MARGIN: Duration = Duration::from_secs(5);
/// The health checker's period; consecutive failures that open the breaker; its backoff (1 s
/// doubling, capped) and how many retries before the upstream is `failed`.
pub const UPSTREAM_HEALTH_INTERVAL: Duration = Duration::from_secs(60);
pub const UPSTREAM_BREAKER_FAILURES: u32 = 3;
pub const UPSTREAM_BACKOFF_START: Duration = Duration::from_secs(1);
pub const UPSTREAM_BACKOFF_MAX: Duration = Duration::from_secs(60);
pub const UPSTREAM_MAX_RETRIES: u32 = 5;
/// A crashed stdio upstream is respawned at most this often; a stopped one gets this long to exit
/// after its stdin closes before it is killed.
pub const UPSTREAM_RESPAWN_MIN_GAP: Duration = Duration::from_secs(5);
pub const UPSTREAM_STDIO_SHUTDOWN: Duration = Duration::from_secs(2);
/// A stdio upstream's stderr log file (`<config_dir>/logs/upstreams/<name>.log`) starts again past
/// this, the previous one kept as `<name>.log.1`: at most twice this on disk per upstream.
pub const UPSTREAM_STDERR_LOG_BYTES: u64 = 1024 * 1024;
/// At most one stderr line per upstream this often reaches the daemon's own log (the file has all).
pub const UPSTREAM_STDERR_SAMPLE: Duration = Duration::from_secs(10);
/// The last stderr lines kept per process for the error naming its exit (`last_error`).
pub const UPSTREAM_STDERR_TAIL_BYTES: usize = 2048;
/// How long the exit's error waits for stderr to close, so a crash's last lines are in it.
pub const UPSTREAM_STDERR_CLOSE_WAIT: Duration = Duration::from_millis(500);
/// The first `tools/list` after boot waits at most this long for upstreams still connecting.
pub const UPSTREAM_SETTLE: Duration = Duration::from_secs(3);
/// Most notifications queued from one upstream; past it new ones are dropped (and counted), so a
/// flooding upstream costs bounded memory.
pub const UPSTREAM_NOTIFY_QUEUE: usize = 256;
/// Longest line (message) read from a stdio upstream or one SSE event from an HTTP one.
pub const UPSTREAM_MESSAGE_MAX_BYTES: usize = 16 * 1024 * 1024;
/// OAuth: a pending authorization expires after this long; its callback server answers a late
/// redirect for this long after that.
pub const OAUTH_FLOW_TIMEOUT: Duration = Duration::from_secs(300);
pub const OAUTH_CALLBACK_GRACE: Duration = Duration::from_secs(120);
/// OAuth: an access token this close to its expiry is refreshed before use.
pub const OAUTH_EXPIRY_MARGIN: Duration = Duration::from_secs(60);
/// OAuth: every request to an authorization server (metadata, registration, token) and the
/// unauthenticated probe of the upstream; a document larger than the cap is refused.
pub const OAUTH_HTTP_TIMEOUT: Duration = Duration::from_secs(30);
pub const OAUTH_DOCUMENT_MAX_BYTES: usize = 1024 * 1024;
/// OAuth: a callback server closes this long after it served a successful callback.
pub const OAUTH_CALLBACK_CLOSE: Duration = Duration::from_secs(2);
/// OAuth: how many ended flows are remembered (to name the reason on a late redirect); the
/// oldest is forgotten first. Pending flows are at most one per upstream (`UPSTREAM_MAX`).
pub const OAUTH_ENDED_MAX: usize = 256;
/// Upstream OAuth: scope step-ups (a 403 `insufficient_scope` answered by asking for more scope)
/// in a row without a successful call between; the last of them fails the upstream instead of
/// asking again (the MCP authorization spec's retry limit, so a server that keeps refusing never
/// loops a person through authorizations).
pub const UPSTREAM_STEP_UPS_IN_A_ROW: u32 = 3;
/// The OS keyring's probe at the first use of the credential store (connect, store, read back,
/// delete a probe item): a local Secret Service answers in milliseconds, and a bus that does not
/// answer within this costs the daemon this once, then the 0600 file is used.
pub const KEYRING_PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// Any later keyring call (load, store, delete): past it the call fails and says so.
pub const KEYRING_CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// The one child runner (`child.rs`): at a run's deadline its process group gets SIGTERM, then
/// SIGKILL once this grace has passed with any of the group still alive.
pub const CHILD_TERM_GRACE: Duration = Duration::from_millis(500);
/// After the group is killed, its pipes are still read this long (output already written), then
/// abandoned: a grandchild that left the group cannot hold the answer.
pub const CHILD_DRAIN_GRACE: Duration = Duration::from_millis(250);
/// How often the runner looks whether a killed group is gone.
pub const CHILD_GROUP_POLL: Duration = Duration::from_millis(20);
/// `ai_terminal_drive_agent` on a plain shell: while a silent command holds the terminal's
/// foreground (`sleep 3`), how often the wait looks whether the shell has it back.
pub const AI_TERMINAL_PROMPT_POLL: Duration = Duration::from_millis(100);

/// Timing marks a session keeps for the recording of its ring (`GET /sessions/:id/recording.cast`).
pub const TIMELINE_MARKS: usize = 16_384;
/// Output written closer together than this shares one timing mark in a recording.
pub const TIMELINE_RESOLUTION: std::time::Duration = std::time::Duration::from_millis(10);

/// ACP: most connections at once (settled ones count until disconnected).
pub const ACP_MAX_CONNECTIONS: usize = 16;
/// ACP: the longest line (message) read from an agent; a longer one is journaled as `invalid`.
pub const ACP_MESSAGE_MAX_BYTES: usize = 8 * 1024 * 1024;
/// ACP: frames and bytes each connection's journal keeps (the oldest dropped past either).
pub const ACP_JOURNAL_FRAMES: usize = 8192;
pub const ACP_JOURNAL_BYTES: usize = 32 * 1024 * 1024;
/// ACP: frames a stream sends per batch before it flushes and looks again.
pub const ACP_STREAM_BATCH: usize = 256;
/// ACP: a quiet stream sends a WebSocket ping this often.
pub const ACP_STREAM_PING: Duration = Duration::from_secs(20);
/// ACP: messages queued to an agent's stdin; past it an answer is refused (the agent is not
/// reading).
pub const ACP_WRITE_QUEUE: usize = 256;
/// ACP: questions waiting on a person per connection; more are answered with an error.
pub const ACP_INTERACTIONS_MAX: usize = 64;
/// ACP: the agent's answer to `initialize`, and to every other request but a prompt (a turn
/// runs as long as it runs).
pub const ACP_INIT_TIMEOUT: Duration = Duration::from_secs(60);
pub const ACP_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// ACP: after stdin closes, how long the agent has to exit before its group is killed; and how
/// long an agent that closed stdout has before the same.
pub const ACP_DISCONNECT_GRACE: Duration = Duration::from_secs(3);
pub const ACP_EXIT_GRACE: Duration = Duration::from_secs(2);
