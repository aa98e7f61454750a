//! tuicd: the daemon that owns every PTY and serves one HTTP / WebSocket / SSE / MCP API.
//!
//! [`server::Daemon`] is the one entry point: `Daemon::bind(options)` then `serve(shutdown)`.

mod acp;
mod agent;
mod agent_runtime;
mod ai;
mod child;
mod child_stderr;
mod config;
mod events;
mod fsgate;
#[doc(hidden)]
pub mod fuzzing;
mod github;
mod http;
mod jsonl;
pub(crate) mod keep;
pub mod limits;
mod lock;
mod log_ring;
mod mcp;
mod messaging;
mod messaging_runtime;
pub mod paths;
mod plugins;
mod principals;
mod private_file;
mod proxy;
mod repos;
mod routes;
mod safety;
#[doc(hidden)]
pub mod sandbox;
mod server;
mod session;
mod state;
mod tcap;
mod ui;
mod upgrade;

pub use server::{Daemon, Options};

/// For `main`: the upgrade-in-place hand-over (taken from the environment before any thread
/// starts) and the `handover-check` subcommand the old daemon runs on the new binary.
pub use upgrade::{CHECK_SUBCOMMAND, check_main as handover_check_main, take_env as take_handover_env};

/// For `main`: crash recovery's keeper process (`tuicd keeper SOCKET`) and systemd's environment.
pub use keep::keeper::{SUBCOMMAND as KEEPER_SUBCOMMAND, main as keeper_main};
pub use keep::systemd::take_env as take_systemd_env;

/// The tracing layer the binary adds so that MCP `debug action=logs` can read the daemon's recent log.
pub use log_ring::layer as log_ring_layer;

/// For `tuicd capture export`: a `.tcap` capture as an asciicast v2 recording.
pub use session::asciicast::from_tcap_file as tcap_to_asciicast;

/// For the black-box tests: the `.tcap` capture format and the config deep merge they check the
/// daemon against.
pub use config::merge::deep_merge;
pub use session::capture;
