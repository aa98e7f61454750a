//! The network side: a tokio runtime on its own thread. It polls the daemon, follows `/events`,
//! runs every request the UI asks for and every open terminal's stream. The UI never blocks on
//! IO: it reads [`Snapshot`] under a short lock and queues [`Command`]s.

pub(crate) mod acp;
mod acp_view;
pub(crate) mod api;
mod events;
pub(crate) mod notify;
mod peers;
mod screenshot;
pub(crate) mod term;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proto::Health;
use proto::peers::{PeerInbox, PeerInfo};
use proto::session::{ProcessStat, SessionInfo};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

use self::api::{Api, ApiError};
use crate::lock::Recover as _;
use crate::target::Target;

/// How often health and the session list are polled (the supervisor's overview).
const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Process stats cost the daemon a `/proc` walk: polled less often.
const STATS_INTERVAL: Duration = Duration::from_secs(2);
/// The shortest gap between two session-list refreshes that events ask for.
const EVENT_REFRESH_GAP: Duration = Duration::from_millis(250);
/// Commands queued from the UI; a burst beyond it is dropped with a visible error.
const COMMAND_QUEUE: usize = 64;
/// Journal entries kept for the progress view.
pub(crate) const JOURNAL_KEPT: usize = 200;
/// Toasts shown at once; older ones give way.
pub(crate) const TOASTS_KEPT: usize = 5;
/// Announced questions waiting for the next frame; older ones give way (the window raises
/// attention once per session per few seconds anyway).
pub(crate) const QUESTIONS_KEPT: usize = 32;

#[derive(Debug, Clone)]
pub(crate) struct Confirm {
    pub id: String,
    pub title: String,
    pub message: String,
    pub requester: String,
    pub kind: String,
    pub expires_at: Instant,
}

#[derive(Debug, Clone)]
pub(crate) struct Toast {
    pub title: String,
    pub message: String,
    pub level: String,
    pub at: Instant,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    pub target: String,
    /// Bumped on every new connection target: the UI reopens its terminals on the new one.
    pub generation: u64,
    pub online: bool,
    /// The last poll was refused with 401: polling stops until the user connects again.
    pub auth_failed: bool,
    pub error: Option<String>,
    pub health: Option<Health>,
    pub sessions: Vec<SessionInfo>,
    pub process: Vec<ProcessStat>,
    /// `GET /agents/detect`, loaded when the spawn dialog opens.
    pub agents: Vec<Value>,
    /// `GET /config`, loaded when the settings open.
    pub config: Option<Value>,
    pub confirms: Vec<Confirm>,
    pub toasts: Vec<Toast>,
    /// `GET /peers`, polled while the Peers view is open.
    pub peers: Vec<PeerInfo>,
    /// The selected peer's waiting mail (`GET /peers/:id/inbox`), or why it cannot be shown.
    pub inbox: Option<Result<PeerInbox, String>>,
    /// `GET /progress` while the Peers view is open, and `progress-recorded` from the bus.
    pub journal: VecDeque<Value>,
    /// `ui-screenshot-requested` ids the window has not captured yet.
    pub screenshots: Vec<String>,
    /// Questions the bus announced (`pty-parsed` `question`/`choice-prompt`) that the window has
    /// not raised yet: (session id, question text). At most [`QUESTIONS_KEPT`].
    pub questions: Vec<(String, String)>,
    /// ACP agents (`/acp/connections`), polled while the Agents (ACP) view is open.
    pub acp: acp::AcpState,
}

#[derive(Debug)]
pub(crate) enum Command {
    Connect(Target),
    Write {
        session_id: String,
        data: String,
    },
    Create(Value),
    Close(String),
    Answer {
        id: String,
        confirmed: bool,
    },
    LoadAgents,
    LoadConfig,
    SaveConfig(Value),
    SetPassword(String),
    /// The window's pixels for screenshot request `id`: encoded and posted off the UI thread.
    Screenshot {
        id: String,
        image: Arc<eframe::egui::ColorImage>,
    },
    /// An action of the Agents (ACP) view; its failure shows in that view.
    Acp(acp::AcpCommand),
}

/// Wakes the UI when the network side changed something it shows.
#[derive(Clone, Default)]
pub(crate) struct Repaint(Arc<Mutex<Option<eframe::egui::Context>>>);

impl Repaint {
    pub(crate) fn request(&self) {
        if let Some(ctx) = self.0.locked().as_ref() {
            ctx.request_repaint();
        }
    }
}

#[derive(Clone)]
pub(crate) struct Handle {
    pub snapshot: Arc<Mutex<Snapshot>>,
    commands: mpsc::Sender<Command>,
    repaint: Repaint,
    runtime: tokio::runtime::Handle,
    api: Arc<Mutex<Api>>,
    peers: peers::Watch,
    acp: acp::Watch,
    notifications: mpsc::Sender<notify::Notification>,
}

impl Handle {
    /// Queues a desktop notification; a full queue (a hung notification server) drops it.
    pub(crate) fn notify(&self, notification: notify::Notification) {
        let _ = self.notifications.try_send(notification);
    }

    pub(crate) fn send(&self, command: Command) {
        if self.commands.try_send(command).is_err() {
            self.snapshot.locked().error = Some("too many pending requests; try again".into());
        }
    }

    pub(crate) fn set_context(&self, ctx: &eframe::egui::Context) {
        *self.repaint.0.locked() = Some(ctx.clone());
    }

    /// Opens a terminal's stream on the network thread; dropping every clone of the returned
    /// [`term::Term`] closes it.
    pub(crate) fn open_term(&self, session_id: &str, rows: u16, cols: u16) -> term::Term {
        let _entered = self.runtime.enter();
        let api = self.api.locked().clone();
        term::open(api, session_id.to_owned(), rows, cols, self.repaint.clone())
    }

    /// Says whether the Peers view is open and which peer it shows: the network side polls
    /// them (every 3 s) only while it is, and at once when either changes.
    pub(crate) fn watch_peers(&self, visible: bool, selected: Option<&str>) {
        self.peers.set(visible, selected);
    }

    /// Says whether the Agents (ACP) view is open: its connections are polled only then.
    pub(crate) fn watch_acp(&self, visible: bool) {
        self.acp.set(visible);
    }

    /// Follows one ACP connection's stream on the network thread; dropping every clone of the
    /// returned [`acp::Conversation`] closes it.
    pub(crate) fn open_acp(&self, connection: &str) -> acp::Conversation {
        let _entered = self.runtime.enter();
        let api = self.api.locked().clone();
        acp::open(api, connection.to_owned(), self.repaint.clone(), self.acp.clone())
    }
}

pub(crate) fn spawn(target: Target) -> anyhow::Result<Handle> {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_name("tuic-net").enable_all().build()?;
    let api = Api::new(&target)?;
    let snapshot = Arc::new(Mutex::new(Snapshot { target: target.label(), ..Snapshot::default() }));
    let (commands, rx) = mpsc::channel(COMMAND_QUEUE);
    let (notifications, notify_rx) = mpsc::channel(notify::QUEUE);
    let handle = Handle {
        snapshot,
        commands,
        repaint: Repaint::default(),
        runtime: runtime.handle().clone(),
        api: Arc::new(Mutex::new(api)),
        peers: peers::Watch::default(),
        acp: acp::Watch::default(),
        notifications,
    };
    let worker = handle.clone();
    std::thread::Builder::new().name("tuic-net".into()).spawn(move || {
        runtime.spawn(notify::deliver(notify_rx));
        runtime.block_on(run(worker, rx))
    })?;
    Ok(handle)
}

async fn run(handle: Handle, mut commands: mpsc::Receiver<Command>) {
    let refresh = Arc::new(Notify::new());
    let mut events = tokio::spawn(events::follow(handle.clone(), refresh.clone()));
    tokio::spawn(peers::follow(handle.clone()));
    tokio::spawn(acp::follow(handle.clone()));
    let mut tick = tokio::time::interval(POLL_INTERVAL);
    let mut last_stats = Instant::now() - STATS_INTERVAL;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = refresh.notified() => tokio::time::sleep(EVENT_REFRESH_GAP).await,
            command = commands.recv() => match command {
                None => return,
                Some(Command::Connect(target)) => {
                    match Api::new(&target) {
                        Ok(api) => *handle.api.locked() = api,
                        Err(e) => {
                            handle.snapshot.locked().error = Some(format!("cannot connect: {e}"));
                            continue;
                        }
                    }
                    events.abort();
                    {
                        let mut snap = handle.snapshot.locked();
                        *snap = Snapshot { target: target.label(), generation: snap.generation + 1, ..Snapshot::default() };
                    }
                    events = tokio::spawn(events::follow(handle.clone(), refresh.clone()));
                    handle.peers.wake();
                    handle.acp.wake();
                }
                Some(command) => {
                    let api = handle.api.locked().clone();
                    if let Err(e) = execute(&handle, &api, command).await {
                        handle.snapshot.locked().error = Some(e.to_string());
                    }
                }
            },
        }
        let api = handle.api.locked().clone();
        if handle.snapshot.locked().auth_failed {
            continue;
        }
        let before = shown(&handle.snapshot.locked());
        poll(&handle, &api, last_stats.elapsed() >= STATS_INTERVAL).await;
        if last_stats.elapsed() >= STATS_INTERVAL {
            last_stats = Instant::now();
        }
        // A repaint only when the poll changed what the window shows: an idle window stays idle.
        if shown(&handle.snapshot.locked()) != before {
            handle.repaint.request();
        }
    }
}

/// What of the polled state the window draws, as it draws it (uptime in minutes, CPU in whole
/// percent), to tell whether a poll changed anything on screen.
fn shown(snap: &Snapshot) -> String {
    let health =
        snap.health.as_ref().map(|h| (h.uptime_secs / 60, h.session_count, &h.protocol_version, &h.tcp_address));
    let process: Vec<_> =
        snap.process.iter().map(|p| (&p.session_id, p.cpu_pct.round() as i64, p.rss_kb / 1024)).collect();
    format!(
        "{:?}",
        (snap.online, snap.auth_failed, &snap.error, health, process, &snap.sessions, &snap.target, snap.generation)
    )
}

async fn poll(handle: &Handle, api: &Api, with_stats: bool) {
    let health = api.get("/health").await;
    let sessions = match &health {
        Ok(_) => api.get("/sessions").await,
        Err(e) => Err(e.clone()),
    };
    let process = if with_stats && health.is_ok() { api.get("/process/stats").await.ok() } else { None };
    let mut snap = handle.snapshot.locked();
    match health.and_then(|h| serde_json::from_value::<Health>(h).map_err(|e| ApiError::Offline(e.to_string()))) {
        Ok(h) => {
            snap.health = Some(h);
            snap.online = true;
            snap.error = None;
        }
        Err(e) => {
            snap.health = None;
            snap.online = false;
            snap.auth_failed = e == ApiError::Unauthorized;
            snap.error = Some(e.to_string());
        }
    }
    if let Ok(list) = sessions.and_then(|v| serde_json::from_value(v).map_err(|e| ApiError::Offline(e.to_string()))) {
        snap.sessions = list;
    }
    if let Some(stats) = process.and_then(|v| serde_json::from_value(v).ok()) {
        snap.process = stats;
    }
}

async fn execute(handle: &Handle, api: &Api, command: Command) -> Result<(), ApiError> {
    use reqwest::Method;
    match command {
        Command::Connect(_) => {}
        Command::Write { session_id, data } => {
            api.send(Method::POST, &format!("/sessions/{session_id}/write"), &json!({"data": data})).await?;
        }
        Command::Create(body) => {
            api.send(Method::POST, "/sessions", &body).await?;
        }
        Command::Close(session_id) => {
            api.send(Method::DELETE, &format!("/sessions/{session_id}"), &json!({})).await?;
        }
        Command::Answer { id, confirmed } => {
            let answered = api.send(Method::POST, &format!("/ui/confirm/{id}"), &json!({"confirmed": confirmed})).await;
            // Answered (or already resolved by another client): the dialog goes either way.
            handle.snapshot.locked().confirms.retain(|c| c.id != id);
            match answered {
                Err(ApiError::Status(409, _)) => {}
                other => {
                    other?;
                }
            }
        }
        Command::LoadAgents => {
            let agents = api.get("/agents/detect").await?;
            handle.snapshot.locked().agents = agents.as_array().cloned().unwrap_or_default();
        }
        Command::LoadConfig => {
            let config = api.get("/config").await?;
            handle.snapshot.locked().config = Some(config);
        }
        Command::SaveConfig(patch) => {
            let config = api.send(Method::PUT, "/config", &patch).await?;
            handle.snapshot.locked().config = Some(config);
            events::toast(handle, "Settings saved", "", "info");
        }
        Command::SetPassword(password) => {
            let hash = api.send(Method::POST, "/auth/hash-password", &json!({"password": password})).await?;
            let patch = json!({"services": {"auth": {"password_hash": hash["hash"]}}});
            let config = api.send(Method::PUT, "/config", &patch).await?;
            handle.snapshot.locked().config = Some(config);
            events::toast(handle, "Password changed", "remote access uses the new password", "info");
        }
        // Its own task: encoding takes a while, and the poll loop goes on meanwhile.
        Command::Screenshot { id, image } => {
            drop(tokio::spawn(screenshot::answer(handle.clone(), api.clone(), id, image)))
        }
        // Its own task too: launching an agent waits for its initialize.
        Command::Acp(command) => {
            let (handle, api) = (handle.clone(), api.clone());
            drop(tokio::spawn(async move { acp::execute(&handle, &api, command).await }));
        }
    }
    Ok(())
}
