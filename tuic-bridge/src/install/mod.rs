//! `tuic-bridge install --client claude|codex|gemini|cursor`: adds tuic-bridge to a person's own
//! agent CLI config, so the agents they start reach tuicd. One entry, named `tuic`, whose command
//! is this executable's absolute path; re-running after moving the binary replaces it, re-running
//! with nothing to change writes nothing. The change is shown as a diff before it is written. A
//! file that does not parse is refused and left as it was: overwriting it would lose what the
//! person meant to write there.

mod diff;
mod file;
mod json;
mod json_config;
mod toml_config;

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The agent CLI whose MCP config gets the entry.
    #[arg(long, value_enum)]
    client: Client,
    /// Show the change and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The MCP server's name in the config.
    #[arg(long, default_value = "tuic")]
    name: String,
    /// The command the client starts (default: this executable's absolute path).
    #[arg(long, value_name = "PATH")]
    command: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Client {
    /// Claude Code: ~/.claude.json
    Claude,
    /// Codex: $CODEX_HOME/config.toml, else ~/.codex/config.toml
    Codex,
    /// Gemini CLI: ~/.gemini/settings.json
    Gemini,
    /// Cursor: ~/.cursor/mcp.json
    Cursor,
}

/// What an edit does to the entry.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Change {
    Unchanged,
    Added,
    Replaced,
}

/// A config's new text and what changed in it.
#[derive(Debug)]
struct Edit {
    change: Change,
    text: String,
}

impl Edit {
    fn unchanged(text: &str) -> Self {
        Edit { change: Change::Unchanged, text: text.to_owned() }
    }
}

/// Why an existing file cannot be edited: it does not parse, or has an unexpected shape.
#[derive(Debug)]
struct Refusal(String);

#[derive(Debug, thiserror::Error)]
enum Error {
    #[error("HOME is not set, so there is no home directory to find {0} in")]
    NoHome(&'static str),
    #[error("cannot find this executable's own path ({0}); pass --command PATH")]
    OwnPath(io::Error),
    #[error("the command path {0} is not valid UTF-8, which the config cannot hold")]
    NotUtf8(PathBuf),
    #[error("--name must not be empty")]
    EmptyName,
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{path}: {detail}\nthe file is left as it was; fix it (or move it away) and run this again")]
    Refused { path: PathBuf, detail: String },
    #[error("cannot write {path}: {source}; the old file is unchanged")]
    Write { path: PathBuf, source: io::Error },
}

pub(crate) fn run(args: &Args) -> ExitCode {
    match install(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tuic-bridge install: {e}");
            ExitCode::FAILURE
        }
    }
}

fn install(args: &Args) -> Result<(), Error> {
    if args.name.is_empty() {
        return Err(Error::EmptyName);
    }
    let command = command_path(args.command.as_deref())?;
    let path = config_path(args.client)?;
    let path = file::resolve(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
    let old = file::read(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
    let edit = edit(args.client, old.as_deref(), &args.name, &command)
        .map_err(|Refusal(detail)| Error::Refused { path: path.clone(), detail })?;
    let shown = path.display();
    match edit.change {
        Change::Unchanged => {
            println!("already installed: {shown}");
            return Ok(());
        }
        Change::Added => println!("adding MCP server \"{}\" to {shown}:", args.name),
        Change::Replaced => println!("replacing the existing, different MCP server \"{}\" in {shown}:", args.name),
    }
    print!("{}", diff::render(old.as_deref().unwrap_or_default(), &edit.text));
    if args.dry_run {
        println!("dry run: nothing written");
        return Ok(());
    }
    file::write(&path, &edit.text).map_err(|source| Error::Write { path: path.clone(), source })?;
    println!("wrote {shown}");
    Ok(())
}

fn edit(client: Client, old: Option<&str>, name: &str, command: &str) -> Result<Edit, Refusal> {
    match client {
        Client::Claude => json_config::edit(old, name, json_config::claude_entry(command)),
        Client::Gemini | Client::Cursor => json_config::edit(old, name, json_config::plain_entry(command)),
        Client::Codex => toml_config::edit(old, name, command),
    }
}

/// `--command` as given, else this executable with symlinks resolved: the client starts it from
/// its own working directory and PATH, so only an absolute path is sure to find it.
fn command_path(given: Option<&Path>) -> Result<String, Error> {
    let path = match given {
        Some(path) => path.to_owned(),
        None => std::env::current_exe().and_then(std::fs::canonicalize).map_err(Error::OwnPath)?,
    };
    path.to_str().map(str::to_owned).ok_or(Error::NotUtf8(path))
}

fn config_path(client: Client) -> Result<PathBuf, Error> {
    if let (Client::Codex, Some(codex_home)) = (client, env_path("CODEX_HOME")) {
        return Ok(codex_home.join("config.toml"));
    }
    let relative = match client {
        Client::Claude => ".claude.json",
        Client::Codex => ".codex/config.toml",
        Client::Gemini => ".gemini/settings.json",
        Client::Cursor => ".cursor/mcp.json",
    };
    Ok(env_path("HOME").ok_or(Error::NoHome(relative))?.join(relative))
}

/// An environment variable as a path; unset and empty are the same.
fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from)
}
