//! The one delivery task: terminal-owned mail to channel pushes or the injection FIFO, at most one
//! typed entry per idle transition, orchestrator wake notices, child lifecycle mail.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use uuid::Uuid;

use super::view::View;
use crate::agent::AgentState;
use crate::agent_runtime::submit::{SubmitError, submit};
use crate::agent_runtime::{AgentLink, EdgeKind, LifecycleEdge};
use crate::limits::{CHANNEL_ECHO_SCAN_BYTES, CHANNEL_ECHO_WAIT, WAKE_NOTICE_EXPIRY};
use crate::messaging::injection::{QueueEntry, frame_for_terminal};
use crate::messaging::{AgentKind, AgentMessage, ChildState, Lifecycle, Liveness, WakeResult};
use crate::session::Session;
use crate::state::App;

/// `notifications/claude/channel` (seed: "Channel Push Delivery").
pub(super) const CHANNEL_METHOD: &str = "notifications/claude/channel";

/// `recheck` asks for another look at one terminal: after a write finished, a wake notice
/// expired, or a Compose command was queued.
pub(super) async fn run(
    app: App,
    mut edges: UnboundedReceiver<LifecycleEdge>,
    recheck: UnboundedSender<Uuid>,
    mut rechecks: UnboundedReceiver<Uuid>,
) {
    loop {
        let notified = app.peers.messaging.deliveries_notify().notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        for id in app.peers.messaging.pending_deliveries() {
            deliver(&app, id, &recheck);
        }
        tokio::select! {
            () = app.stopping() => return,
            () = &mut notified => {}
            Some(edge) = edges.recv() => on_edge(&app, edge, &recheck),
            Some(id) = rechecks.recv() => {
                release(&app, id, &recheck);
                wake(&app, id, &recheck);
            }
        }
    }
}

/// Routes a recipient's terminal-owned mail, then tries the terminal.
fn deliver(app: &App, id: Uuid, recheck: &UnboundedSender<Uuid>) {
    let taken = app.peers.messaging.take_deliveries(id, &View(app));
    for message in taken.payloads {
        if push_channel(app, id, &message) {
            tokio::spawn(confirm_channel(app.clone(), id, message, recheck.clone()));
        } else {
            app.peers.terminals().entry(id).or_default().queue.push_peer(message);
        }
    }
    release(app, id, recheck);
    if taken.wake_pending {
        wake(app, id, recheck);
    }
}

/// Pushes into a working Claude Code turn on every channel-capable stream of the recipient.
/// `false` when that route does not apply now (the message then goes to the FIFO).
fn push_channel(app: &App, id: Uuid, message: &AgentMessage) -> bool {
    let facts = View(app).terminal_facts(id);
    if !facts.is_some_and(|f| f.agent == AgentKind::ClaudeCode && f.lifecycle == Lifecycle::Working) {
        return false;
    }
    let notification = json!({
        "jsonrpc": "2.0",
        "method": CHANNEL_METHOD,
        "params": {
            "content": format!("Message from {}: {}", message.from_name, message.content),
            "meta": {
                "from_tuic_session": message.from_tuic_session,
                "from_name": message.from_name,
                "message_id": message.id,
            },
        },
    })
    .to_string();
    let streams = app.mcp.protocol_sessions.channel_streams(&id.to_string());
    let pushed = streams.iter().filter(|s| app.mcp.protocol_sessions.push(s, &notification)).count();
    if pushed > 0 {
        tracing::info!(source = "agent_msg", recipient = %id, message_id = %message.id, route = "sse_channel", "delivered");
    }
    pushed > 0
}

/// A pushed message counts as delivered once Claude Code shows it (`← <server>: Message from
/// <name>: ...` in its transcript). Claude Code drops channel pushes where its remote feature
/// flag keeps channels off, silently: a push not shown within [`CHANNEL_ECHO_WAIT`] is typed into
/// the terminal at its next idle instead, as for any busy recipient.
async fn confirm_channel(app: App, id: Uuid, message: AgentMessage, recheck: UnboundedSender<Uuid>) {
    let Some(session) = View(&app).session_of(id) else { return };
    let shown = format!("Message from {}", message.from_name);
    let deadline = tokio::time::Instant::now() + CHANNEL_ECHO_WAIT;
    let mut progress = session.screen_progress();
    loop {
        let screen = session.text_within(None, CHANNEL_ECHO_SCAN_BYTES).data;
        if screen.lines().any(|line| line.contains('←') && line.contains(&shown)) {
            return;
        }
        if session.exit_info().is_some() {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => break,
            _ = progress.changed() => {}
        }
    }
    tracing::info!(
        source = "agent_msg", recipient = %id, message_id = %message.id,
        "the channel push never showed in the recipient's terminal; typing it at its next idle"
    );
    app.peers.terminals().entry(id).or_default().queue.push_peer(message);
    let _ = recheck.send(id);
}

/// Types the next FIFO entry when the terminal is ready and this idle transition has not had one.
fn release(app: &App, id: Uuid, recheck: &UnboundedSender<Uuid>) {
    let Some(session) = View(app).session_of(id) else { return };
    let read_cursor = app.peers.messaging.read_cursor(id);
    let Some(link) = AgentLink::of(&session) else { return };
    let ready = link.with_tracker(|t| t.check_submit().is_ok());
    let entry = {
        let mut terminals = app.peers.terminals();
        let terminal = terminals.entry(id).or_default();
        if terminal.writing {
            return;
        }
        if let Some(cursor) = read_cursor {
            // A wait or inbox already saw these: typing them too would be a duplicate turn.
            terminal.queue.discard_observed(cursor);
        }
        let Some(entry) = terminal.queue.on_idle(ready) else { return };
        terminal.writing = true;
        entry
    };
    tokio::spawn(inject(app.clone(), id, session, entry, recheck.clone()));
}

async fn inject(app: App, id: Uuid, session: Arc<Session>, entry: QueueEntry, recheck: UnboundedSender<Uuid>) {
    let (text, message_id) = match &entry {
        QueueEntry::Peer(m) => (frame_for_terminal(&m.from_name, &m.content), Some(m.id.clone())),
        QueueEntry::Command(c) => (c.clone(), None),
    };
    let outcome = submit(&session, &text, None).await;
    {
        let mut terminals = app.peers.terminals();
        let terminal = terminals.entry(id).or_default();
        terminal.writing = false;
        let not_taken = matches!(&outcome, Ok(receipt) if !receipt.submitted);
        if not_taken || matches!(&outcome, Err(SubmitError::Refused(_))) {
            // Nothing reached the agent (refused before the first byte, or written but never
            // taken and cleared again): the entry keeps its place for the next chance.
            terminal.queue.restore(entry);
        }
    }
    match outcome {
        Ok(receipt) if !receipt.submitted => tracing::info!(
            source = "agent_msg", recipient = %id, message_id = message_id.as_deref(),
            reason = receipt.reason.as_deref(), "the recipient did not take the typed message; kept queued"
        ),
        Ok(receipt) => tracing::info!(
            source = "agent_msg", recipient = %id, message_id = message_id.as_deref(), route = "pty",
            acknowledged = receipt.acknowledged, "typed into the recipient's terminal"
        ),
        Err(SubmitError::Refused(receipt)) => tracing::debug!(
            source = "agent_msg", recipient = %id, reason = receipt.reason.as_deref(), "terminal not ready; kept queued"
        ),
        Err(SubmitError::Invalid(reason)) => {
            tracing::info!(source = "agent_msg", recipient = %id, %reason, "terminal gone; the inbox keeps the message")
        }
    }
    let _ = recheck.send(id);
}

/// Claims and types one orchestrator wake notice (or lifecycle summary) when the terminal is ready.
fn wake(app: &App, id: Uuid, recheck: &UnboundedSender<Uuid>) {
    if app.peers.terminals().get(&id).is_some_and(|t| t.writing) {
        return;
    }
    let Some(session) = View(app).session_of(id) else { return };
    let Some(notice) = app.peers.messaging.claim_wake(id, &View(app)) else { return };
    app.peers.terminals().entry(id).or_default().writing = true;
    let (app, recheck) = (app.clone(), recheck.clone());
    tokio::spawn(async move {
        let result = match submit(&session, &notice.text, None).await {
            Ok(receipt) if receipt.submitted && receipt.acknowledged => WakeResult::Confirmed,
            Ok(receipt) if !receipt.submitted => WakeResult::NotStarted,
            Ok(_) => WakeResult::Uncertain,
            Err(_) => WakeResult::NotStarted,
        };
        app.peers.messaging.report_wake(id, notice.attempt, result);
        app.peers.terminals().entry(id).or_default().writing = false;
        tracing::info!(source = "agent_msg", recipient = %id, route = "wake_notice", ?result, "orchestrator wake");
        if result == WakeResult::Uncertain {
            // The notice expires unconfirmed; the one retry needs a look once it has.
            let later = recheck.clone();
            tokio::spawn(async move {
                tokio::time::sleep(WAKE_NOTICE_EXPIRY).await;
                let _ = later.send(id);
            });
        }
        let _ = recheck.send(id);
    });
}

fn on_edge(app: &App, edge: LifecycleEdge, recheck: &UnboundedSender<Uuid>) {
    let Ok(id) = Uuid::parse_str(&edge.tuic_session) else { return };
    match edge.kind {
        EdgeKind::Agent { state, confirmed_idle, ready } => {
            let Some(state) = state else { return };
            let settled = {
                let mut terminals = app.peers.terminals();
                let terminal = terminals.entry(id).or_default();
                if state == AgentState::Working {
                    terminal.worked = true;
                    terminal.queue.on_busy();
                }
                // Lifecycle mail waits for the confirmed idle typing waits for (silence alone is
                // not the end of a turn), once per turn that worked.
                let settled = confirmed_idle && std::mem::take(&mut terminal.worked);
                settled.then_some(state)
            };
            if let Some(state) = settled {
                // A new busy-to-idle edge: the wake budget re-arms, the parent hears of it.
                app.peers.messaging.busy_to_idle_edge(id);
                let child = if state == AgentState::Completed { ChildState::Completed } else { ChildState::Idle };
                app.peers.messaging.child_lifecycle(id, child, &View(app));
            }
            if ready {
                release(app, id, recheck);
                wake(app, id, recheck);
            }
        }
        EdgeKind::Exited { exit_code } => {
            app.peers.terminals().remove(&id);
            app.peers.messaging.child_lifecycle(id, ChildState::Exited { exit_code }, &View(app));
        }
        // One prompt_delivery_failed to the parent (state only, like every lifecycle mail).
        EdgeKind::PromptUndelivered => {
            app.peers.messaging.child_lifecycle(id, ChildState::PromptDeliveryFailed, &View(app));
        }
    }
}
