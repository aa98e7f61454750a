//! The discovery bar on requests written the way agents ask (verbs, synonyms, the project's own
//! words for things), each with the tool and action it means.
//!
//! `TUNING` is what the index's keywords (`keywords.rs`) and scoring were tuned on. It grew in
//! rounds: each round's held-out set was written before it was first scored, checked once, then
//! joined `TUNING`. Checked once, the held-out sets ranked the meant action first for 17/22,
//! 27/33, 29/34 and 50/67 (this `HELD_OUT`, a third of the fixture), and in the top three for
//! 21/22, 32/33, 33/34 and 63/67. So the bar asked for (90% first, 100% in the top three) holds on
//! the requests the index was tuned on, and not yet on requests it was not: there, about 75-85%
//! first. The test holds both sets at what they reached, so a change that makes either worse fails.
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

const HELD_OUT: &[Request] = &[
    ("what files have I touched", "repo", Some("status"), false),
    ("show uncommitted work in this repo", "repo", Some("status"), false),
    ("am I behind the remote", "repo", Some("status"), false),
    ("compare my branch with origin", "repo", Some("status"), false),
    ("the dev server froze, terminate it", "session", Some("kill"), false),
    ("sigkill the session", "session", Some("kill"), false),
    ("abort the stuck process now", "session", Some("kill"), false),
    ("bring up a gemini agent to write docs", "agent", Some("spawn"), false),
    ("start a subagent that fixes the lint errors", "agent", Some("spawn"), false),
    ("create an opencode agent with this prompt", "agent", Some("spawn"), false),
    ("run claude on this task in a new terminal", "agent", Some("spawn"), false),
    ("check with the user before I delete the database", "ui", Some("confirm"), false),
    ("ask for the user's approval", "ui", Some("confirm"), true),
    ("does the user agree to proceed", "ui", Some("confirm"), false),
    ("let the user know the build finished", "ui", Some("toast"), false),
    ("pop a toast with a warning", "ui", Some("toast"), false),
    ("display a url in the gui", "ui", Some("tab"), false),
    ("capture the gui window as an image", "ui", Some("screenshot"), false),
    ("list sessions", "session", Some("list"), false),
    ("which terminals am I running", "session", Some("list"), false),
    ("start a shell running htop", "session", Some("create"), false),
    ("new terminal in /tmp", "session", Some("create"), false),
    ("send ctrl-d to the terminal", "session", Some("input"), false),
    ("press the up arrow key in the shell", "session", Some("input"), false),
    ("type y and enter", "session", Some("input"), false),
    ("submit this prompt to the agent", "session", Some("submit"), false),
    ("ask codex in tu-5 to add tests", "session", Some("submit"), false),
    ("what did the shell print", "session", Some("output"), false),
    ("tail the terminal output", "session", Some("output"), false),
    ("show me the scrollback of tu-1", "session", Some("output"), false),
    ("wait until the tests are done", "session", Some("wait"), false),
    ("wait for the agent to finish its turn", "session", Some("wait"), false),
    ("is claude busy or idle", "session", Some("status"), false),
    ("is the agent asking me something", "session", Some("status"), false),
    ("set the terminal to 40 rows", "session", Some("resize"), false),
    ("close the session politely", "session", Some("close"), false),
    ("pause output from that session", "session", Some("pause"), false),
    ("continue reading the paused session", "session", Some("resume"), false),
    ("cpu usage per terminal", "session", Some("process_stats"), false),
    ("detect installed agent clis", "agent", Some("detect"), false),
    ("how many agents are idle right now", "agent", Some("stats"), false),
    ("message my peer about the failing build", "agent", Some("send"), false),
    ("tell the other agent I'm done", "agent", Some("send"), false),
    ("do I have unread messages", "agent", Some("inbox"), false),
    ("check mail", "agent", Some("inbox"), false),
    ("who are my peers", "agent", Some("list_peers"), false),
    ("register under the name reviewer", "agent", Some("register"), false),
    ("block until someone messages me", "agent", Some("wait"), false),
    ("is the delegated task complete", "task", Some("get"), false),
    ("stop waiting on the spawned task", "task", Some("cancel"), false),
    ("note that I completed the refactor step", "progress", None, false),
    ("tell the supervisor I'm blocked on credentials", "progress", None, false),
    ("show the progress journal", "repo", Some("progress_list"), false),
    ("which repositories are registered", "repo", Some("list"), false),
    ("add a worktree for branch fix-123", "repo", Some("worktree_create"), false),
    ("show the linked worktrees", "repo", Some("worktree_list"), false),
    ("open pull requests", "repo", Some("prs"), false),
    ("list recent github issues", "repo", Some("issues"), false),
    ("close issue 17 on github", "repo", Some("close_issue"), false),
    ("turn off remote access in the settings", "config", Some("save"), false),
    ("save this prompt to my library", "config", Some("save_prompt"), false),
    ("recent daemon errors", "debug", Some("logs"), false),
    ("look at what is on the terminal screen", "ai_terminal_read_screen", None, true),
    ("execute make build and capture the output", "ai_terminal_run_command", None, true),
    ("open src/lib.rs and read it", "ai_terminal_read_file", None, true),
    ("find files named *.toml", "ai_terminal_list_files", None, true),
    ("search for the string TODO in the codebase", "ai_terminal_search_files", None, true),
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

#[test]
fn the_tuned_requests_rank_first_for_95_percent_and_in_the_top_3_for_all() {
    assert!(TUNING.len() + HELD_OUT.len() >= 40 && HELD_OUT.len() * 3 >= TUNING.len() + HELD_OUT.len());
    let (first, top3, report) = judge(TUNING);
    let total = TUNING.len();
    eprintln!("tuning: {first}/{total} first, {top3}/{total} in the top 3\n{report}");
    assert_eq!(top3, total, "every tuned request's meant action is in the top 3:\n{report}");
    assert!(first * 100 >= total * 95, "only {first} of {total} tuned requests rank the meant action first:\n{report}");
}

#[test]
fn the_held_out_requests_rank_no_worse_than_when_first_checked() {
    let (first, top3, report) = judge(HELD_OUT);
    let total = HELD_OUT.len();
    eprintln!("held out: {first}/{total} first, {top3}/{total} in the top 3\n{report}");
    assert!(first >= 50 && top3 >= 63, "held out: {first}/{total} first, {top3}/{total} in the top 3:\n{report}");
}
