//! The Peers view's data: `GET /peers`, the selected peer's `GET /peers/:id/inbox` and the
//! progress journal (`GET /progress`), polled every [`PEERS_INTERVAL`] while the view is open,
//! and at once when it opens, its selection changes, or the bus says a peer came or went.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use proto::peers::{PeerInbox, PeerList};
use tokio::sync::Notify;

use super::api::ApiError;
use super::{Handle, JOURNAL_KEPT};
use crate::lock::Recover as _;

/// How often the open Peers view is refreshed.
const PEERS_INTERVAL: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, Default, PartialEq)]
struct Wanted {
    visible: bool,
    /// The selected peer's `tuic_session`.
    selected: Option<String>,
}

/// What the UI shows of the peers, and the poller's wake-up.
#[derive(Clone, Default)]
pub(super) struct Watch {
    wanted: Arc<Mutex<Wanted>>,
    wake: Arc<Notify>,
}

impl Watch {
    pub(super) fn set(&self, visible: bool, selected: Option<&str>) {
        let wanted = Wanted { visible, selected: selected.map(str::to_owned) };
        let mut current = self.wanted.locked();
        if *current != wanted {
            *current = wanted;
            drop(current);
            self.wake();
        }
    }

    pub(super) fn wake(&self) {
        self.wake.notify_one();
    }
}

pub(super) async fn follow(handle: Handle) {
    loop {
        let wanted = handle.peers.wanted.locked().clone();
        if wanted.visible {
            poll(&handle, wanted.selected.as_deref()).await;
            handle.repaint.request();
        }
        tokio::select! {
            () = tokio::time::sleep(PEERS_INTERVAL) => {}
            () = handle.peers.wake.notified() => {}
        }
    }
}

async fn poll(handle: &Handle, selected: Option<&str>) {
    let api = handle.api.locked().clone();
    let peers = api.get("/peers").await.and_then(parse::<PeerList>);
    let journal = api.get(&format!("/progress?limit={JOURNAL_KEPT}")).await;
    let inbox = match selected {
        Some(id) => Some(api.get(&format!("/peers/{id}/inbox")).await.and_then(parse::<PeerInbox>)),
        None => None,
    };
    let mut snap = handle.snapshot.locked();
    // Offline or refused: the poller of `/health` says so; the last lists stay on screen.
    if let Ok(list) = peers {
        snap.peers = list.peers;
    }
    if let Ok(journal) = journal
        && let Some(entries) = journal["entries"].as_array()
    {
        snap.journal = entries.iter().cloned().collect();
    }
    snap.inbox = inbox.map(|answer| match answer {
        Ok(inbox) => Ok(inbox),
        Err(ApiError::Status(404, _)) => Err("this peer is gone (unregistered)".to_owned()),
        Err(e) => Err(e.to_string()),
    });
}

fn parse<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, ApiError> {
    serde_json::from_value(value).map_err(|e| ApiError::Offline(format!("unexpected answer: {e}")))
}
