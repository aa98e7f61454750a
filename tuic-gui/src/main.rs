//! `tuic-gui`: a desktop window onto a running `tuicd`: the sessions and their agents, the
//! terminals themselves, and the daemon's questions to the person. All network IO runs on a
//! background runtime ([`net`]); the UI thread only reads the latest snapshot.

mod charset;
mod clipboard;
mod fonts;
mod framelog;
mod grid;
mod keys;
mod links;
mod lock;
mod net;
mod target;
mod ui;

use std::path::PathBuf;

use clap::Parser;

use crate::target::{Remembered, Remote, Target};

#[derive(Debug, Parser)]
#[command(name = "tuic-gui", version, about = "Desktop window for tuicd")]
struct Cli {
    /// The daemon's socket (default: the remembered connection, else the default instance's socket).
    #[arg(long, env = "TUIC_SOCKET", conflicts_with = "url")]
    socket: Option<PathBuf>,
    /// A remote daemon: `http://host:port` or `https://host:port` (Basic Auth).
    #[arg(long, env = "TUIC_URL")]
    url: Option<String>,
    /// The remote user.
    #[arg(long, env = "TUIC_USER", requires = "url")]
    user: Option<String>,
    /// The remote password, or a token from `tuicd token create` (read from the environment;
    /// never written anywhere).
    #[arg(long = "password-env", default_value = "TUIC_PASSWORD", hide = true)]
    password_env: String,
    /// A PEM CA certificate to trust for `https://`.
    #[arg(long, env = "TUIC_CA_CERT")]
    ca_cert: Option<PathBuf>,
    /// Open these sessions as tabs at start (PTY id or alias; repeatable).
    #[arg(long = "open", value_name = "SESSION")]
    open: Vec<String>,
    /// Print the terminal grid's geometry and dialog buttons' positions on stdout (for tests).
    #[arg(long, hide = true)]
    print_geometry: bool,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // reqwest is built without a default TLS provider (keeps aws-lc-rs out of the tree).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config_dir = target::config_dir();
    let remembered = Remembered::load(&config_dir);
    let target = choose_target(&cli, &remembered);
    let handle = net::spawn(target.clone())?;
    let options = eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default().with_inner_size([1000.0, 640.0]).with_title("tuic"),
        // No blocking swap, as alacritty on X11: with vsync each swap holds the UI thread until the
        // next vertical blank, up to a refresh period added to every keystroke's echo. Frames are
        // drawn only when something changed and a terminal's grid is published at most every 8 ms,
        // so the frame rate stays bounded without it.
        glow_options: eframe::egui_glow::GlowConfiguration { vsync: false, ..Default::default() },
        ..Default::default()
    };
    let ui_options = ui::Options { print_geometry: cli.print_geometry, config_dir, target, open: cli.open };
    eframe::run_native(
        "tuic",
        options,
        Box::new(move |cc| {
            fonts::install(&cc.egui_ctx);
            Ok(Box::new(ui::TuicApp::new(handle, ui_options)))
        }),
    )
    .map_err(|e| anyhow::anyhow!("the window failed: {e}"))
}

/// The command line first, then the remembered connection, then the default socket.
fn choose_target(cli: &Cli, remembered: &Remembered) -> Target {
    // A token (TUIC_TOKEN) takes the password's place: it is sent as a bearer token.
    let password = std::env::var("TUIC_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
        .or_else(|| std::env::var(&cli.password_env).ok())
        .unwrap_or_default();
    if let Some(url) = &cli.url {
        return Target::Remote(Remote {
            url: url.clone(),
            user: cli.user.clone().or_else(|| remembered.user.clone()).unwrap_or_default(),
            password,
            ca_cert: cli.ca_cert.clone(),
        });
    }
    if let Some(socket) = &cli.socket {
        return Target::Socket(socket.clone());
    }
    if let (Some(url), Some(user)) = (&remembered.url, &remembered.user) {
        return Target::Remote(Remote {
            url: url.clone(),
            user: user.clone(),
            password,
            ca_cert: remembered.ca_cert.clone(),
        });
    }
    Target::Socket(remembered.socket.clone().unwrap_or_else(target::default_socket))
}
