//! The network side: a tokio runtime on its own thread polls the daemon and executes commands
//! from the UI. The UI never blocks on IO; it reads [`Snapshot`] under a short lock.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use proto::Health;
use serde_json::Value;
use tokio::sync::mpsc;

/// How often the session list and the selected session's text are refreshed.
const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Per-request deadline, so a hung daemon shows as unreachable instead of freezing updates.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Commands queued from the UI; a burst beyond it is dropped with a visible error.
const COMMAND_QUEUE: usize = 64;

/// The default instance's socket, by the daemon's own rules (`proto::paths`).
pub(crate) fn default_socket() -> PathBuf {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let config_dir = proto::paths::config_dir_from(xdg.as_deref(), home.as_deref());
    proto::paths::socket_path(
        &config_dir,
        None,
        &proto::paths::short_socket_dir(&std::env::temp_dir(), rustix::process::getuid().as_raw()),
    )
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    pub socket: String,
    pub health: Option<Health>,
    pub error: Option<String>,
    /// `GET /sessions` as returned (kept as JSON so new fields show up without a GUI release).
    pub sessions: Vec<Value>,
    pub selected: Option<String>,
    pub screen_text: String,
}

#[derive(Debug)]
pub(crate) enum Command {
    Select(String),
    Write { session_id: String, data: String },
    Create,
}

#[derive(Clone)]
pub(crate) struct Handle {
    pub snapshot: Arc<Mutex<Snapshot>>,
    commands: mpsc::Sender<Command>,
    repaint: Arc<Mutex<Option<eframe::egui::Context>>>,
}

impl Handle {
    pub(crate) fn send(&self, command: Command) {
        if self.commands.try_send(command).is_err() {
            self.snapshot.locked().error = Some("too many pending commands".into());
        }
    }

    pub(crate) fn set_context(&self, ctx: &eframe::egui::Context) {
        *self.repaint.locked() = Some(ctx.clone());
    }
}

pub(crate) fn spawn(socket: PathBuf) -> Handle {
    let snapshot = Arc::new(Mutex::new(Snapshot { socket: socket.display().to_string(), ..Default::default() }));
    let (commands, rx) = mpsc::channel(COMMAND_QUEUE);
    let handle = Handle { snapshot, commands, repaint: Arc::default() };
    let worker = handle.clone();
    std::thread::Builder::new()
        .name("tuic-net".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
            match runtime {
                Ok(rt) => rt.block_on(run(worker, socket, rx)),
                Err(e) => worker.snapshot.locked().error = Some(e.to_string()),
            }
        })
        .ok();
    handle
}

async fn run(handle: Handle, socket: PathBuf, mut commands: mpsc::Receiver<Command>) {
    let client = match reqwest::Client::builder().unix_socket(socket).timeout(REQUEST_TIMEOUT).build() {
        Ok(c) => c,
        Err(e) => {
            handle.snapshot.locked().error = Some(e.to_string());
            return;
        }
    };
    let mut tick = tokio::time::interval(POLL_INTERVAL);
    loop {
        tokio::select! {
            _ = tick.tick() => refresh(&handle, &client).await,
            command = commands.recv() => match command {
                None => return,
                Some(command) => {
                    if let Err(e) = execute(&handle, &client, command).await {
                        handle.snapshot.locked().error = Some(e);
                    }
                    refresh(&handle, &client).await;
                }
            },
        }
        if let Some(ctx) = handle.repaint.locked().as_ref() {
            ctx.request_repaint();
        }
    }
}

fn url(path: &str) -> String {
    format!("http://tuic{path}")
}

async fn get_json(client: &reqwest::Client, path: &str) -> Result<Value, String> {
    let response = client.get(url(path)).send().await.map_err(|e| format!("tuicd unreachable: {e}"))?;
    let status = response.status();
    let body: Value = response.json().await.map_err(|e| e.to_string())?;
    if status.is_success() { Ok(body) } else { Err(body["error"].as_str().unwrap_or("request failed").to_owned()) }
}

async fn refresh(handle: &Handle, client: &reqwest::Client) {
    let health = get_json(client, "/health").await;
    let sessions = get_json(client, "/sessions").await;
    let selected = handle.snapshot.locked().selected.clone();
    let text = match &selected {
        Some(id) => get_json(client, &format!("/sessions/{id}/output?format=text")).await.ok(),
        None => None,
    };
    let mut snap = handle.snapshot.locked();
    match health.and_then(|h| serde_json::from_value::<Health>(h).map_err(|e| e.to_string())) {
        Ok(h) => {
            snap.health = Some(h);
            snap.error = None;
        }
        Err(e) => {
            snap.health = None;
            snap.error = Some(e);
        }
    }
    snap.sessions = sessions.ok().and_then(|v| v.as_array().cloned()).unwrap_or_default();
    // Show a terminal straight away rather than an empty pane.
    if snap.selected.is_none() {
        snap.selected = snap.sessions.first().and_then(|s| s["session_id"].as_str()).map(String::from);
    }
    if let Some(text) = text {
        snap.screen_text = text["data"].as_str().unwrap_or_default().to_owned();
    }
}

async fn execute(handle: &Handle, client: &reqwest::Client, command: Command) -> Result<(), String> {
    let check = |r: reqwest::Response| async move {
        if r.status().is_success() {
            Ok(())
        } else {
            let body: Value = r.json().await.unwrap_or_default();
            Err(body["error"].as_str().unwrap_or("request failed").to_owned())
        }
    };
    match command {
        Command::Select(id) => {
            let mut snap = handle.snapshot.locked();
            snap.selected = Some(id);
            snap.screen_text.clear();
            Ok(())
        }
        Command::Write { session_id, data } => {
            let r = client
                .post(url(&format!("/sessions/{session_id}/write")))
                .json(&serde_json::json!({ "data": data }))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            check(r).await
        }
        Command::Create => {
            let r =
                client.post(url("/sessions")).json(&serde_json::json!({})).send().await.map_err(|e| e.to_string())?;
            check(r).await
        }
    }
}

/// [`Mutex::lock`] that recovers the guard from a poisoned lock: the snapshot is plain data, and a
/// panicked worker must not freeze the window.
pub(crate) trait Recover<T> {
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T> Recover<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
