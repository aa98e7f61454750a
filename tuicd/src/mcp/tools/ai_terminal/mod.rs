//! The `ai_terminal_*` tools: an outside MCP client (Claude Code, Cursor, ...) watches a tuicd
//! terminal and acts in it. Hidden and refused unless `ai_terminal_mcp_enabled`. Every read is
//! secret-redacted; every write asks the person through the confirm flow first (refused at once
//! when no UI client can answer) and is refused while an agent loop drives the session.

mod common;
mod drive;
mod files;
mod find;
mod observe;
mod run;
mod sandbox;

use super::ToolDef;
use super::action::action;

/// The prefix every tool of this family carries; `ai_terminal_mcp_enabled` gates them all.
pub(crate) const PREFIX: &str = "ai_terminal_";

pub(crate) fn is_ai_terminal(name: &str) -> bool {
    name.starts_with(PREFIX)
}

macro_rules! single {
    ($ident:ident, $name:literal, $description:literal, $params:ty => $mode:ident $handler:path, loopback: $loopback:literal, blocks: $blocks:literal) => {
        pub(crate) static $ident: ToolDef = ToolDef {
            name: $name,
            description: $description,
            takes_action: false,
    actions: &[action!($name, "call", $params => $mode $handler, loopback: $loopback, blocks: $blocks)],
        };
    };
}

single!(READ_SCREEN, "ai_terminal_read_screen",
    "Read a terminal's text (secrets redacted). shell_state busy means working; awaiting_input means it waits on a question. Pass cursor back as since_cursor for only new lines.",
    observe::ReadScreen => sync observe::read_screen, loopback: false, blocks: false);
single!(SEND_INPUT, "ai_terminal_send_input",
    "Type a command into a terminal and press Enter. Asks the user to confirm first.",
    drive::SendInput => async drive::send_input, loopback: true, blocks: true);
single!(SEND_KEY, "ai_terminal_send_key",
    "Press one special key in a terminal. Asks the user to confirm first.",
    drive::SendKey => async drive::send_key, loopback: true, blocks: true);
single!(WAIT_FOR, "ai_terminal_wait_for",
    "Wait until a regex appears on a terminal's screen, or until its screen stops changing.",
    observe::WaitFor => async observe::wait_for, loopback: false, blocks: true);
single!(GET_STATE, "ai_terminal_get_state",
    "A terminal's full state: shell and agent state, cwd, size, terminal_mode.",
    observe::Target => sync observe::get_state, loopback: false, blocks: false);
single!(GET_CONTEXT, "ai_terminal_get_context",
    "Cheap orientation on a terminal: shell_state, cwd, git_branch, last_exit_code, agent_type, terminal_mode.",
    observe::Target => sync observe::get_context, loopback: false, blocks: false);
single!(DRIVE_AGENT, "ai_terminal_drive_agent",
    "One turn in one call: send a command (to an agent as a submit), wait for idle or wait_pattern, read the screen. Asks the user to confirm a command first.",
    drive::DriveAgent => async drive::drive_agent, loopback: true, blocks: true);
single!(RUN_COMMAND, "ai_terminal_run_command",
    "Run a shell command in the terminal's repository and capture its output (redacted). Runs under a Landlock sandbox (writes only inside the repository and a private temp dir); asks the user to confirm the whole command first.",
    run::RunCommand => async run::run_command, loopback: true, blocks: true);
single!(READ_FILE, "ai_terminal_read_file",
    "Read a text file in the terminal's repository by pages of lines (secrets redacted; line numbers count the redacted text). Binary files and files over 10 MB are refused.",
    files::ReadFile => async files::read_file, loopback: false, blocks: true);
single!(WRITE_FILE, "ai_terminal_write_file",
    "Create or overwrite a text file in the terminal's repository, atomically. Asks the user to confirm first.",
    files::WriteFile => async files::write_file, loopback: true, blocks: true);
single!(EDIT_FILE, "ai_terminal_edit_file",
    "Replace old_string with new_string in a file of the terminal's repository; old_string must be unique unless replace_all. Asks the user to confirm first.",
    files::EditFile => async files::edit_file, loopback: true, blocks: true);
single!(LIST_FILES, "ai_terminal_list_files",
    "List files matching a glob in the terminal's repository, honouring .gitignore (at most 500).",
    find::ListFiles => async find::list_files, loopback: false, blocks: true);
single!(SEARCH_FILES, "ai_terminal_search_files",
    "Regex search of the files in the terminal's repository, honouring .gitignore: at most 50 matches with context lines (secrets redacted).",
    find::SearchFiles => async find::search_files, loopback: false, blocks: true);
