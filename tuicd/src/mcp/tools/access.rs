//! What a token's holder needs for each MCP action: `observe` for the actions listed here
//! (they read), `drive` for every other (they write, spawn, send, run or call out), on the
//! session the call names in `session_id`, else across the daemon. Unlisted means drive, so a
//! new action is refused to a watcher until it is listed here as a read.

use serde_json::{Map, Value};

use super::{CallContext, ToolError};

/// The actions that only read (tool, action); ai_terminal's single-action tools are `call`.
const READS: &[(&str, &str)] = &[
    ("session", "list"),
    ("session", "output"),
    ("session", "status"),
    ("session", "wait"),
    ("session", "process_stats"),
    ("agent", "detect"),
    ("agent", "stats"),
    ("agent", "metrics"),
    ("task", "get"),
    // An agent's report of its own progress: the journal entry is the caller's.
    ("progress", "report"),
    ("repo", "progress_list"),
    ("repo", "list"),
    ("repo", "active"),
    ("repo", "status"),
    ("repo", "worktree_list"),
    ("repo", "prs"),
    ("repo", "issues"),
    ("config", "get"),
    ("config", "list_ai_prompts"),
    ("config", "load_ai_prompt"),
    ("config", "list_prompts"),
    ("config", "load_prompt"),
    ("debug", "agent_detection"),
    ("debug", "logs"),
    ("debug", "sessions"),
    ("debug", "help"),
    ("plugin_dev_guide", "guide"),
    ("search_tools", "search"),
    ("get_tool_schema", "schema"),
    // The tool it calls is checked in its own turn.
    ("call_tool", "call"),
    ("ai_terminal_read_screen", "call"),
    ("ai_terminal_wait_for", "call"),
    ("ai_terminal_get_state", "call"),
    ("ai_terminal_get_context", "call"),
    ("ai_terminal_read_file", "call"),
    ("ai_terminal_list_files", "call"),
    ("ai_terminal_search_files", "call"),
];

/// Refuses the action to a token that lacks what it needs; the owner passes.
pub(super) fn authorize(
    ctx: &CallContext,
    tool: &str,
    action: &str,
    args: &Map<String, Value>,
) -> Result<(), ToolError> {
    if ctx.caller.grant.token_id().is_none() {
        return Ok(());
    }
    let writes = !READS.contains(&(tool, action));
    let session =
        args.get("session_id").and_then(Value::as_str).map(|reference| ctx.app.sessions.canonical_id(reference));
    ctx.caller
        .grant
        .allows_action(writes, session.as_deref())
        .map_err(|m| ToolError::new(format!("{tool} action={action}: {m}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_read_is_a_real_action_that_is_not_loopback_only() {
        let mut tools: Vec<&super::super::ToolDef> = super::super::registry().to_vec();
        tools.extend(super::super::meta::meta_registry().iter().copied());
        for (tool, action) in READS {
            let def = tools.iter().find(|t| t.name == *tool).unwrap_or_else(|| panic!("no tool {tool}"));
            let action =
                def.actions.iter().find(|a| a.name == *action).unwrap_or_else(|| panic!("no {tool} action={action}"));
            assert!(!action.loopback_only, "{tool} action={} writes (loopback-only), so it is not a read", action.name);
        }
    }
}
