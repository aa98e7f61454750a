//! `tuicd`: serve in the foreground, or `status` / `hash-password` / `upstream authorize` / `token`.

mod cli_token;
mod cli_upgrade;
mod cli_upstream;

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tuicd::{Daemon, Options, limits, paths};

#[derive(Debug, Parser)]
#[command(
    name = "tuicd",
    version,
    about = "The tuic daemon: shared terminals for AI agents and the people who supervise them"
)]
struct Cli {
    /// Config directory (default: $XDG_CONFIG_HOME/tuic, else ~/.config/tuic).
    #[arg(long, global = true, env = "TUIC_CONFIG_DIR")]
    config_dir: Option<PathBuf>,
    /// Named instance: gets its own short socket path in the temp dir.
    #[arg(long, global = true, env = "TUIC_INSTANCE")]
    instance: Option<String>,
    /// Overrides services.server.port for this process without saving it.
    #[arg(long, env = "TUIC_PORT", hide = true)]
    port: Option<u16>,
    /// Outer request deadline in ms (tests only; the default is 301 s).
    #[arg(long, env = "TUIC_REQUEST_TIMEOUT_MS", hide = true)]
    request_timeout_ms: Option<u64>,
    /// Idle MCP protocol session lifetime in ms (tests only; the default is one hour).
    #[arg(long, env = "TUIC_MCP_SESSION_TTL_MS", hide = true)]
    mcp_session_ttl_ms: Option<u64>,
    /// Upstream MCP health-check interval in ms (tests only; the default is 60 s).
    #[arg(long, env = "TUIC_UPSTREAM_HEALTH_INTERVAL_MS", hide = true)]
    upstream_health_interval_ms: Option<u64>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ask the running daemon for its health over its socket (exit 1 when none answers).
    Status,
    /// Upgrade the running daemon in place to the binary now on disk, keeping every session and
    /// its programs running (also on SIGUSR2). Refused, with the reason, by an incompatible binary.
    Upgrade,
    /// Read a password from stdin and print its bcrypt hash (for services.auth.password_hash).
    HashPassword {
        /// bcrypt cost (4..=31).
        #[arg(long, default_value_t = limits::BCRYPT_COST, value_parser = clap::value_parser!(u32).range(4..=31))]
        cost: u32,
    },
    /// Upstream MCP servers of the running daemon.
    Upstream {
        #[command(subcommand)]
        command: UpstreamCommand,
    },
    /// Raw PTY captures (`POST /diagnostics/capture`).
    Capture {
        #[command(subcommand)]
        command: CaptureCommand,
    },
    /// Scoped, revocable tokens for remote access (a phone, another machine, an agent over TCP).
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
}

#[derive(Debug, Subcommand)]
enum CaptureCommand {
    /// Print a `.tcap` capture as an asciicast v2 recording (asciinema play, asciinema cat).
    Export {
        file: PathBuf,
        /// The terminal's width in the recording's header.
        #[arg(long, default_value_t = 80)]
        cols: u16,
        /// The terminal's height in the recording's header.
        #[arg(long, default_value_t = 24)]
        rows: u16,
    },
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Make a token and print it once (with the phone link and its QR code when remote access is on).
    Create {
        /// observe (read), drive (also write and, a person, answer confirmations) or admin (also configure).
        #[arg(long)]
        scope: String,
        /// Only this session (id or alias), at --scope or at `ID=observe` / `ID=drive`; repeatable.
        #[arg(long = "session", value_name = "ID[=SCOPE]")]
        sessions: Vec<String>,
        /// An agent's token: never answers confirmations, never admin.
        #[arg(long)]
        agent: bool,
        /// Lifetime: 90s, 30m, 12h, 7d, or never (default 30d).
        #[arg(long)]
        ttl: Option<String>,
        /// What `token list` calls it (e.g. phone).
        #[arg(long)]
        name: Option<String>,
        /// Do not draw the phone link's QR code.
        #[arg(long)]
        no_qr: bool,
    },
    /// The tokens that exist (never their secrets).
    List,
    /// Revoke a token: its requests and open streams are refused at once.
    Revoke { id: String },
}

#[derive(Debug, Subcommand)]
enum UpstreamCommand {
    /// Start an OAuth authorization of upstream NAME: print the URL to open, then wait until the
    /// upstream is ready (or the authorization fails or expires).
    Authorize { name: String },
}

fn main() -> ExitCode {
    // The sandbox launcher (`tuicd sandbox-exec ... -- cmd`) restricts itself and becomes the
    // command before anything else starts: no runtime, no logging, no config.
    if std::env::args_os().nth(1).is_some_and(|a| a == tuicd::sandbox::SUBCOMMAND) {
        return tuicd::sandbox::exec_main(std::env::args_os().skip(2));
    }
    if std::env::args_os().nth(1).is_some_and(|a| a == tuicd::CHECK_SUBCOMMAND) {
        return tuicd::handover_check_main();
    }
    if std::env::args_os().nth(1).is_some_and(|a| a == tuicd::KEEPER_SUBCOMMAND) {
        return tuicd::keeper_main(std::env::args_os().skip(2));
    }
    // While this is the process's only thread: an upgrade in place names its snapshot here, and
    // systemd its notify socket and the descriptors it kept.
    tuicd::take_handover_env();
    tuicd::take_systemd_env();
    let cli = Cli::parse();
    tracing_subscriber::registry()
        .with(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
        )
        .with(tuicd::log_ring_layer())
        .init();
    let config_dir = cli.config_dir.clone().unwrap_or_else(paths::default_config_dir);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tuicd: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match cli.command {
        Some(Command::HashPassword { cost }) => hash_password(cost),
        Some(Command::Upstream { command: UpstreamCommand::Authorize { name } }) => {
            runtime.block_on(cli_upstream::authorize(&paths::socket_path(&config_dir, cli.instance.as_deref()), &name))
        }
        Some(Command::Capture { command: CaptureCommand::Export { file, cols, rows } }) => {
            match tuicd::tcap_to_asciicast(&file, cols, rows) {
                Ok(cast) => {
                    print!("{cast}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("tuicd: {}: {e}", file.display());
                    ExitCode::FAILURE
                }
            }
        }
        Some(Command::Token { command }) => {
            let socket = paths::socket_path(&config_dir, cli.instance.as_deref());
            runtime.block_on(async {
                match command {
                    TokenCommand::Create { scope, sessions, agent, ttl, name, no_qr } => {
                        cli_token::create(&socket, cli_token::Create { name, scope, sessions, agent, ttl, qr: !no_qr })
                            .await
                    }
                    TokenCommand::List => cli_token::list(&socket).await,
                    TokenCommand::Revoke { id } => cli_token::revoke(&socket, &id).await,
                }
            })
        }
        Some(Command::Upgrade) => {
            runtime.block_on(cli_upgrade::upgrade(&paths::socket_path(&config_dir, cli.instance.as_deref())))
        }
        Some(Command::Status) => runtime.block_on(status(paths::socket_path(&config_dir, cli.instance.as_deref()))),
        None => {
            let options = Options {
                config_dir,
                instance: cli.instance,
                request_timeout: cli
                    .request_timeout_ms
                    .map_or(limits::REQUEST_TIMEOUT, std::time::Duration::from_millis),
                port_override: cli.port,
                mcp_session_ttl: cli
                    .mcp_session_ttl_ms
                    .map_or(limits::MCP_SESSION_IDLE_TTL, std::time::Duration::from_millis),
                upstream_health_interval: cli
                    .upstream_health_interval_ms
                    .map_or(limits::UPSTREAM_HEALTH_INTERVAL, std::time::Duration::from_millis),
            };
            runtime.block_on(serve(options))
        }
    };
    // Tasks still running after the drain (a blocking call, a stuck stream) do not hold the exit.
    let stopping = std::time::Instant::now();
    runtime.shutdown_timeout(limits::SHUTDOWN_TASKS);
    if stopping.elapsed() >= limits::SHUTDOWN_TASKS {
        tracing::warn!(deadline = ?limits::SHUTDOWN_TASKS, "tasks still running at exit were abandoned");
    }
    code
}

async fn serve(options: Options) -> ExitCode {
    let daemon = match Daemon::bind(options).await {
        Ok(d) => d,
        Err(e) => {
            eprintln!("tuicd: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    match daemon.serve(shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tuicd: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM received"),
        _ = int.recv() => tracing::info!("SIGINT received"),
    }
}

fn hash_password(cost: u32) -> ExitCode {
    let mut password = String::new();
    let stdin = std::io::stdin();
    let read = if std::io::IsTerminal::is_terminal(&stdin) {
        eprint!("password: ");
        let _ = std::io::stderr().flush();
        stdin.lock().read_line(&mut password).map(|_| ())
    } else {
        stdin.lock().read_to_string(&mut password).map(|_| ())
    };
    if let Err(e) = read {
        eprintln!("tuicd: cannot read the password: {e}");
        return ExitCode::FAILURE;
    }
    let password = password.trim_end_matches(['\r', '\n']);
    if password.is_empty() {
        eprintln!("tuicd: the password is empty");
        return ExitCode::FAILURE;
    }
    if password.len() > limits::BCRYPT_MAX_PASSWORD_BYTES {
        eprintln!(
            "tuicd: the password is {} bytes, longer than {} bytes; bcrypt would ignore the rest, so choose a shorter one",
            password.len(),
            limits::BCRYPT_MAX_PASSWORD_BYTES
        );
        return ExitCode::FAILURE;
    }
    match bcrypt::hash(password, cost) {
        Ok(hash) => {
            println!("{hash}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tuicd: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A real request over the socket: a stale file or a hung peer reads as "not running".
async fn status(socket: PathBuf) -> ExitCode {
    let ask = async {
        let mut stream = tokio::net::UnixStream::connect(&socket).await?;
        stream.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await?;
        Ok::<_, std::io::Error>(response)
    };
    match tokio::time::timeout(limits::SOCKET_PROBE_TIMEOUT, ask).await {
        Ok(Ok(response)) => {
            let text = String::from_utf8_lossy(&response);
            let ok = text.starts_with("HTTP/1.1 200");
            let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
            if ok {
                println!("{}", body.trim());
                ExitCode::SUCCESS
            } else {
                eprintln!("tuicd at {} answered: {}", socket.display(), text.lines().next().unwrap_or(""));
                ExitCode::FAILURE
            }
        }
        Ok(Err(e)) => {
            eprintln!("no tuicd running at {}: {e}", socket.display());
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("tuicd at {} did not answer within {:?}", socket.display(), limits::SOCKET_PROBE_TIMEOUT);
            ExitCode::FAILURE
        }
    }
}
