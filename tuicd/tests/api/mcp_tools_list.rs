//! What an agent pays per connection: the `tools/list` answer as Claude Code receives it.

use serde_json::{Value, json};

use crate::harness::*;
use crate::mcp_client::*;

/// The five native tools whose descriptions say what the schema cannot, never re-listing
/// parameters or answer fields.
const NATIVE: [&str; 5] = ["session", "agent", "task", "progress", "repo"];

/// Their budget: their size with descriptions of that kind, plus room for a few sentences.
/// The repo tool's git and worktree actions (issue 17) add about 800 B of schema.
const NATIVE_TOOLS_BUDGET_BYTES: usize = 13_500;

#[tokio::test]
async fn tools_list_for_claude_code_stays_within_its_byte_budget() {
    let daemon = Daemon::start().await;
    let params = json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2"}});
    let session = rpc(&daemon, "initialize", params, &[]).await.session().expect("a protocol session");
    let headers = [("mcp-session-id", session.as_str())];
    let reply =
        post_raw(&daemon, json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string(), &headers).await;
    let tools = reply.body["result"]["tools"].as_array().expect("tools").clone();
    let native: Vec<&Value> = tools.iter().filter(|t| NATIVE.contains(&t["name"].as_str().unwrap_or(""))).collect();
    assert_eq!(native.len(), NATIVE.len(), "{tools:?}");
    let bytes: usize = native.iter().map(|t| t.to_string().len()).sum();
    eprintln!("tools/list: {} B in all, {bytes} B for {NATIVE:?}", reply.body.to_string().len());
    assert!(bytes <= NATIVE_TOOLS_BUDGET_BYTES, "the native tools take {bytes} B of tools/list");
}
