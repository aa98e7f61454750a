//! tuicd: the daemon that owns every PTY and serves one HTTP / WebSocket / SSE / MCP API.
//!
//! [`server::Daemon`] is the one entry point: `Daemon::bind(options)` then `serve(shutdown)`.

pub mod agent;
pub mod agent_runtime;
pub mod config;
pub mod events;
pub mod http;
pub mod limits;
pub mod mcp;
pub mod messaging;
pub mod messaging_runtime;
pub mod paths;
pub mod routes;
pub mod server;
pub mod session;
pub mod state;

pub use server::{Daemon, Options};
