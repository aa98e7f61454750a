//! Black-box tests: each starts the real `tuicd` binary on a temp config dir and speaks HTTP
//! (and later WebSocket, SSE, MCP) to it over its Unix socket or TCP. One test binary, one module
//! per capability.

mod foundation;
mod harness;
mod monitor;
mod session_util;
mod sessions;
mod stream;
