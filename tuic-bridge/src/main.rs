//! `tuic-bridge`: lets a stdio MCP client (Claude Code, Codex, ...) talk to tuicd. Newline
//! JSON-RPC on stdin/stdout, HTTP/1.1 to `/mcp` over the daemon's Unix socket. Logs go to stderr.
//! With no subcommand it is the bridge; `install` adds it to an agent CLI's MCP config.

mod bridge;
mod deadline;
mod http;
mod install;
mod limits;
mod paths;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "tuic-bridge", version, about = "stdio MCP bridge to the tuic daemon")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The daemon's socket (default: the instance's socket, see --instance and --config-dir).
    #[arg(long, env = "TUIC_SOCKET")]
    socket: Option<PathBuf>,
    /// A named tuicd instance (its short socket path in the temp dir).
    #[arg(long, env = "TUIC_INSTANCE")]
    instance: Option<String>,
    /// The default instance's config dir (default: $XDG_CONFIG_HOME/tuic, else ~/.config/tuic).
    #[arg(long, env = "TUIC_CONFIG_DIR")]
    config_dir: Option<PathBuf>,
    /// Liveness ping interval in ms (tests only; the default is 3000).
    #[arg(long, env = "TUIC_BRIDGE_PING_MS", hide = true)]
    ping_ms: Option<u64>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Add tuic-bridge to an agent CLI's MCP config (Claude Code, Codex, Gemini CLI, Cursor).
    Install(install::Args),
}

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    match cli.command.take() {
        Some(Command::Install(args)) => install::run(&args),
        None => run_bridge(cli),
    }
}

fn run_bridge(cli: Cli) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TUIC_BRIDGE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let socket = cli.socket.unwrap_or_else(|| {
        let dir = cli.config_dir.unwrap_or_else(paths::default_config_dir);
        paths::socket_path(&dir, cli.instance.as_deref())
    });
    let settings = bridge::Settings {
        socket,
        tuic_session: std::env::var("TUIC_SESSION").ok().filter(|s| !s.trim().is_empty()),
        ping_interval: cli.ping_ms.map(Duration::from_millis).unwrap_or(limits::PING_INTERVAL),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tuic-bridge: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(bridge::run(settings));
    ExitCode::SUCCESS
}
