#![allow(dead_code)] // each bench uses part of this module
//! What the daemon-driving benches share: start the release `tuicd` on a fresh config dir and
//! wait until its socket answers.

pub(crate) mod http1;
pub(crate) mod raw_ws;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long a started daemon may take to accept on its socket.
const START_DEADLINE: Duration = Duration::from_secs(30);

pub(crate) struct Daemon {
    pub child: tokio::process::Child,
    pub socket: PathBuf,
    /// The daemon's stderr (its log), kept in the config dir.
    pub log: PathBuf,
    /// The config dir, removed with the daemon's files when dropped.
    _dir: tempfile::TempDir,
}

/// Starts `tuicd` (another build with `TUIC_BENCH_TUICD`) with `RUST_LOG=warn` (unless `env` sets
/// it) plus `env`, its log in a file, and waits until its socket accepts.
pub(crate) async fn start_daemon(env: &[(&str, String)]) -> Daemon {
    let binary = std::env::var("TUIC_BENCH_TUICD").unwrap_or_else(|_| env!("CARGO_BIN_EXE_tuicd").to_owned());
    start_daemon_binary(&binary, env).await
}

/// [`start_daemon`] with the daemon build at `binary`.
pub(crate) async fn start_daemon_binary(binary: &str, env: &[(&str, String)]) -> Daemon {
    let dir = tempfile::Builder::new().prefix("tuic-bench").tempdir().unwrap();
    let log = dir.path().join("tuicd.log");
    let mut command = tokio::process::Command::new(binary);
    // Benches kill their daemons: no keeper keeps the sessions' programs running after them.
    command.arg("--config-dir").arg(dir.path()).env("RUST_LOG", "warn").env("TUIC_KEEPER", "off");
    for (key, value) in env {
        command.env(key, value);
    }
    let stderr = std::fs::File::create(&log).expect("create the daemon log");
    let child = command.stdin(Stdio::null()).stderr(stderr).kill_on_drop(true).spawn().expect("spawn tuicd");
    let socket = dir.path().join("mcp.sock");
    wait_for("tuicd", || std::os::unix::net::UnixStream::connect(&socket).is_ok()).await;
    Daemon { child, socket, log, _dir: dir }
}

/// Polls `ready` until it holds, failing with `what` after [`START_DEADLINE`].
pub(crate) async fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < START_DEADLINE, "{what} not ready");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The middle value (the upper one of an even count), sorting `values` in place.
pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
