//! `tuic-gui`: a desktop window onto a running `tuicd`. It lists the daemon's terminals, shows the
//! selected one's screen text and sends typed lines to it. All network IO runs on a background
//! thread ([`client`]); the UI thread only reads the latest snapshot.

mod client;
mod view;

use std::path::PathBuf;

use clap::Parser;

#[derive(Debug, Parser)]
#[command(name = "tuic-gui", version, about = "Desktop window for tuicd")]
struct Cli {
    /// The daemon's socket (default: the default instance's socket in the config dir).
    #[arg(long, env = "TUIC_SOCKET")]
    socket: Option<PathBuf>,
}

fn main() -> eframe::Result {
    let cli = Cli::parse();
    // reqwest is built without a default TLS provider (keeps aws-lc-rs out of the tree).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let socket = cli.socket.unwrap_or_else(client::default_socket);
    let handle = client::spawn(socket);
    let options = eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default().with_inner_size([960.0, 600.0]).with_title("tuic"),
        ..Default::default()
    };
    eframe::run_native("tuic", options, Box::new(move |_cc| Ok(Box::new(view::TuicApp::new(handle)))))
}
