//! tuicd: the daemon that owns every PTY and serves one HTTP / WebSocket / SSE / MCP API.
//!
//! [`server::Daemon`] is the one entry point: `Daemon::bind(options)` then `serve(shutdown)`.

mod agent;
mod agent_runtime;
mod config;
mod events;
mod fsgate;
mod github;
mod http;
pub mod limits;
mod lock;
mod mcp;
mod messaging;
mod messaging_runtime;
pub mod paths;
mod repos;
mod routes;
mod safety;
mod server;
mod session;
mod state;
mod ui;

pub use server::{Daemon, Options};

/// For the black-box tests: the `.tcap` capture format and the config deep merge they check the
/// daemon against.
pub use config::merge::deep_merge;
pub use session::capture;
