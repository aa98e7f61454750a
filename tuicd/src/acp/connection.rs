//! One ACP connection: its generations (agent processes, one at a time), the sessions seen on it,
//! the questions waiting on a person, and the journal every frame goes to.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use agent_client_protocol_schema::{
    AgentCapabilities, ContentBlock, CreateElicitationRequest, RequestPermissionRequest,
};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::generation::{Generation, Incoming, Launch, Sink};
use super::journal::{Journal, now_ms};
use super::requests::{ConfigChange, SessionOp};
use super::{AcpError, METHOD_NOT_FOUND, Notice};
use crate::events::EventBus;
use crate::limits::{ACP_DISCONNECT_GRACE, ACP_INIT_TIMEOUT, ACP_INTERACTIONS_MAX, ACP_REQUEST_TIMEOUT};
use crate::lock::Recover;

mod interactions;

use interactions::{Interaction, InteractionKind};

/// The ACP protocol version tuicd speaks.
const PROTOCOL_VERSION: u64 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Starting,
    Ready,
    Settled,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Ready => "ready",
            Phase::Settled => "settled",
        }
    }
}

#[derive(Debug, Default)]
struct SessionInfo {
    cwd: String,
    /// The generation it is attached in; a later generation must `load` it again.
    generation: u64,
    /// The request id of the running turn's `session/prompt`.
    turn: Option<u64>,
    title: Option<String>,
    current_mode: Option<String>,
    /// What `session/new` or `session/load` answered (modes, models, configOptions).
    setup: Value,
}

#[derive(Debug)]
struct State {
    generation: u64,
    phase: Phase,
    settled_reason: Option<String>,
    live: Option<Arc<Generation>>,
    agent_info: Value,
    capabilities_raw: Value,
    capabilities: AgentCapabilities,
    auth_methods: Value,
    sessions: BTreeMap<String, SessionInfo>,
    interactions: BTreeMap<String, Interaction>,
    invalid_lines: u64,
    started_at_ms: u64,
}

#[derive(Debug)]
pub(crate) struct Connection {
    pub id: String,
    /// When it was made: with `id`, what tells it from a connection of an earlier daemon run that
    /// had the same id.
    pub created_at_ms: u64,
    pub journal: Journal,
    launch: Mutex<Launch>,
    state: Mutex<State>,
    events: Arc<EventBus>,
    /// The newest generation that has settled (its process reaped).
    settled: watch::Sender<u64>,
}

impl Connection {
    pub(super) fn new(id: String, launch: Launch, events: Arc<EventBus>) -> Self {
        let state = State {
            generation: 0,
            phase: Phase::Settled,
            settled_reason: None,
            live: None,
            agent_info: Value::Null,
            capabilities_raw: Value::Null,
            capabilities: AgentCapabilities::default(),
            auth_methods: json!([]),
            sessions: BTreeMap::new(),
            interactions: BTreeMap::new(),
            invalid_lines: 0,
            started_at_ms: now_ms(),
        };
        Self {
            id,
            created_at_ms: now_ms(),
            journal: Journal::new(),
            launch: Mutex::new(launch),
            state: Mutex::new(state),
            events,
            settled: watch::channel(0).0,
        }
    }

    /// The live agent's process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.state.locked().live.as_ref().and_then(|g| g.pid)
    }

    /// Starts the next generation: launches the process and initializes it. On failure the
    /// generation is settled with the reason, which the error carries too.
    pub(super) async fn start_generation(self: &Arc<Self>) -> Result<(), AcpError> {
        let launch = self.launch.locked().clone();
        let number = {
            let mut state = self.state.locked();
            state.generation += 1;
            state.phase = Phase::Starting;
            state.settled_reason = None;
            state.started_at_ms = now_ms();
            state.generation
        };
        self.journal.append(number, "state", json!({"state": "starting", "command": launch.command_line()}));
        let sink: Sink = {
            let connection: Weak<Self> = Arc::downgrade(self);
            Arc::new(move |incoming| {
                if let Some(connection) = connection.upgrade() {
                    connection.on_incoming(number, incoming);
                }
            })
        };
        let (generation, ended) = match Generation::spawn(number, &launch, sink) {
            Ok(started) => started,
            Err(e) => {
                self.settle(number, e.to_string());
                return Err(e);
            }
        };
        self.state.locked().live = Some(generation.clone());
        tokio::spawn({
            let connection = self.clone();
            async move {
                let reason = ended.await.unwrap_or_else(|_| "exited".into());
                connection.settle(number, reason);
            }
        });
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false},
            "clientInfo": {"name": "tuicd", "title": "tuic", "version": env!("CARGO_PKG_VERSION")},
        });
        let answer = generation
            .request("initialize", params, Some(ACP_INIT_TIMEOUT), |_, message| {
                self.journal.append(number, "client", json!({"message": message}));
            })
            .await;
        let result = match answer {
            Ok(result) => result,
            Err(e) => {
                let reason = format!("initialize failed: {e}");
                generation.kill();
                // The process's own exit may already have named a better reason; the first wins.
                self.settle(number, reason);
                let said = self.state.locked().settled_reason.clone().unwrap_or_default();
                return Err(match e {
                    AcpError::Timeout(_) => AcpError::Timeout(format!("{}: {said}", self.id)),
                    AcpError::Rpc { code, message, data } => AcpError::Rpc { code, message, data },
                    _ => AcpError::Closed(format!("{}: {said}", self.id)),
                });
            }
        };
        let capabilities_raw = result.get("agentCapabilities").cloned().unwrap_or(Value::Null);
        let capabilities: AgentCapabilities = serde_json::from_value(capabilities_raw.clone()).unwrap_or_default();
        let sequence = {
            let mut state = self.state.locked();
            if state.generation != number || state.phase != Phase::Starting {
                let said = state.settled_reason.clone().unwrap_or_default();
                return Err(AcpError::Closed(format!("{}: the agent ended while initializing: {said}", self.id)));
            }
            state.phase = Phase::Ready;
            state.agent_info = result.get("agentInfo").cloned().unwrap_or(Value::Null);
            state.capabilities_raw = capabilities_raw;
            state.capabilities = capabilities;
            state.auth_methods = result.get("authMethods").cloned().unwrap_or_else(|| json!([]));
            self.journal.append(number, "state", json!({"state": "ready"}))
        };
        self.notice(number, sequence, "ready", None, None);
        tracing::info!(connection = %self.id, generation = number, pid = ?generation.pid, "ACP agent ready");
        Ok(())
    }

    /// Ends generation `number` once: its pending questions are dropped, its sessions detached,
    /// and the reason journaled. Later calls for the same generation (or an older one) do nothing.
    fn settle(&self, number: u64, reason: String) {
        let (sequence, dropped) = {
            let mut state = self.state.locked();
            if state.generation != number || state.phase == Phase::Settled {
                return;
            }
            state.phase = Phase::Settled;
            state.settled_reason = Some(reason.clone());
            state.live = None;
            for session in state.sessions.values_mut() {
                session.turn = None;
            }
            let dropped: Vec<(String, Option<String>)> = std::mem::take(&mut state.interactions)
                .into_iter()
                .map(|(key, interaction)| (key, interaction.session_id))
                .collect();
            (self.journal.append(number, "state", json!({"state": "settled", "reason": reason})), dropped)
        };
        for (key, session) in dropped {
            self.notice(number, sequence, "interaction_settled", session, Some(key));
        }
        self.notice(number, sequence, "settled", None, None);
        self.settled.send_replace(number);
        tracing::info!(connection = %self.id, generation = number, %reason, "ACP agent settled");
    }

    /// Everything the agent writes, in its order: journaled, then acted on.
    fn on_incoming(&self, number: u64, incoming: Incoming) {
        match incoming {
            Incoming::Invalid { reason, bytes, head } => {
                self.state.locked().invalid_lines += 1;
                self.journal.append(number, "invalid", json!({"reason": reason, "bytes": bytes, "head": head}));
            }
            Incoming::Message(message) => {
                let method = message.get("method").and_then(Value::as_str);
                match (message.get("id"), method) {
                    (Some(id), Some(method)) => self.on_request(number, id.clone(), method, &message),
                    (Some(id), None) => {
                        // A turn's end: cleared before it is journaled, so a client that prompts
                        // again on seeing it finds the session free; the frame names the session.
                        let ended = id.as_u64().and_then(|id| self.end_turn_of(number, id));
                        let mut body = json!({"message": &message});
                        if let Some(session_id) = ended {
                            body["turn_end"] = json!({"session_id": session_id});
                        }
                        self.journal.append(number, "agent", body);
                    }
                    (None, _) => {
                        self.journal.append(number, "agent", json!({"message": &message}));
                        if method == Some("session/update") {
                            self.on_update(&message);
                        }
                    }
                }
            }
        }
    }

    /// Keeps what the snapshot shows of a session current: its title and mode.
    fn on_update(&self, message: &Value) {
        let params = &message["params"];
        let (Some(session_id), Some(update)) = (params["sessionId"].as_str(), params.get("update")) else { return };
        let mut state = self.state.locked();
        let Some(session) = state.sessions.get_mut(session_id) else { return };
        match update["sessionUpdate"].as_str() {
            Some("session_info_update") => {
                if let Some(title) = update["title"].as_str() {
                    session.title = Some(title.to_owned());
                }
            }
            Some("current_mode_update") => {
                if let Some(mode) = update["currentModeId"].as_str() {
                    session.current_mode = Some(mode.to_owned());
                }
            }
            _ => {}
        }
    }

    /// A request of the agent's: a question for a person waits; anything else is refused (tuicd
    /// offers no file system or terminal).
    /// The request is journaled here: a question is registered under the same lock as its frame
    /// is appended, so whoever sees the frame finds it in the interactions too.
    fn on_request(&self, number: u64, id: Value, method: &str, message: &Value) {
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let journal_it = || self.journal.append(number, "agent", json!({"message": message}));
        let kind = match method {
            "session/request_permission" => InteractionKind::Permission,
            "elicitation/create" => InteractionKind::Elicitation,
            _ => {
                journal_it();
                let text =
                    format!("tuicd does not offer {method}: it advertises no file-system or terminal capability");
                self.reply_error(number, &id, METHOD_NOT_FOUND, &text);
                return;
            }
        };
        let (session_id, options) = match kind {
            InteractionKind::Permission => match serde_json::from_value::<RequestPermissionRequest>(params.clone()) {
                Ok(request) => (
                    Some(request.session_id.to_string()),
                    request.options.iter().map(|o| o.option_id.to_string()).collect(),
                ),
                Err(e) => {
                    journal_it();
                    self.reply_error(number, &id, -32602, &format!("invalid session/request_permission params: {e}"));
                    return;
                }
            },
            InteractionKind::Elicitation => match serde_json::from_value::<CreateElicitationRequest>(params.clone()) {
                Ok(_) => (params.get("sessionId").and_then(Value::as_str).map(str::to_owned), Vec::new()),
                Err(e) => {
                    journal_it();
                    self.reply_error(number, &id, -32602, &format!("invalid elicitation/create params: {e}"));
                    return;
                }
            },
        };
        let key = key_of(&id);
        let (refused, sequence) = {
            let mut state = self.state.locked();
            let sequence = journal_it();
            let refused = if state.generation != number || state.phase != Phase::Ready {
                Some("the connection is not ready".to_owned())
            } else if state.interactions.contains_key(&key) {
                Some(format!("request id {key} is already waiting on a person"))
            } else if state.interactions.len() >= ACP_INTERACTIONS_MAX {
                Some(format!("{ACP_INTERACTIONS_MAX} questions are already waiting on a person"))
            } else {
                let session = session_id.clone();
                let interaction = Interaction {
                    id: id.clone(),
                    kind,
                    generation: number,
                    session_id: session,
                    sequence,
                    params,
                    options,
                };
                state.interactions.insert(key.clone(), interaction);
                None
            };
            (refused, sequence)
        };
        match refused {
            Some(reason) => self.reply_error(number, &id, -32000, &reason),
            None => self.notice(number, sequence, "interaction_pending", session_id, Some(key)),
        }
    }

    fn reply_error(&self, number: u64, id: &Value, code: i64, message: &str) {
        let reply = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        if let Err(e) = self.write(number, &reply) {
            tracing::debug!(connection = %self.id, error = %e, "an error answer to the agent was not sent");
        }
    }

    /// Journals and writes a message of tuicd's (a response or a notification) in generation
    /// `number`, if it is still the live one.
    fn write(&self, number: u64, message: &Value) -> Result<u64, AcpError> {
        let generation = {
            let state = self.state.locked();
            match &state.live {
                Some(live) if live.number == number => live.clone(),
                _ => return Err(AcpError::Closed("the agent that asked is no longer running".into())),
            }
        };
        let sequence = self.journal.append(number, "client", json!({"message": message}));
        generation.send(message)?;
        Ok(sequence)
    }

    fn notice(
        &self,
        generation: u64,
        sequence: u64,
        notice: &'static str,
        session_id: Option<String>,
        request_id: Option<String>,
    ) {
        let notice = Notice { connection: self.id.clone(), generation, sequence, notice, session_id, request_id };
        self.events.publish("acp-notice", &notice);
    }

    /// The live generation, when the connection is ready.
    fn ready(&self) -> Result<(Arc<Generation>, AgentCapabilities), AcpError> {
        let state = self.state.locked();
        match (&state.live, state.phase) {
            (Some(live), Phase::Ready) => Ok((live.clone(), state.capabilities.clone())),
            (_, phase) => Err(AcpError::Conflict(format!(
                "ACP connection {} is {}{}; reconnect it first",
                self.id,
                phase.name(),
                state.settled_reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default()
            ))),
        }
    }

    /// A request of tuicd's, journaled as sent; waits for the answer up to the request deadline.
    async fn call(&self, generation: &Generation, method: &str, params: Value) -> Result<Value, AcpError> {
        let number = generation.number;
        let answer = generation
            .request(method, params, Some(ACP_REQUEST_TIMEOUT), |_, message| {
                self.journal.append(number, "client", json!({"message": message}));
            })
            .await;
        match answer {
            Err(AcpError::Rpc { code: METHOD_NOT_FOUND, message, .. }) => {
                Err(AcpError::Unsupported(format!("{method} ({message})")))
            }
            other => other,
        }
    }

    pub(crate) fn snapshot(&self) -> Value {
        let state = self.state.locked();
        let (sequence, first_sequence) = self.journal.bounds();
        let launch = self.launch.locked();
        let sessions: Vec<Value> =
            state.sessions.iter().map(|(id, s)| session_json(id, s, state.generation, state.phase)).collect();
        json!({
            "id": self.id,
            "created_at_ms": self.created_at_ms,
            "generation": state.generation,
            "state": state.phase.name(),
            "settled_reason": state.settled_reason,
            "pid": state.live.as_ref().and_then(|g| g.pid),
            "cwd": launch.cwd,
            "command": launch.command_line(),
            "agent_info": state.agent_info,
            "agent_capabilities": state.capabilities_raw,
            "auth_methods": state.auth_methods,
            "sequence": sequence,
            "first_sequence": first_sequence,
            "sessions": sessions,
            "interactions_pending": state.interactions.len(),
            "invalid_lines": state.invalid_lines,
            "started_at_ms": state.started_at_ms,
        })
    }

    /// Kills the agent's process group now; the connection stays, settled as killed.
    pub(crate) fn kill(&self) -> Option<u64> {
        let live = self.state.locked().live.clone()?;
        live.kill();
        Some(live.number)
    }

    /// Kills the agent and waits (up to [`ACP_DISCONNECT_GRACE`]) until its generation settled.
    pub(crate) async fn kill_and_settle(&self) {
        if let Some(number) = self.kill() {
            let _ = tokio::time::timeout(ACP_DISCONNECT_GRACE, self.settled(number)).await;
        }
    }

    /// Waits until generation `number` has settled.
    async fn settled(&self, number: u64) {
        let mut settled = self.settled.subscribe();
        let _ = settled.wait_for(|n| *n >= number).await;
    }

    /// Asks the agent to exit (stdin closed), killing it after [`ACP_DISCONNECT_GRACE`].
    pub(crate) async fn disconnect(&self) {
        let live = self.state.locked().live.clone();
        let Some(live) = live else { return };
        live.close_stdin();
        if tokio::time::timeout(ACP_DISCONNECT_GRACE, self.settled(live.number)).await.is_err() {
            live.kill();
            self.settled(live.number).await;
        }
    }

    /// Settles the current generation (killing its process) and starts the next with `launch`.
    pub(crate) async fn reconnect(self: &Arc<Self>, program: String, args: Vec<String>) -> Result<(), AcpError> {
        let live = self.state.locked().live.clone();
        if let Some(live) = live {
            live.kill();
            self.settled(live.number).await;
        }
        {
            let mut launch = self.launch.locked();
            launch.program = program;
            launch.args = args;
        }
        self.start_generation().await
    }

    /// `session/list` when the agent offers it, else the sessions seen on this connection.
    pub(crate) async fn list_sessions(&self) -> Result<Value, AcpError> {
        let (generation, caps) = self.ready()?;
        if caps.session_capabilities.list.is_none() {
            let state = self.state.locked();
            let sessions: Vec<Value> =
                state.sessions.iter().map(|(id, s)| session_json(id, s, state.generation, state.phase)).collect();
            return Ok(json!({"sessions": sessions, "source": "tuicd"}));
        }
        let result = self.call(&generation, "session/list", json!({})).await?;
        let state = self.state.locked();
        let mut sessions = Vec::new();
        for item in result["sessions"].as_array().into_iter().flatten() {
            let mut item = item.clone();
            let attached = item["sessionId"]
                .as_str()
                .and_then(|id| state.sessions.get(id))
                .is_some_and(|s| s.generation == state.generation && state.phase == Phase::Ready);
            item["attached"] = json!(attached);
            sessions.push(item);
        }
        Ok(json!({"sessions": sessions, "source": "agent", "next_cursor": result.get("nextCursor")}))
    }

    /// `session/new` in `cwd` with `mcp_servers`.
    pub(crate) async fn new_session(&self, cwd: Option<String>, mcp_servers: Value) -> Result<Value, AcpError> {
        let (generation, _) = self.ready()?;
        let cwd = cwd.unwrap_or_else(|| self.launch.locked().cwd.display().to_string());
        let result = self.call(&generation, "session/new", json!({"cwd": cwd, "mcpServers": mcp_servers})).await?;
        let Some(session_id) = result["sessionId"].as_str().map(str::to_owned) else {
            return Err(AcpError::Protocol("session/new answered without a sessionId".into()));
        };
        self.attach(&session_id, &cwd, generation.number, &result);
        Ok(session_result(&session_id, &result))
    }

    fn attach(&self, session_id: &str, cwd: &str, number: u64, setup: &Value) {
        let mut state = self.state.locked();
        let session = state.sessions.entry(session_id.to_owned()).or_default();
        session.cwd = cwd.to_owned();
        session.generation = number;
        session.turn = None;
        session.setup = json!({
            "modes": setup.get("modes"),
            "models": setup.get("models"),
            "config_options": setup.get("configOptions"),
        });
        if let Some(mode) = setup["modes"]["currentModeId"].as_str() {
            session.current_mode = Some(mode.to_owned());
        }
    }

    /// load / resume / fork / close / delete, each when the agent advertised it.
    pub(crate) async fn session_op(
        &self,
        session_id: &str,
        op: SessionOp,
        cwd: Option<String>,
    ) -> Result<Value, AcpError> {
        let (generation, caps) = self.ready()?;
        let raw = self.state.locked().capabilities_raw.clone();
        if !op.advertised(&caps, &raw) {
            return Err(AcpError::Unsupported(format!("{} (not in its agentCapabilities)", op.method())));
        }
        let known_cwd = self.state.locked().sessions.get(session_id).map(|s| s.cwd.clone());
        let cwd = cwd.or(known_cwd).unwrap_or_else(|| self.launch.locked().cwd.display().to_string());
        let params = match op {
            SessionOp::Load | SessionOp::Resume | SessionOp::Fork => {
                json!({"sessionId": session_id, "cwd": cwd, "mcpServers": []})
            }
            SessionOp::Close | SessionOp::Delete => json!({"sessionId": session_id}),
        };
        let result = self.call(&generation, op.method(), params).await?;
        match op {
            SessionOp::Load | SessionOp::Resume => {
                self.attach(session_id, &cwd, generation.number, &result);
                Ok(session_result(session_id, &result))
            }
            SessionOp::Fork => {
                let Some(forked) = result["sessionId"].as_str().map(str::to_owned) else {
                    return Err(AcpError::Protocol("session/fork answered without a sessionId".into()));
                };
                self.attach(&forked, &cwd, generation.number, &result);
                Ok(session_result(&forked, &result))
            }
            SessionOp::Close | SessionOp::Delete => {
                let mut state = self.state.locked();
                if op == SessionOp::Delete {
                    state.sessions.remove(session_id);
                } else if let Some(session) = state.sessions.get_mut(session_id) {
                    session.generation = 0;
                    session.turn = None;
                }
                Ok(json!({"session_id": session_id, op_done(op): true}))
            }
        }
    }

    /// Sends `session/prompt` and returns at once with its request id and the sequence of the
    /// journaled request; the turn streams, and its end is the response to that id.
    pub(crate) async fn prompt(
        self: &Arc<Self>,
        session_id: &str,
        prompt: Vec<ContentBlock>,
    ) -> Result<(u64, u64), AcpError> {
        let (generation, _) = self.ready()?;
        let number = generation.number;
        {
            let mut state = self.state.locked();
            let Some(session) = state.sessions.get_mut(session_id) else {
                return Err(AcpError::NotFound(format!("no session {session_id:?} on ACP connection {}", self.id)));
            };
            if session.generation != number {
                return Err(AcpError::Conflict(format!(
                    "session {session_id} is not attached to the running agent; load it first"
                )));
            }
            if let Some(turn) = session.turn {
                return Err(AcpError::Conflict(format!(
                    "a turn is running in session {session_id} (request {turn}); cancel it or wait for its end"
                )));
            }
            // Held from here, so a second prompt cannot slip in before the id is known.
            session.turn = Some(0);
        }
        let params = json!({"sessionId": session_id, "prompt": prompt});
        let mut sequence = 0;
        let sent = generation
            .send_request("session/prompt", params, |_, message| {
                sequence = self.journal.append(number, "client", json!({"message": message}));
            })
            .await;
        let (id, answer) = match sent {
            Ok(sent) => sent,
            Err(e) => {
                self.end_turn(session_id, number, None);
                return Err(e);
            }
        };
        if let Some(session) = self.state.locked().sessions.get_mut(session_id)
            && session.generation == number
        {
            session.turn = Some(id);
        }
        tokio::spawn({
            let connection = self.clone();
            let session_id = session_id.to_owned();
            async move {
                let _ = answer.await;
                connection.end_turn(&session_id, number, Some(id));
            }
        });
        Ok((id, sequence))
    }

    /// Clears the turn whose `session/prompt` had request id `id` in generation `number`, and
    /// names its session.
    fn end_turn_of(&self, number: u64, id: u64) -> Option<String> {
        let mut state = self.state.locked();
        let (session_id, session) =
            state.sessions.iter_mut().find(|(_, s)| s.generation == number && s.turn == Some(id))?;
        session.turn = None;
        Some(session_id.clone())
    }

    fn end_turn(&self, session_id: &str, number: u64, id: Option<u64>) {
        let mut state = self.state.locked();
        if let Some(session) = state.sessions.get_mut(session_id)
            && session.generation == number
            && (id.is_none() || session.turn == id || session.turn == Some(0))
        {
            session.turn = None;
        }
    }

    /// `session/cancel`; the session's pending permission requests are answered `cancelled`, as
    /// ACP requires of a client that cancels.
    pub(crate) fn cancel(&self, session_id: &str) -> Result<Value, AcpError> {
        let (generation, _) = self.ready()?;
        let number = generation.number;
        let (running, waiting) = {
            let mut state = self.state.locked();
            let Some(session) = state.sessions.get(session_id) else {
                return Err(AcpError::NotFound(format!("no session {session_id:?} on ACP connection {}", self.id)));
            };
            let running = session.turn.is_some();
            let keys: Vec<String> = state
                .interactions
                .iter()
                .filter(|(_, i)| i.session_id.as_deref() == Some(session_id) && i.generation == number)
                .map(|(k, _)| k.clone())
                .collect();
            let waiting: Vec<(String, Interaction)> =
                keys.into_iter().filter_map(|k| state.interactions.remove(&k).map(|i| (k, i))).collect();
            (running, waiting)
        };
        self.write(
            number,
            &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}),
        )?;
        for (key, interaction) in waiting {
            let result = match interaction.kind {
                InteractionKind::Permission => json!({"outcome": {"outcome": "cancelled"}}),
                InteractionKind::Elicitation => json!({"action": "cancel"}),
            };
            let sequence = self.write(number, &json!({"jsonrpc": "2.0", "id": interaction.id, "result": result}))?;
            self.notice(number, sequence, "interaction_settled", interaction.session_id, Some(key));
        }
        Ok(json!({"cancelled": true, "turn_running": running}))
    }

    /// Sets a session option or its mode.
    pub(crate) async fn configure(&self, session_id: &str, change: ConfigChange) -> Result<Value, AcpError> {
        let (generation, _) = self.ready()?;
        self.known_session(session_id)?;
        let (method, params) = match change {
            ConfigChange::Option { config_id, value } => {
                ("session/set_config_option", json!({"sessionId": session_id, "configId": config_id, "value": value}))
            }
            ConfigChange::Mode(mode) => ("session/set_mode", json!({"sessionId": session_id, "modeId": mode})),
        };
        let result = self.call(&generation, method, params).await?;
        if let Some(options) = result.get("configOptions")
            && let Some(session) = self.state.locked().sessions.get_mut(session_id)
        {
            session.setup["config_options"] = options.clone();
        }
        Ok(json!({"session_id": session_id, "result": result}))
    }

    /// One of ego's extensions ([`super::requests::EXTENSIONS`]).
    pub(crate) async fn extension(&self, session_id: &str, method: &str) -> Result<Value, AcpError> {
        let (generation, _) = self.ready()?;
        self.known_session(session_id)?;
        let result = self.call(&generation, method, json!({"sessionId": session_id})).await?;
        Ok(json!({"session_id": session_id, "result": result}))
    }

    fn known_session(&self, session_id: &str) -> Result<(), AcpError> {
        if self.state.locked().sessions.contains_key(session_id) {
            Ok(())
        } else {
            Err(AcpError::NotFound(format!("no session {session_id:?} on ACP connection {}", self.id)))
        }
    }
}

/// A JSON-RPC id as the routes name it: a number's digits, or the string itself.
fn key_of(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn op_done(op: SessionOp) -> &'static str {
    if op == SessionOp::Delete { "deleted" } else { "closed" }
}

fn session_result(session_id: &str, result: &Value) -> Value {
    json!({
        "session_id": session_id,
        "modes": result.get("modes"),
        "models": result.get("models"),
        "config_options": result.get("configOptions"),
    })
}

fn session_json(id: &str, session: &SessionInfo, generation: u64, phase: Phase) -> Value {
    let attached = session.generation == generation && phase == Phase::Ready;
    json!({
        "session_id": id,
        "cwd": session.cwd,
        "attached": attached,
        "turn_running": attached && session.turn.is_some(),
        "title": session.title,
        "current_mode": session.current_mode,
        "modes": session.setup.get("modes"),
        "models": session.setup.get("models"),
        "config_options": session.setup.get("config_options"),
    })
}
