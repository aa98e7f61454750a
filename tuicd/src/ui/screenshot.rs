//! Screenshots: the daemon has no window, so `ui action=screenshot` asks a connected GUI client
//! (one whose `/events` declared `?ui=screenshot`) with `ui-screenshot-requested {id}` and waits
//! at most [`UI_SCREENSHOT_TIMEOUT`] for its `POST /ui/screenshot/:id {png_base64}`. The PNG is
//! saved in the config dir's `screenshots/`, which keeps the newest [`UI_SCREENSHOT_KEEP`].

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use serde::Serialize;
use tokio::sync::oneshot;

use super::{Capability, Ui};
use crate::limits::{UI_SCREENSHOT_KEEP, UI_SCREENSHOT_MAX_BYTES, UI_SCREENSHOT_PENDING_MAX, UI_SCREENSHOT_TIMEOUT};
use crate::lock::Recover;

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Screenshot requests waiting for a client, by id.
#[derive(Default)]
pub(super) struct Shots {
    next: u64,
    pending: HashMap<String, oneshot::Sender<Vec<u8>>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ScreenshotError {
    #[error("no GUI client connected that can take a screenshot (one opens /events?ui=screenshot)")]
    NoClient,
    #[error("{UI_SCREENSHOT_PENDING_MAX} screenshots are already waiting for a client")]
    TooMany,
    #[error("no GUI client sent the screenshot within {}s", UI_SCREENSHOT_TIMEOUT.as_secs())]
    TimedOut,
    #[error("the GUI client that could take the screenshot disconnected")]
    ClientLeft,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DeliverError {
    /// No request with that id is waiting (unknown, answered, or given up).
    NotFound,
    /// The body is not a PNG the daemon accepts; the message names what is wrong.
    Invalid(String),
}

#[derive(Serialize)]
struct Requested<'a> {
    id: &'a str,
}

impl Ui {
    /// Asks a GUI client for a screenshot and waits for its PNG.
    pub(crate) async fn screenshot(&self) -> Result<Vec<u8>, ScreenshotError> {
        self.screenshot_within(UI_SCREENSHOT_TIMEOUT).await
    }

    pub(super) async fn screenshot_within(&self, window: Duration) -> Result<Vec<u8>, ScreenshotError> {
        if self.answerers(Capability::Screenshot) == 0 {
            return Err(ScreenshotError::NoClient);
        }
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut shots = self.shots.locked();
            if shots.pending.len() >= UI_SCREENSHOT_PENDING_MAX {
                return Err(ScreenshotError::TooMany);
            }
            shots.next += 1;
            let id = format!("screenshot-{}", shots.next);
            shots.pending.insert(id.clone(), tx);
            id
        };
        // Whatever ends the wait, the request stops being answerable.
        let _forget = Forget { ui: self, id: &id };
        self.events().publish(proto::events::UI_SCREENSHOT_REQUESTED, &Requested { id: &id });
        let mut answerers = self.answerers.subscribe();
        let none_left =
            |counts: &HashMap<Capability, usize>| counts.get(&Capability::Screenshot).copied().unwrap_or(0) == 0;
        tokio::select! {
            png = rx => png.map_err(|_| ScreenshotError::ClientLeft),
            () = tokio::time::sleep(window) => Err(ScreenshotError::TimedOut),
            _ = answerers.wait_for(none_left) => Err(ScreenshotError::ClientLeft),
        }
    }

    /// A client's answer to screenshot `id`. A bad body leaves the request waiting.
    pub(crate) fn deliver_screenshot(&self, id: &str, png_base64: &str) -> Result<(), DeliverError> {
        if !self.shots.locked().pending.contains_key(id) {
            return Err(DeliverError::NotFound);
        }
        let png = decode_png(png_base64).map_err(DeliverError::Invalid)?;
        let waiter = self.shots.locked().pending.remove(id).ok_or(DeliverError::NotFound)?;
        waiter.send(png).map_err(|_| DeliverError::NotFound)
    }
}

struct Forget<'a> {
    ui: &'a Ui,
    id: &'a str,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.ui.shots.locked().pending.remove(self.id);
    }
}

/// The PNG in `png_base64`, checked for size and signature.
pub(crate) fn decode_png(png_base64: &str) -> Result<Vec<u8>, String> {
    if png_base64.len() > UI_SCREENSHOT_MAX_BYTES / 3 * 4 + 4 {
        return Err(format!("png_base64 is over {UI_SCREENSHOT_MAX_BYTES} bytes once decoded"));
    }
    let png = base64::engine::general_purpose::STANDARD
        .decode(png_base64.trim())
        .map_err(|e| format!("png_base64 is not base64: {e}"))?;
    if png.len() > UI_SCREENSHOT_MAX_BYTES {
        return Err(format!("png_base64 decodes to {} bytes; at most {UI_SCREENSHOT_MAX_BYTES}", png.len()));
    }
    if !png.starts_with(PNG_SIGNATURE) {
        return Err("png_base64 is not a PNG image (no PNG signature)".into());
    }
    Ok(png)
}

/// Writes the PNG as `<config dir>/screenshots/screenshot-<ms>.png` (0600) and deletes all but
/// the newest [`UI_SCREENSHOT_KEEP`]. Blocking: call it on the blocking pool.
pub(crate) fn save_png(config_dir: &Path, png: &[u8]) -> std::io::Result<PathBuf> {
    let dir = config_dir.join("screenshots");
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir)?;
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let mut path = dir.join(format!("screenshot-{stamp}.png"));
    let mut n = 1;
    while path.exists() {
        path = dir.join(format!("screenshot-{stamp}-{n}.png"));
        n += 1;
    }
    let mut file = OpenOptions::new().create_new(true).write(true).mode(0o600).open(&path)?;
    file.write_all(png)?;
    file.sync_all()?;
    prune(&dir);
    Ok(path)
}

fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut shots: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".png"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if shots.len() <= UI_SCREENSHOT_KEEP {
        return;
    }
    shots.sort();
    for (_, old) in &shots[..shots.len() - UI_SCREENSHOT_KEEP] {
        let _ = std::fs::remove_file(old);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::events::EventBus;

    fn png_base64() -> String {
        base64::engine::general_purpose::STANDARD.encode([PNG_SIGNATURE, b"rest"].concat())
    }

    #[tokio::test]
    async fn a_screenshot_waits_for_the_clients_png_and_a_bad_body_leaves_it_waiting() {
        let ui = Arc::new(Ui::new(Arc::new(EventBus::new())));
        assert_eq!(ui.screenshot().await, Err(ScreenshotError::NoClient));
        assert_eq!(ui.events().subscribe(None).last_id, 0, "nothing was asked");
        let _gui = ui.answerer(vec![Capability::Screenshot]);
        let asking = tokio::spawn({
            let ui = ui.clone();
            async move { ui.screenshot_within(Duration::from_secs(5)).await }
        });
        let mut id = String::new();
        for _ in 0..1000 {
            if let Some(event) = ui.events().since(0).1.last() {
                id = serde_json::from_str::<serde_json::Value>(&event.data).unwrap()["id"].as_str().unwrap().to_owned();
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(ui.deliver_screenshot("screenshot-99", &png_base64()), Err(DeliverError::NotFound));
        let not_png = base64::engine::general_purpose::STANDARD.encode(b"GIF89a");
        assert!(matches!(ui.deliver_screenshot(&id, &not_png), Err(DeliverError::Invalid(e)) if e.contains("PNG")));
        assert!(matches!(ui.deliver_screenshot(&id, "%%%"), Err(DeliverError::Invalid(e)) if e.contains("base64")));
        assert_eq!(ui.deliver_screenshot(&id, &png_base64()), Ok(()));
        assert!(asking.await.unwrap().unwrap().starts_with(PNG_SIGNATURE));
        assert_eq!(ui.deliver_screenshot(&id, &png_base64()), Err(DeliverError::NotFound), "answered once");
    }

    #[tokio::test]
    async fn the_wait_is_bounded_and_ends_when_the_client_leaves() {
        let ui = Arc::new(Ui::new(Arc::new(EventBus::new())));
        let gui = ui.answerer(vec![Capability::Screenshot]);
        assert_eq!(ui.screenshot_within(Duration::from_millis(20)).await, Err(ScreenshotError::TimedOut));
        let asking = tokio::spawn({
            let ui = ui.clone();
            async move { ui.screenshot_within(Duration::from_secs(30)).await }
        });
        while ui.shots.locked().pending.is_empty() {
            tokio::task::yield_now().await;
        }
        drop(gui);
        assert_eq!(asking.await.unwrap(), Err(ScreenshotError::ClientLeft));
        assert!(ui.shots.locked().pending.is_empty(), "nothing left waiting");
    }

    #[test]
    fn saved_screenshots_are_private_and_only_the_newest_are_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let png = [PNG_SIGNATURE, b"x"].concat();
        let first = save_png(dir.path(), &png).unwrap();
        assert_eq!(std::fs::metadata(&first).unwrap().permissions().mode() & 0o777, 0o600);
        for _ in 0..UI_SCREENSHOT_KEEP + 3 {
            save_png(dir.path(), &png).unwrap();
        }
        assert_eq!(std::fs::read_dir(dir.path().join("screenshots")).unwrap().count(), UI_SCREENSHOT_KEEP);
    }
}
