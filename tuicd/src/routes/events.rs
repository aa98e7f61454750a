//! `GET /events`: the SSE event bus. `?types=a,b` filters by kind; `Last-Event-ID` (header or
//! `?last_event_id=`) replays what a reconnecting client missed; a `lagged` event says how many
//! events could not be replayed. Keep-alive comments every 15 s. The stream ends on shutdown.
//! `?ui=confirm,screenshot` declares a UI client: while its stream is open it counts as one
//! that can answer those requests (see [`crate::ui`]).

use std::sync::Arc;

use bytes::Bytes;
use serde::Deserialize;
use tokio::sync::{broadcast, mpsc};

use crate::events::Event;
use crate::http::body::query;
use crate::http::sse::{encode, sse_response};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::limits::{SSE_KEEP_ALIVE, SSE_RETRY_MS};
use crate::state::App;
use crate::ui::Capability;

/// Frames buffered between the bus task and the socket; a slow reader stalls only its own task.
const SSE_CLIENT_QUEUE: usize = 64;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventsQuery {
    types: Option<String>,
    last_event_id: Option<u64>,
    ui: Option<String>,
}

pub(crate) async fn stream(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let params: EventsQuery = query(&req)?;
    let header_id = match req.headers().get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| ApiError::InvalidField("Last-Event-ID: must be a non-negative integer".into()))?,
        ),
    };
    let filter: Option<Vec<String>> =
        params.types.map(|t| t.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect());
    let after = header_id.or(params.last_event_id);
    let answerer = match params.ui.as_deref() {
        None => None,
        Some(list) => {
            let capabilities = ui_capabilities(list)?;
            if capabilities.contains(&Capability::Confirm) {
                // Counting a caller who may not answer as an answerer would hold a confirmation
                // for someone who can never give it.
                super::ui::require_person(app, caller).await?;
            }
            Some(app.ui.answerer(capabilities))
        }
    };
    let (tx, rx) = mpsc::channel::<Bytes>(SSE_CLIENT_QUEUE);
    // Subscribed before the head is answered: a client that acts on seeing the head (a UI
    // answerer, then the request it is to answer) misses no event published after it.
    let sub = app.events.subscribe(after);
    let app = app.clone();
    tokio::spawn(async move {
        // The answerer lives exactly as long as the stream: dropped when the pump ends.
        let _answerer = answerer;
        pump(app, sub, after, filter, tx).await;
    });
    Ok(sse_response(rx))
}

fn ui_capabilities(list: &str) -> Result<Vec<Capability>, ApiError> {
    let mut caps = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let cap = Capability::parse(name).ok_or_else(|| {
            ApiError::InvalidField(format!("ui: unknown capability {name:?}; expected {}", Capability::NAMES))
        })?;
        if !caps.contains(&cap) {
            caps.push(cap);
        }
    }
    if caps.is_empty() {
        return Err(ApiError::InvalidField(format!("ui: name at least one capability ({})", Capability::NAMES)));
    }
    Ok(caps)
}

fn lagged(missed: u64) -> Bytes {
    encode(None, proto::events::LAGGED, &format!("{{\"missed\":{missed}}}"))
}

async fn pump(
    app: App,
    sub: crate::events::Subscription,
    after: Option<u64>,
    filter: Option<Vec<String>>,
    tx: mpsc::Sender<Bytes>,
) {
    let wanted = |e: &Event| filter.as_ref().is_none_or(|f| f.iter().any(|k| k == e.kind));
    let mut live = sub.live;
    let mut last_sent = after.unwrap_or(sub.last_id);
    if tx.send(Bytes::from(format!("retry: {SSE_RETRY_MS}\n\n"))).await.is_err() {
        return;
    }
    if sub.missed > 0 && tx.send(lagged(sub.missed)).await.is_err() {
        return;
    }
    for event in sub.replay {
        last_sent = event.id;
        if wanted(&event) && tx.send(encode(Some(event.id), event.kind, &event.data)).await.is_err() {
            return;
        }
    }
    let mut keep_alive = tokio::time::interval(SSE_KEEP_ALIVE);
    keep_alive.tick().await;
    loop {
        let next: Vec<Arc<Event>> = tokio::select! {
            () = app.stopping() => return,
            // A client that went away stops counting (as a UI answerer) at once, not at the
            // next keep-alive.
            () = tx.closed() => return,
            _ = keep_alive.tick() => {
                if tx.send(Bytes::from_static(b": keep-alive\n\n")).await.is_err() { return; }
                continue;
            }
            received = live.recv() => match received {
                Ok(event) => vec![event],
                Err(broadcast::error::RecvError::Closed) => return,
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    // Fell behind the live channel: refill from the history, which reaches further.
                    let (missed, events) = app.events.since(last_sent);
                    if missed > 0 && tx.send(lagged(missed)).await.is_err() { return; }
                    events
                }
            },
        };
        for event in next {
            if event.id <= last_sent {
                continue;
            }
            last_sent = event.id;
            if wanted(&event) && tx.send(encode(Some(event.id), event.kind, &event.data)).await.is_err() {
                return;
            }
        }
    }
}
