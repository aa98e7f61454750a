//! The upstream MCP proxy: other MCP servers reached through tuicd's one `/mcp` endpoint.
//!
//! - [`config`]: `mcp-upstreams.json`'s types and the rules an entry must meet (pure).
//! - [`store`]: the file on disk: locked three-way saves, atomic writes, redaction.
//! - [`wire`]: what the two transports share: handshake, request options, errors, bearer source.
//! - [`oauth`]: OAuth 2.1 for HTTP upstreams: discovery, flows, the callback servers, tokens.
//! - [`stdio`]: the stdio transport; [`registry`]: the live upstreams (one shared client each),
//!   their status, tools and calls; [`health`]: the health ticker and the circuit breaker.
//! - [`http`]: the Streamable HTTP transport (the registry wraps it beside `stdio`).
//!
//! Transports and the live registry attach here; they name no MCP server module, so the
//! dependency stays one way (`mcp` and `routes` → `proxy`).

pub(crate) mod config;
pub(crate) mod health;
pub(crate) mod http;
pub(crate) mod oauth;
pub(crate) mod registry;
pub(crate) mod stdio;
pub(crate) mod store;
pub(crate) mod wire;
