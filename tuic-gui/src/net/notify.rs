//! Desktop notifications through the freedesktop Notifications interface on the session bus
//! (`org.freedesktop.Notifications.Notify`), spoken with zbus: pure Rust, already in the
//! workspace's tree, so no libnotify or `notify-send` is needed. A desktop without a session bus
//! or a notification server simply shows none; the window's own visual bell and urgency hint
//! still tell.

use std::collections::HashMap;

use zbus::zvariant::Value;

/// Sessions whose last notification id is kept (to replace it rather than pile up); past it the
/// ids are forgotten and the next notifications start fresh.
const IDS_KEPT: usize = 64;
/// How long the server shows a notification, in milliseconds.
const EXPIRE_MS: i32 = 8_000;

/// One desktop notification for a session.
#[derive(Debug)]
pub(crate) struct Notification {
    pub session_id: String,
    pub summary: String,
    pub body: String,
    /// A question waits on the person: critical urgency; a bell is normal.
    pub critical: bool,
}

/// Notifications waiting for the bus; past it new ones are dropped (they are rate-limited per
/// session already, so only a hung notification server fills it).
pub(super) const QUEUE: usize = 16;

/// Sends each queued notification in turn, on its own task so a slow notification server never
/// holds up the poll loop.
pub(super) async fn deliver(mut queue: tokio::sync::mpsc::Receiver<Notification>) {
    let mut notifier = Notifier::default();
    while let Some(notification) = queue.recv().await {
        notifier.send(notification).await;
    }
}

/// The session bus connection, opened on first use and again after a failure, and each
/// session's last notification id.
#[derive(Default)]
struct Notifier {
    connection: Option<zbus::Connection>,
    ids: HashMap<String, u32>,
    /// A failure is told on stderr once, not once per bell.
    told: bool,
}

impl Notifier {
    async fn send(&mut self, notification: Notification) {
        match self.call(&notification).await {
            Ok(id) => {
                if self.ids.len() >= IDS_KEPT {
                    self.ids.clear();
                }
                self.ids.insert(notification.session_id, id);
            }
            Err(e) => {
                self.connection = None;
                if !self.told {
                    self.told = true;
                    eprintln!("tuic-gui: no desktop notification: {e}");
                }
            }
        }
    }

    async fn call(&mut self, n: &Notification) -> zbus::Result<u32> {
        let connection = match &self.connection {
            Some(connection) => connection.clone(),
            None => {
                let connection = zbus::Connection::session().await?;
                self.connection = Some(connection.clone());
                connection
            }
        };
        let replaces = self.ids.get(&n.session_id).copied().unwrap_or(0);
        let mut hints: HashMap<&str, Value> = HashMap::new();
        hints.insert("urgency", Value::U8(if n.critical { 2 } else { 1 }));
        hints.insert("category", Value::from(if n.critical { "im.received" } else { "presence" }));
        let actions: Vec<&str> = Vec::new();
        let body =
            ("tuic", replaces, "utilities-terminal", n.summary.as_str(), n.body.as_str(), actions, hints, EXPIRE_MS);
        let reply = connection
            .call_method(
                Some("org.freedesktop.Notifications"),
                "/org/freedesktop/Notifications",
                Some("org.freedesktop.Notifications"),
                "Notify",
                &body,
            )
            .await?;
        reply.body().deserialize::<u32>()
    }
}
