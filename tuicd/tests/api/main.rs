//! Black-box tests: each starts the real `tuicd` binary on a temp config dir and speaks HTTP
//! (and later WebSocket, SSE, MCP) to it over its Unix socket or TCP. One test binary, one module
//! per capability.

// Test code: an unwrap that fails is a failed test, with its location.
#![allow(clippy::unwrap_used)]

mod acp;
mod agents;
mod agents_fixtures;
mod agents_idle;
mod agents_launch;
mod agents_progress;
mod agents_spawn;
mod agents_stream;
mod ai_terminal;
mod ai_terminal_confirm;
mod ai_terminal_files;
mod ai_terminal_redaction;
mod ai_terminal_sandbox;
mod bounded;
mod bridge;
mod browser;
mod docs_claims;
mod foundation;
mod fs_gate;
mod fs_routes;
mod fs_util;
mod fuzz_corpus;
mod github_gh;
mod github_util;
mod harness;
mod local;
mod mcp;
mod mcp_client;
mod mcp_collapsed;
mod mcp_config_security;
mod mcp_config_tool;
mod mcp_debug_tool;
mod mcp_session_tool;
mod mcp_tools_list;
mod mcp_ui_tool;
mod mobile;
mod monitor;
mod netns;
mod oauth_as;
mod orchestrate;
mod peers;
mod peers_delivery;
mod peers_routes;
mod plugins;
mod principals;
mod raw_reads;
mod remote_abuse;
mod remote_write;
mod repo_conflict;
mod repo_git;
mod repo_registry;
mod repo_util;
mod repo_worktree;
mod session_rules;
mod session_util;
mod sessions;
mod stream;
mod stream_close;
mod task_owner;
mod ui_confirm;
mod upstream_config;
mod upstream_config_live;
mod upstream_faults;
mod upstream_http;
mod upstream_keyring;
mod upstream_names;
mod upstream_oauth;
mod upstream_oauth_live;
mod upstream_proxy;
mod upstream_step_up;
mod upstream_util;
