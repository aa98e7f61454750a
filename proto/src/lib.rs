//! Wire types shared by `tuicd` and its clients (`tuic-gui`, `tuic-bridge`, tests).
//!
//! Only serde types live here: no IO, no async runtime. JSON is snake_case and optional values are
//! omitted rather than sent as `null`.

pub mod error;
pub mod events;
pub mod health;
pub mod paths;
pub mod peers;
pub mod session;

pub use error::{ErrorBody, ErrorCode};
pub use health::{HashPasswordRequest, HashPasswordResponse, Health, Version};

/// The MCP protocol revision tuicd speaks by default (and reports in `/health`).
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// The key in a listed tool's `_meta` where tuicd states, in milliseconds, how long a client
/// waits for one call of that tool: an upstream tool's `timeout_secs` plus a margin (and for
/// `call_tool`, the longest of them). Clients with a fixed deadline of their own (tuic-bridge)
/// take it instead, so a long upstream call is not cut short.
pub const TOOL_DEADLINE_META: &str = "tuic/deadline_ms";
