//! tuicd: the daemon that owns every PTY and serves one HTTP / WebSocket / SSE / MCP API.
//!
//! [`server::Daemon`] is the one entry point: `Daemon::bind(options)` then `serve(shutdown)`.

mod agent;
mod agent_runtime;
mod config;
mod events;
mod http;
pub mod limits;
mod lock;
mod mcp;
mod messaging;
mod messaging_runtime;
pub mod paths;
mod routes;
// The ai_terminal tools read and run through these checks; they land on top of them.
#[allow(dead_code)]
mod safety;
mod server;
mod session;
mod state;
// The gated operations that ask through it (the ui tool, GitHub writes, worktree force remove)
// land on top of this core; until they do, parts of it have no caller outside its tests.
#[allow(dead_code, unused_imports)]
mod ui;

pub use server::{Daemon, Options};

/// For the black-box tests: the `.tcap` capture format and the config deep merge they check the
/// daemon against.
pub use config::merge::deep_merge;
pub use session::capture;
