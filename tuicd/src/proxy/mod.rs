//! The upstream MCP proxy: other MCP servers reached through tuicd's one `/mcp` endpoint.
//!
//! - [`config`]: `mcp-upstreams.json`'s types and the rules an entry must meet (pure).
//! - [`wire`]: what the two transports share: handshake, request options, errors, bearer source.
//! - [`oauth`]: OAuth 2.1 for HTTP upstreams: discovery, flows, the callback servers, tokens.
//!
//! Transports and the live registry attach here; they name no MCP server module, so the
//! dependency stays one way (`mcp` and `routes` → `proxy`).

pub(crate) mod config;
pub(crate) mod oauth;
pub(crate) mod wire;
