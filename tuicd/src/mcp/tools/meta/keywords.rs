//! Search words for the native tools' actions beyond their descriptions: the verbs and nouns
//! agents use for the same thing ("kill" and "terminate", "what changed" and "diff", "spawn" and
//! "launch a claude"). Only the index reads them, so descriptions stay short for clients that
//! list every tool; each entry is a thesaurus of its action's meaning, not a list of queries.

/// (tool, action or `None` for a tool without actions, words).
const KEYWORDS: &[(&str, Option<&str>, &str)] = &[
    ("session", Some("list"), "terminals shells sessions ptys open running all mine"),
    ("session", Some("create"), "new open start run shell terminal program command pty directory folder cwd"),
    (
        "session",
        Some("input"),
        "type keys keystrokes press hit enter return ctrl control escape tab arrow raw shell interrupt",
    ),
    (
        "session",
        Some("submit"),
        "prompt instruct instruction instructions tell give agent turn ask claude codex gemini enter",
    ),
    (
        "session",
        Some("output"),
        "read printed output log text scrollback result results last recent tail see show build terminal",
    ),
    ("session", Some("status"), "state stuck waiting question asking busy doing agent"),
    ("session", Some("wait"), "wait until finish finished done complete exit exits idle block"),
    ("session", Some("resize"), "size rows cols wider narrower width height bigger smaller"),
    ("session", Some("close"), "close exit quit end hangup hang gracefully shut down"),
    ("session", Some("kill"), "kill terminate stop abort force runaway hung hanging stuck frozen process immediately"),
    ("session", Some("pause"), "pause suspend hold throttle"),
    ("session", Some("resume"), "resume continue unpause"),
    ("session", Some("process_stats"), "cpu memory ram rss usage resources load processes stats"),
    (
        "agent",
        Some("spawn"),
        "spawn launch start spin new another agent claude codex gemini opencode aider delegate subagent worker helper fix bug implement",
    ),
    ("agent", Some("detect"), "installed available which agent clis machine"),
    ("agent", Some("stats"), "count how many agents summary"),
    ("agent", Some("metrics"), "counters numbers since started"),
    ("agent", Some("register"), "register name identity myself announce join"),
    ("agent", Some("list_peers"), "peers who contacts others talk address agents"),
    ("agent", Some("send"), "send message note tell notify mail reply write other agent peer"),
    ("agent", Some("inbox"), "inbox new messages mail read check received unread"),
    ("agent", Some("wait"), "wait mail reply response message arrive block hear"),
    ("task", Some("get"), "task finished done result status check spawned delegated subagent outcome"),
    ("task", Some("cancel"), "cancel abandon stop tracking drop task delegated"),
    ("progress", None, "progress report log record step done finished milestone blocked stuck help journal update"),
    ("repo", Some("progress_list"), "journal progress entries history"),
    ("repo", Some("list"), "registered projects repos"),
    ("repo", Some("active"), "current repository which repo project here"),
    (
        "repo",
        Some("status"),
        "git status diff changes changed modified dirty uncommitted branch ahead behind commit staged working tree",
    ),
    ("repo", Some("worktree_list"), "worktrees linked"),
    ("repo", Some("worktree_create"), "new worktree create branch checkout isolate feature git"),
    ("repo", Some("worktree_remove"), "delete remove worktree clean up"),
    ("repo", Some("prs"), "pull requests prs pr ci checks github merge"),
    ("repo", Some("issues"), "issues github bugs tickets list open"),
    ("repo", Some("close_issue"), "close issue resolve github"),
    ("repo", Some("reopen_issue"), "reopen issue github"),
    ("ui", Some("toast"), "notify notification toast alert popup banner tell user"),
    ("ui", Some("tab"), "open web page url html browser view display document link gui"),
    ("ui", Some("confirm"), "confirm confirmation approve approval permission ask user human person yes consent allow"),
    ("ui", Some("screenshot"), "screenshot capture picture image window png gui"),
    ("config", Some("get"), "settings configuration read view current config"),
    ("config", Some("save"), "set update setting settings configuration modify enable disable turn"),
    ("config", Some("list_prompts"), "saved prompts library mine"),
    ("config", Some("load_prompt"), "load saved prompt library"),
    ("config", Some("save_prompt"), "save store prompt library"),
    ("debug", Some("logs"), "logs log daemon errors recent diagnostics troubleshoot"),
    ("debug", Some("help"), "usage guide help manual how use debug tool"),
    ("ai_terminal_read_screen", None, "screen read see look visible display"),
    ("ai_terminal_send_input", None, "type command enter"),
    ("ai_terminal_send_key", None, "press key special ctrl escape"),
    ("ai_terminal_wait_for", None, "wait appear pattern regex until"),
    ("ai_terminal_get_context", None, "orientation cwd branch"),
    ("ai_terminal_drive_agent", None, "drive turn agent prompt"),
    ("ai_terminal_run_command", None, "run execute shell command build test output capture"),
    ("ai_terminal_read_file", None, "read open view file contents cat"),
    ("ai_terminal_write_file", None, "write create new file save overwrite content"),
    ("ai_terminal_edit_file", None, "edit modify change replace line text fix file patch"),
    ("ai_terminal_list_files", None, "list files find glob directory tree repo"),
    (
        "ai_terminal_search_files",
        None,
        "search grep find text code codebase repo regex pattern occurrences function symbol",
    ),
];

/// The extra search words of a native tool's action (or of a tool without actions); empty for
/// anything else, upstream tools included.
pub(crate) fn of(tool: &str, action: Option<&str>) -> &'static str {
    KEYWORDS.iter().find(|(t, a, _)| *t == tool && *a == action).map_or("", |(_, _, words)| words)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_entry_names_a_native_tool_and_action() {
        let registry = crate::mcp::tools::registry();
        for (tool, action, _) in super::KEYWORDS {
            let def = registry.iter().find(|t| t.name == *tool).unwrap_or_else(|| panic!("{tool} is a native tool"));
            match action {
                Some(action) => assert!(def.actions.iter().any(|a| a.name == *action), "{tool} has {action}"),
                None => assert!(!def.takes_action, "{tool} takes no action"),
            }
        }
    }
}
