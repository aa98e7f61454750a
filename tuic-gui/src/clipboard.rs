//! xterm's two clipboards: PRIMARY (a selection is copied there as it is made, middle-click and
//! Shift+Insert paste it) and CLIPBOARD (Ctrl+Shift+C/V). One process-wide handle: on X11 the
//! handle's thread serves the selection to other programs, so it lives as long as the window.

use std::sync::{Mutex, OnceLock};

use arboard::Clipboard;

use crate::lock::Recover as _;

fn with<T>(f: impl FnOnce(&mut Clipboard) -> Option<T>) -> Option<T> {
    static HANDLE: OnceLock<Mutex<Option<Clipboard>>> = OnceLock::new();
    let handle = HANDLE.get_or_init(|| Mutex::new(Clipboard::new().ok()));
    handle.locked().as_mut().and_then(f)
}

#[cfg(target_os = "linux")]
pub(crate) fn set_primary(text: &str) {
    use arboard::{LinuxClipboardKind, SetExtLinux as _};
    with(|c| c.set().clipboard(LinuxClipboardKind::Primary).text(text.to_owned()).ok());
}

#[cfg(target_os = "linux")]
pub(crate) fn primary() -> Option<String> {
    use arboard::{GetExtLinux as _, LinuxClipboardKind};
    with(|c| c.get().clipboard(LinuxClipboardKind::Primary).text().ok())
}

/// Without a PRIMARY selection (not X11/Wayland), the one clipboard stands in.
#[cfg(not(target_os = "linux"))]
pub(crate) fn set_primary(_text: &str) {}

#[cfg(not(target_os = "linux"))]
pub(crate) fn primary() -> Option<String> {
    clipboard()
}

pub(crate) fn set_clipboard(text: &str) {
    with(|c| c.set_text(text.to_owned()).ok());
}

pub(crate) fn clipboard() -> Option<String> {
    with(|c| c.get_text().ok())
}
