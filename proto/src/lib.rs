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
