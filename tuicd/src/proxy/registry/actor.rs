//! One upstream's supervisor: the only task that connects, reconnects and closes its client.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{Client, Entry, EntryState, Hub, Metrics, Status};
use crate::limits::{UPSTREAM_NOTIFY_QUEUE, UPSTREAM_RESPAWN_MIN_GAP};
use crate::lock::Recover;
use crate::proxy::config::{Transport, UpstreamAuth, UpstreamServer};
use crate::proxy::health::{Breaker, Verdict};
use crate::proxy::wire::{ConnectCtx, RequestOpts, UpstreamError};

/// What the registry asks of a supervisor.
#[derive(Debug)]
pub(super) enum Command {
    Reconnect,
    Tick,
    Stop,
    /// Drop the connection and wait to be asked again (the upstream waits for a person).
    Park,
    /// A call got no answer (a transport error or a timeout): it counts toward the breaker as a
    /// failed health check does, so a dead upstream leaves `ready` at its callers' pace.
    CallFailed(String),
}

/// The most pages of `tools/list` followed for one upstream.
const TOOLS_LIST_PAGES: usize = 20;
/// Commands queued per supervisor; a tick that finds the queue full is dropped.
const COMMAND_QUEUE: usize = 8;

/// Creates the entry and starts its supervisor.
pub(super) fn start(server: UpstreamServer, hub: Arc<Hub>) -> Arc<Entry> {
    let (commands, receiver) = mpsc::channel(COMMAND_QUEUE);
    let status = if server.enabled { Status::Connecting } else { Status::Disabled };
    let entry = Arc::new(Entry {
        tuning: std::sync::Mutex::new(super::Tuning::of(&server)),
        server,
        state: std::sync::Mutex::new(EntryState {
            status,
            client: None,
            tools: Vec::new(),
            capabilities: Value::Null,
            instructions: None,
            metrics: Metrics::default(),
            last_error: None,
            breaker: Breaker::default(),
            step_up: Default::default(),
        }),
        commands,
        callers: Default::default(),
        next_call: Default::default(),
        refetch: Default::default(),
    });
    tokio::spawn(run(entry.clone(), hub, receiver));
    entry
}

type Connection = (Arc<Client>, mpsc::Receiver<Value>);

async fn run(entry: Arc<Entry>, hub: Arc<Hub>, mut commands: mpsc::Receiver<Command>) {
    let mut conn: Option<Connection> = None;
    let mut next_attempt = entry.server.enabled.then(Instant::now);
    let mut last_spawn: Option<Instant> = None;
    loop {
        if conn.is_none() && next_attempt.is_some_and(|at| at <= Instant::now()) {
            next_attempt = None;
            match attempt(&entry, &hub, &mut last_spawn).await {
                Ok(connection) => conn = Some(connection),
                Err(retry) => next_attempt = retry,
            }
        }
        let wake = next_attempt.filter(|_| conn.is_none());
        tokio::select! {
            command = commands.recv() => match command {
                None | Some(Command::Stop) => {
                    disconnect(&entry, &hub, conn.take()).await;
                    return;
                }
                Some(Command::Reconnect) => {
                    disconnect(&entry, &hub, conn.take()).await;
                    {
                        let mut state = entry.state.locked();
                        state.breaker = Breaker::default();
                        state.step_up.refused = false;
                    }
                    next_attempt = entry.server.enabled.then(Instant::now);
                }
                Some(Command::Park) => {
                    disconnect(&entry, &hub, conn.take()).await;
                    next_attempt = None;
                }
                Some(Command::CallFailed(error)) => {
                    if conn.is_some() {
                        let next = after_failure(&entry, &hub, &format!("a call failed: {error}"), None, Status::Ready);
                        if entry.state.locked().breaker.open() {
                            disconnect(&entry, &hub, conn.take()).await;
                            next_attempt = next;
                        }
                    }
                }
                Some(Command::Tick) => match &conn {
                    Some((client, _)) => {
                        if let Some(retry) = health_check(&entry, &hub, client).await {
                            disconnect(&entry, &hub, conn.take()).await;
                            next_attempt = retry;
                        }
                    }
                    None => {
                        let status = entry.status();
                        let refused = entry.state.locked().step_up.refused;
                        if matches!(status, Status::Connecting | Status::CircuitOpen | Status::Failed) && !refused {
                            next_attempt = Some(earliest(&entry, last_spawn));
                        }
                    }
                },
            },
            message = next_message(&mut conn) => match message {
                Some(message) => on_notification(&entry, &hub, conn.as_ref().map(|c| c.0.clone()), message),
                None => {
                    let tail = match &conn {
                        Some((client, _)) => client.stderr_tail().await,
                        None => None,
                    };
                    let error = match tail {
                        Some(tail) => format!("upstream {} exited or disconnected; its last stderr lines: {tail}", entry.server.name),
                        None => format!("upstream {} exited or disconnected", entry.server.name),
                    };
                    tracing::warn!(source = "upstream", upstream = %entry.server.name, "connection lost; reconnecting");
                    entry.record_error(&error);
                    disconnect(&entry, &hub, conn.take()).await;
                    next_attempt = after_failure(&entry, &hub, &error, last_spawn, Status::Connecting);
                }
            },
            () = sleep_until(wake) => {}
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn next_message(conn: &mut Option<Connection>) -> Option<Value> {
    match conn {
        Some((_, notifications)) => notifications.recv().await,
        None => std::future::pending().await,
    }
}

/// Connects, lists the tools and marks the entry ready; on failure, when to try again (`None`:
/// only when asked, as for an upstream that needs authorization).
async fn attempt(
    entry: &Arc<Entry>,
    hub: &Arc<Hub>,
    last_spawn: &mut Option<Instant>,
) -> Result<Connection, Option<Instant>> {
    let server = &entry.current();
    let bearer = (hub.bearer_for)(server);
    if matches!(server.auth, Some(UpstreamAuth::Oauth2 { .. })) && bearer.as_ref().and_then(|b| b.current()).is_none() {
        entry.record_error("no OAuth token yet: authorize this upstream");
        entry.set_status(hub, Status::NeedsAuth);
        return Err(None);
    }
    if !matches!(entry.status(), Status::CircuitOpen | Status::Failed) {
        entry.set_status(hub, Status::Connecting);
    }
    *last_spawn = Some(Instant::now());
    let (tx, rx) = mpsc::channel(UPSTREAM_NOTIFY_QUEUE);
    let stderr_log = hub.stderr_logs.locked().as_ref().map(|dir| dir.join(format!("{}.log", server.name)));
    let ctx = ConnectCtx { notifications: tx, bearer, name: server.name.clone(), stderr_log };
    let (client, handshake) = match Client::connect(server, ctx).await {
        Ok((client, handshake)) => {
            tracing::info!(source = "upstream", upstream = %server.name, protocol_version = %handshake.protocol_version,
                server_info = %handshake.server_info, pid = ?client.pid(), "connected");
            (Arc::new(client), handshake)
        }
        Err(UpstreamError::NeedsOAuth { www_authenticate }) => {
            entry.record_error(&format!("the upstream asks for authorization ({www_authenticate})"));
            entry.set_status(hub, Status::NeedsAuth);
            return Err(None);
        }
        Err(e) => return Err(after_failure(entry, hub, &e.to_string(), *last_spawn, Status::Connecting)),
    };
    match list_tools(server, &client).await {
        Ok(tools) => {
            {
                let mut state = entry.state.locked();
                state.tools = tools;
                state.capabilities = handshake.capabilities;
                state.instructions = handshake.instructions;
                state.client = Some(client.clone());
                state.breaker.success();
                // Recovered: what went wrong before no longer describes it.
                state.last_error = None;
            }
            entry.set_status(hub, Status::Ready);
            hub.bump_tools();
            Ok((client, rx))
        }
        Err(UpstreamError::InsufficientScope { scope, .. }) => {
            client.close().await;
            entry.step_up(hub, scope.as_deref());
            Err(None)
        }
        Err(UpstreamError::NeedsOAuth { www_authenticate }) => {
            client.close().await;
            entry.record_error(&format!("the upstream asks for authorization ({www_authenticate})"));
            entry.set_status(hub, Status::NeedsAuth);
            Err(None)
        }
        Err(e) => {
            client.close().await;
            Err(after_failure(entry, hub, &format!("tools/list failed: {e}"), *last_spawn, Status::Connecting))
        }
    }
}

/// The earliest moment of the next connection attempt: now, except that a stdio process is never
/// respawned more often than `UPSTREAM_RESPAWN_MIN_GAP`.
fn earliest(entry: &Entry, last_spawn: Option<Instant>) -> Instant {
    let gap = match entry.server.transport {
        Transport::Stdio { .. } => last_spawn.map(|at| at + UPSTREAM_RESPAWN_MIN_GAP),
        Transport::Http { .. } => None,
    };
    gap.map_or_else(Instant::now, |gap| gap.max(Instant::now()))
}

/// Records a failure and decides the status and the next attempt. Below the breaker's threshold
/// the status becomes `tolerated` (still `connecting`, or still `ready` after a failed health check).
fn after_failure(
    entry: &Entry,
    hub: &Hub,
    error: &str,
    last_spawn: Option<Instant>,
    tolerated: Status,
) -> Option<Instant> {
    tracing::warn!(source = "upstream", upstream = %entry.server.name, error = %error, "upstream failure");
    let verdict = {
        let mut state = entry.state.locked();
        state.last_error = Some(error.to_owned());
        state.breaker.failure()
    };
    let gap = earliest(entry, last_spawn);
    match verdict {
        Verdict::Tolerated => {
            entry.set_status(hub, tolerated);
            Some(gap.max(Instant::now() + Duration::from_millis(100)))
        }
        Verdict::RetryAfter(delay) => {
            entry.set_status(hub, Status::CircuitOpen);
            Some(gap.max(Instant::now() + delay))
        }
        Verdict::Failed => {
            entry.set_status(hub, Status::Failed);
            None
        }
    }
}

/// A ready upstream's `tools/list`; `Some(retry)` when the failure opened the circuit.
async fn health_check(entry: &Arc<Entry>, hub: &Arc<Hub>, client: &Arc<Client>) -> Option<Option<Instant>> {
    match list_tools(&entry.current(), client).await {
        Ok(tools) => {
            let changed = {
                let mut state = entry.state.locked();
                state.breaker.success();
                let changed = state.tools != tools;
                state.tools = tools;
                changed
            };
            entry.set_status(hub, Status::Ready);
            if changed {
                hub.bump_tools();
            }
            None
        }
        Err(UpstreamError::InsufficientScope { scope, .. }) => {
            entry.step_up(hub, scope.as_deref());
            Some(None)
        }
        Err(e) => {
            let error = format!("health check tools/list failed: {e}");
            // Below the threshold the upstream stays ready and usable.
            let next = after_failure(entry, hub, &error, None, Status::Ready);
            entry.state.locked().breaker.open().then_some(next)
        }
    }
}

async fn disconnect(entry: &Entry, hub: &Hub, conn: Option<Connection>) {
    let had_tools = {
        let mut state = entry.state.locked();
        state.client = None;
        !state.tools.is_empty()
    };
    if let Some((client, _)) = conn {
        client.close().await;
    }
    if had_tools {
        hub.bump_tools();
    }
}

/// Every page of the upstream's `tools/list`. A result without `tools` is a warning naming the
/// upstream, never a silent empty list.
pub(super) async fn list_tools(server: &UpstreamServer, client: &Client) -> Result<Vec<Value>, UpstreamError> {
    let timeout = Duration::from_secs(server.timeout_secs.max(1));
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..TOOLS_LIST_PAGES {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let mut result = client.request("tools/list", params, RequestOpts::within(timeout)).await?;
        match result.get_mut("tools").map(Value::take) {
            Some(Value::Array(page)) => {
                tools.extend(page.into_iter().filter(|t| t.get("name").is_some_and(Value::is_string)))
            }
            _ => {
                tracing::warn!(source = "upstream", upstream = %server.name, result = %result,
                    "tools/list answered without result.tools; the upstream lists no tools");
                return Ok(tools);
            }
        }
        cursor = result.get("nextCursor").filter(|c| !c.is_null()).cloned();
        if cursor.is_none() {
            return Ok(tools);
        }
    }
    tracing::warn!(source = "upstream", upstream = %server.name, pages = TOOLS_LIST_PAGES, "tools/list has more pages than followed");
    Ok(tools)
}

fn on_notification(entry: &Arc<Entry>, hub: &Arc<Hub>, client: Option<Arc<Client>>, message: Value) {
    let method = message.get("method").and_then(Value::as_str).unwrap_or_default();
    if message.get("id").is_some() {
        // A request the transport could not relate to a call (any on stdio): it belongs to the
        // call in flight when there is exactly one.
        if let Some(client) = client {
            super::asks::answer(entry, client, entry.sole_caller(), message);
        }
        return;
    }
    match method {
        "notifications/tools/list_changed" => {
            let Some(client) = client else { return };
            // Coalesced: one re-fetch in flight and at most one queued behind it, since a
            // re-fetch that starts after a change sees it whatever the number of notifications.
            {
                let mut refetch = entry.refetch.locked();
                if refetch.running {
                    refetch.queued = true;
                    return;
                }
                refetch.running = true;
            }
            let (entry, hub) = (entry.clone(), hub.clone());
            tokio::spawn(async move {
                loop {
                    match list_tools(&entry.current(), &client).await {
                        Ok(tools) => {
                            entry.state.locked().tools = tools;
                            hub.bump_tools();
                        }
                        Err(e) => tracing::warn!(source = "upstream", upstream = %entry.server.name, error = %e,
                            "refetching tools after list_changed failed"),
                    }
                    let mut refetch = entry.refetch.locked();
                    if !std::mem::take(&mut refetch.queued) {
                        refetch.running = false;
                        return;
                    }
                }
            });
        }
        "notifications/progress" => hub.progress.route(message),
        // A log message not related to a request goes to the one call in flight, never to
        // every session with a call on this upstream.
        "notifications/message" => match entry.sole_caller() {
            Ok(caller) => (caller.notify)(message),
            Err(why) => {
                tracing::debug!(source = "upstream", upstream = %entry.server.name, %why, "log message for no one call; dropped")
            }
        },
        _ => tracing::debug!(source = "upstream", upstream = %entry.server.name, method, "notification"),
    }
}
