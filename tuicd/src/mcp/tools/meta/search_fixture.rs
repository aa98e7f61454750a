//! The search quality bar, over the real registry: natural-language queries an agent would write,
//! each with the tool and action it means. The right one ranks first for all but three, and in
//! the top three for every one. A new tool adds its own queries here.

use super::ToolIndex;
use super::index::ToolDoc;
use crate::mcp::tools::registry;

/// (query, tool, action); `None` for a tool called without an action.
const QUERIES: &[(&str, &str, Option<&str>)] = &[
    ("type into a terminal", "session", Some("input")),
    ("wait until the agent is idle", "session", Some("wait")),
    ("list the open terminals", "session", Some("list")),
    ("start a new shell in a directory", "session", Some("create")),
    ("read what the terminal printed", "session", Some("output")),
    ("send a prompt to an agent's terminal and press enter", "session", Some("submit")),
    ("kill a session immediately", "session", Some("kill")),
    ("close a terminal", "session", Some("close")),
    ("change the terminal size", "session", Some("resize")),
    ("stop reading a session's output for a while", "session", Some("pause")),
    ("create a worktree", "repo", Some("worktree_create")),
    ("cpu and memory usage of the processes", "session", Some("process_stats")),
    ("is the agent waiting on a question", "session", Some("status")),
    ("press ctrl-c in a terminal", "session", Some("input")),
    ("read new output since the last cursor", "session", Some("output")),
    ("wait for a shell command to exit", "session", Some("wait")),
    ("launch a coding agent with a prompt", "agent", Some("spawn")),
    ("which agent CLIs are installed", "agent", Some("detect")),
    ("how many agents are running in each state", "agent", Some("stats")),
    ("ask the user to confirm", "ui", Some("confirm")),
    ("register my name as a peer", "agent", Some("register")),
    ("who else can I message", "agent", Some("list_peers")),
    ("send a message to another agent", "agent", Some("send")),
    ("read my messages", "agent", Some("inbox")),
    ("block until new mail arrives", "agent", Some("wait")),
    ("check whether a spawned task finished", "task", Some("get")),
    ("cancel a long running task", "task", Some("cancel")),
    ("report that I finished a step", "progress", None),
    ("tell the supervisor I am blocked and need help", "progress", None),
    ("read the project's progress journal", "repo", Some("progress_list")),
];

/// Where `query`'s expected pair ranks (1 is first), if at all.
fn rank(index: &ToolIndex, query: &str, tool: &str, action: Option<&str>) -> Option<usize> {
    index.ranked(query).iter().position(|(t, a, _)| t == tool && a.as_deref() == action).map(|p| p + 1)
}

#[test]
fn search_finds_the_meant_action_first_for_27_of_30_queries_and_in_the_top_3_for_all() {
    assert_eq!(QUERIES.len(), 30);
    // What an agent can search by default, with every tool `disabled_native_tools` could hide
    // shown (the ai_terminal family stays behind its own switch).
    let config = crate::config::AppConfig { disabled_native_tools: Vec::new(), ..Default::default() };
    let index =
        ToolIndex::build(crate::mcp::tools::enabled(registry(), &config).iter().map(|t| ToolDoc::native(t)).collect());
    let (mut first, mut top3) = (0, 0);
    let mut report = String::new();
    for (query, tool, action) in QUERIES {
        let rank = rank(&index, query, tool, *action);
        first += usize::from(rank == Some(1));
        if rank != Some(1) {
            let top: Vec<String> = index.ranked(query).iter().take(3).map(|(t, a, _)| format!("{t} {a:?}")).collect();
            report.push_str(&format!("{query:?} -> {tool} {action:?} ranks {rank:?}; top: {top:?}\n"));
        }
        top3 += usize::from(rank.is_some_and(|r| r <= 3));
    }
    eprintln!("{first}/30 first, {top3}/30 in the top 3\n{report}");
    assert_eq!(top3, 30, "every query's meant action is in the top 3:\n{report}");
    assert!(first >= 27, "only {first} of 30 queries rank the meant action first:\n{report}");
}
