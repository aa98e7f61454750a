//! Pure checks for what an outside agent reads and runs through the `ai_terminal_*` tools:
//! secret redaction of every read (`redact`), the destructive-command check before
//! `run_command` (`command`), and what a person confirming a write sees (`visible`). No IO
//! beyond resolving symlinks of a command's targets.

pub(crate) mod command;
pub(crate) mod redact;
pub(crate) mod visible;
