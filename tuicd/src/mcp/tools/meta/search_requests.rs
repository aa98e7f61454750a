//! The discovery bar on requests written the way agents ask (verbs, synonyms, the project's own
//! words for things), each with the tool and action it means.
//!
//! `TUNING` is what the index's keywords (`keywords.rs`) and scoring were tuned on. It grew in
//! three rounds: each round's held-out set was written before it was first scored, checked once,
//! and then joined `TUNING`. Checked once, the held-out sets ranked the meant action first for
//! 17/22, 27/33 and 29/34 (this `HELD_OUT`), and in the top three for 21/22, 32/33 and 33/34: on
//! requests it was not tuned on, discovery finds the meant action first about 85% of the time.
//! The test holds the whole fixture to 90% first, and to the top three for all but the two that
//! miss it (named in the test), which are not tuned away.
use super::ToolIndex;
use super::index::ToolDoc;
use crate::mcp::tools::registry;

/// (request, tool, action, whether the `ai_terminal_*` tools are on); `None`: no action.
type Request = (&'static str, &'static str, Option<&'static str>, bool);

const TUNING: &[Request] = &[
    ("show me what changed in the repo", "repo", Some("status"), false),
    ("git diff", "repo", Some("status"), false),
    ("which files did I modify and not commit yet", "repo", Some("status"), false),
    ("stop a runaway process", "session", Some("kill"), false),
    ("kill the process in tu-2 right now", "session", Some("kill"), false),
    ("spawn a claude to fix the bug", "agent", Some("spawn"), false),
    ("start a new claude agent to fix the failing test", "agent", Some("spawn"), false),
    ("ask the user to confirm", "ui", Some("confirm"), true),
    ("ask the user to confirm before I force push", "ui", Some("confirm"), false),
    ("pop up a notification for the user", "ui", Some("toast"), false),
    ("open a web page in the gui", "ui", Some("tab"), false),
    ("take a screenshot of the window", "ui", Some("screenshot"), false),
    ("list my terminals", "session", Some("list"), false),
    ("open a new terminal in ~/src/app", "session", Some("create"), false),
    ("run npm test in a new shell", "session", Some("create"), false),
    ("read the last output of the build", "session", Some("output"), false),
    ("hit enter in the terminal", "session", Some("input"), false),
    ("send a prompt to the codex agent", "session", Some("submit"), false),
    ("wait for the build to finish", "session", Some("wait"), false),
    ("is the agent stuck on a question", "session", Some("status"), false),
    ("make the terminal wider", "session", Some("resize"), false),
    ("close the shell gracefully", "session", Some("close"), false),
    ("memory usage of each session", "session", Some("process_stats"), false),
    ("which coding agents are installed on this machine", "agent", Some("detect"), false),
    ("message the other agent that the API is ready", "agent", Some("send"), false),
    ("check my inbox", "agent", Some("inbox"), false),
    ("who can I talk to", "agent", Some("list_peers"), false),
    ("register myself so others can message me", "agent", Some("register"), false),
    ("wait for a reply from the reviewer agent", "agent", Some("wait"), false),
    ("did the spawned agent finish its task", "task", Some("get"), false),
    ("stop tracking the task I delegated", "task", Some("cancel"), false),
    ("log that I finished the migration step", "progress", None, false),
    ("I'm blocked and need help from the human", "progress", None, false),
    ("create a git worktree for the feature branch", "repo", Some("worktree_create"), false),
    ("delete the worktree", "repo", Some("worktree_remove"), false),
    ("list open pull requests and their CI", "repo", Some("prs"), false),
    ("show github issues", "repo", Some("issues"), false),
    ("close issue 42", "repo", Some("close_issue"), false),
    ("which repository am I in", "repo", Some("active"), false),
    ("change a setting in the config", "config", Some("save"), false),
    ("show the daemon's logs", "debug", Some("logs"), false),
    ("search the codebase for a function name", "ai_terminal_search_files", None, true),
    ("edit a line in main.rs", "ai_terminal_edit_file", None, true),
    ("run cargo test and give me the output", "ai_terminal_run_command", None, true),
    ("what did I change since the last commit", "repo", Some("status"), false),
    ("terminate the hung server in that session", "session", Some("kill"), false),
    ("launch another agent to review my PR", "agent", Some("spawn"), false),
    ("get the user's permission before deleting files", "ui", Some("confirm"), true),
    ("show a toast saying the deploy is done", "ui", Some("toast"), false),
    ("type ls into the shell", "session", Some("input"), false),
    ("read the terminal's recent output", "session", Some("output"), false),
    ("wait until claude is done", "session", Some("wait"), false),
    ("resize the pty to 120 columns", "session", Some("resize"), false),
    ("how much cpu are the sessions using", "session", Some("process_stats"), false),
    ("send a note to my orchestrator", "agent", Some("send"), false),
    ("any new messages for me", "agent", Some("inbox"), false),
    ("check on the task handle of the subagent", "task", Some("get"), false),
    ("record progress on the current step", "progress", None, false),
    ("make a new branch worktree", "repo", Some("worktree_create"), false),
    ("what's the CI status of my PRs", "repo", Some("prs"), false),
    ("reopen the issue", "repo", Some("reopen_issue"), false),
    ("what branch is the repo on and is it ahead of origin", "repo", Some("status"), false),
    ("load one of my saved prompts", "config", Some("load_prompt"), false),
    ("find all TODO comments in the code", "ai_terminal_search_files", None, true),
    ("write a new file with this content", "ai_terminal_write_file", None, true),
    ("list the files in src matching *.rs", "ai_terminal_list_files", None, true),
    ("diff my changes against main", "repo", Some("status"), false),
    ("are there uncommitted changes", "repo", Some("status"), false),
    ("kill that stuck shell", "session", Some("kill"), false),
    ("force quit the frozen program in tu-4", "session", Some("kill"), false),
    ("spin up a codex agent to write the tests", "agent", Some("spawn"), false),
    ("delegate the refactor to a new claude", "agent", Some("spawn"), false),
    ("ask the human whether to proceed", "ui", Some("confirm"), true),
    ("need a yes or no from the user", "ui", Some("confirm"), false),
    ("notify the user that tests passed", "ui", Some("toast"), false),
    ("show an html report to the user", "ui", Some("tab"), false),
    ("what terminals are open", "session", Some("list"), false),
    ("open a shell in the project directory", "session", Some("create"), false),
    ("press ctrl+c to interrupt", "session", Some("input"), false),
    ("tell the claude in tu-2 to run the linter", "session", Some("submit"), false),
    ("see what the command printed", "session", Some("output"), false),
    ("block until the agent goes idle", "session", Some("wait"), false),
    ("what state is the agent in", "session", Some("status"), false),
    ("stop capturing output from the noisy session", "session", Some("pause"), false),
    ("resume reading output", "session", Some("resume"), false),
    ("shut down the terminal I opened", "session", Some("close"), false),
    ("how much memory is tuicd using", "session", Some("process_stats"), false),
    ("which agent CLIs can I launch", "agent", Some("detect"), false),
    ("tell the frontend agent the schema changed", "agent", Some("send"), false),
    ("read my mail", "agent", Some("inbox"), false),
    ("list the peers I can message", "agent", Some("list_peers"), false),
    ("what did the subagent return", "task", Some("get"), false),
    ("report I'm stuck", "progress", None, false),
    ("remove the feature worktree", "repo", Some("worktree_remove"), false),
    ("list worktrees of this repo", "repo", Some("worktree_list"), false),
    ("open issues on github", "repo", Some("issues"), false),
    ("update the config to enable remote access", "config", Some("save"), false),
    ("grep for the error message across the repo", "ai_terminal_search_files", None, true),
    ("read the contents of Cargo.toml", "ai_terminal_read_file", None, true),
];

const HELD_OUT: &[Request] = &[
    ("what's changed on this branch", "repo", Some("status"), false),
    ("is my working tree clean", "repo", Some("status"), false),
    ("the test runner is hanging, kill it", "session", Some("kill"), false),
    ("end the process right away", "session", Some("kill"), false),
    ("start another claude on the docs task", "agent", Some("spawn"), false),
    ("hand this bug off to a codex agent", "agent", Some("spawn"), false),
    ("confirm with the user before merging", "ui", Some("confirm"), true),
    ("ask the person for approval", "ui", Some("confirm"), false),
    ("alert the user with a notification", "ui", Some("toast"), false),
    ("open this url for the user", "ui", Some("tab"), false),
    ("show all sessions", "session", Some("list"), false),
    ("create a terminal running python", "session", Some("create"), false),
    ("send the escape key", "session", Some("input"), false),
    ("give the agent in tu-1 its next instruction", "session", Some("submit"), false),
    ("get the latest lines the terminal printed", "session", Some("output"), false),
    ("wait for the command to exit", "session", Some("wait"), false),
    ("is the claude session waiting for an answer", "session", Some("status"), false),
    ("shrink the terminal to 24 rows", "session", Some("resize"), false),
    ("close tu-3", "session", Some("close"), false),
    ("ram used by each terminal", "session", Some("process_stats"), false),
    ("is codex installed", "agent", Some("detect"), false),
    ("reply to the reviewer's message", "agent", Some("send"), false),
    ("read the messages other agents sent me", "agent", Some("inbox"), false),
    ("which peers are registered", "agent", Some("list_peers"), false),
    ("wait for mail from my peers", "agent", Some("wait"), false),
    ("get the result of the delegated task", "task", Some("get"), false),
    ("cancel the task", "task", Some("cancel"), false),
    ("report that the step is done", "progress", None, false),
    ("create a worktree for a new branch", "repo", Some("worktree_create"), false),
    ("pull requests waiting for review", "repo", Some("prs"), false),
    ("close the github issue once fixed", "repo", Some("close_issue"), false),
    ("show the current configuration", "config", Some("get"), false),
    ("search the repo for uses of parse_config", "ai_terminal_search_files", None, true),
    ("replace a string in a source file", "ai_terminal_edit_file", None, true),
];

/// The index an agent searches: every native tool `disabled_native_tools` could hide shown, and
/// the `ai_terminal_*` family on or off.
fn index(ai_terminal: bool) -> ToolIndex {
    let config = crate::config::AppConfig {
        disabled_native_tools: Vec::new(),
        ai_terminal_mcp_enabled: ai_terminal,
        ..Default::default()
    };
    ToolIndex::build(crate::mcp::tools::enabled(registry(), &config).iter().map(|t| ToolDoc::native(t)).collect())
}

/// How many of `requests` rank their meant pair first and in the top three, and a line for each
/// that does not rank first.
fn judge(requests: &[Request]) -> (usize, usize, String) {
    let indexes = [index(false), index(true)];
    let (mut first, mut top3, mut report) = (0, 0, String::new());
    for (request, tool, action, ai_terminal) in requests {
        let ranked = indexes[usize::from(*ai_terminal)].ranked(request);
        let rank = ranked.iter().position(|(t, a, _)| t == tool && a.as_deref() == *action).map(|p| p + 1);
        first += usize::from(rank == Some(1));
        top3 += usize::from(rank.is_some_and(|r| r <= 3));
        if rank != Some(1) {
            let top: Vec<String> = ranked.iter().take(3).map(|(t, a, _)| format!("{t} {a:?}")).collect();
            report.push_str(&format!("{request:?} -> {tool} {action:?} ranks {rank:?}; top: {top:?}\n"));
        }
    }
    (first, top3, report)
}

/// The requests whose meant action is not in the top three: a rare word ("grep") outweighed by
/// common ones ("message", "repo"), and a request naming no verb of the tool ("instruction").
const MISSES_TOP_3: [&str; 2] =
    ["grep for the error message across the repo", "give the agent in tu-1 its next instruction"];

#[test]
fn realistic_requests_find_the_meant_action_first_for_90_percent_and_in_the_top_3_for_all_but_two() {
    assert!(TUNING.len() + HELD_OUT.len() >= 40 && HELD_OUT.len() >= 30);
    let all: Vec<Request> = TUNING.iter().chain(HELD_OUT).copied().collect();
    let (first, _, report) = judge(&all);
    let total = all.len();
    eprintln!("{first}/{total} first\n{report}");
    let outside: Vec<&str> = report
        .lines()
        .filter(|line| {
            !line.contains("ranks Some(1)") && !line.contains("ranks Some(2)") && !line.contains("ranks Some(3)")
        })
        .filter_map(|line| line.split('"').nth(1))
        .collect();
    assert_eq!(outside, MISSES_TOP_3, "the meant action is in the top 3 for every other request:\n{report}");
    assert!(first * 10 >= total * 9, "only {first} of {total} requests rank the meant action first:\n{report}");
    let (held_first, held_top3, _) = judge(HELD_OUT);
    assert!(held_first >= 29 && held_top3 >= 33, "the held-out set as first checked: {held_first}, {held_top3}");
}
