//! One size for a session several clients draw: tmux's `window-size`. Each attached stream that
//! reports its size (`?rows=&cols=`, then `resize` frames, or a REST resize naming it) is a client;
//! a REST or MCP resize naming no attached client sets the session's manual size. The rule
//! ([`WindowSize`]: the session's own, else the daemon's) picks the size from them:
//! - `latest`: the size of the client that most recently sent input or a size (the manual size
//!   counts as such a client, active when it was set);
//! - `smallest` / `largest`: the smallest (largest) rows and cols over the attached clients with a
//!   size, each dimension on its own; the manual size only while no such client is attached;
//! - `manual`: the manual size only.
//!
//! With nothing to choose from the session keeps its size. A chosen size that differs from the
//! current one resizes the screen model and the PTY and goes to every stream as a `resize` frame
//! (`SessionEvent::Resize`). The clients are held in one std lock, taken before the session's
//! output and screen locks and held while a chosen size is applied, so sizes apply in the order
//! they were chosen.

use std::sync::{Arc, MutexGuard};

pub(crate) use proto::session::WindowSize;

use super::{Session, SessionError};
use crate::lock::Recover;

#[derive(Debug)]
struct Client {
    id: u64,
    name: String,
    size: Option<(u16, u16)>,
    /// The activity sequence of its latest input or size.
    active: u64,
}

/// The session's size clients (see the module docs).
#[derive(Debug)]
pub(super) struct Sizes {
    /// The session's own rule (`window_size` at create).
    rule: Option<WindowSize>,
    /// The daemon's rule, as last passed in by a client's caller.
    default: WindowSize,
    clients: Vec<Client>,
    /// The manual size and the activity sequence it was set at.
    manual: Option<((u16, u16), u64)>,
    seq: u64,
    next_id: u64,
}

impl Sizes {
    pub(super) fn new(rule: Option<WindowSize>) -> Self {
        Self { rule, default: WindowSize::default(), clients: Vec::new(), manual: None, seq: 0, next_id: 0 }
    }

    /// The session's own rule, if it was created with one.
    pub(super) fn own_rule(&self) -> Option<WindowSize> {
        self.rule
    }

    fn rule(&self) -> WindowSize {
        self.rule.unwrap_or(self.default)
    }

    fn tick(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// The size the rule picks now, if anything to pick from.
    fn choose(&self) -> Option<(u16, u16)> {
        let sized = || self.clients.iter().filter_map(|c| c.size.map(|s| (s, c.active)));
        match self.rule() {
            WindowSize::Manual => self.manual.map(|(size, _)| size),
            WindowSize::Latest => sized().chain(self.manual).max_by_key(|(_, active)| *active).map(|(size, _)| size),
            rule @ (WindowSize::Smallest | WindowSize::Largest) => {
                let pick = |a: u16, b: u16| if rule == WindowSize::Smallest { a.min(b) } else { a.max(b) };
                sized()
                    .map(|(size, _)| size)
                    .reduce(|(r1, c1), (r2, c2)| (pick(r1, r2), pick(c1, c2)))
                    .or(self.manual.map(|(size, _)| size))
            }
        }
    }
}

/// One attached stream's place among the size clients; dropping it removes its size.
pub(crate) struct SizeClient {
    session: Arc<Session>,
    id: u64,
}

impl std::fmt::Debug for SizeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SizeClient").field("session", &self.session.id).field("id", &self.id).finish()
    }
}

impl SizeClient {
    /// The client's new size (it counts as activity).
    pub(crate) fn report(&self, rows: u16, cols: u16) -> Result<(), SessionError> {
        super::spawn::check_size("rows", rows)?;
        super::spawn::check_size("cols", cols)?;
        self.session.with_sizes(|sizes| {
            let seq = sizes.tick();
            if let Some(client) = sizes.clients.iter_mut().find(|c| c.id == self.id) {
                client.size = Some((rows, cols));
                client.active = seq;
            }
            true
        })
    }

    /// The client sent input: under `latest` the session takes its size.
    pub(crate) fn active(&self) {
        let _ = self.session.with_sizes(|sizes| {
            // Already the latest: nothing can change.
            if sizes.clients.iter().find(|c| c.id == self.id).is_none_or(|c| c.active == sizes.seq) {
                return false;
            }
            let seq = sizes.tick();
            if let Some(client) = sizes.clients.iter_mut().find(|c| c.id == self.id) {
                client.active = seq;
            }
            // Only the latest client's size counts under `latest`; the other rules ignore activity.
            sizes.rule() == WindowSize::Latest
        });
    }
}

impl Drop for SizeClient {
    fn drop(&mut self) {
        let _ = self.session.with_sizes(|sizes| {
            sizes.clients.retain(|c| c.id != self.id);
            true
        });
    }
}

impl Session {
    /// Attaches a stream as a size client named `name` (a fresh `ws-<n>` when absent) with its
    /// size, if it reported one; `default` is the daemon's rule now.
    pub(crate) fn attach_size_client(
        self: &Arc<Self>,
        name: Option<&str>,
        size: Option<(u16, u16)>,
        default: WindowSize,
    ) -> SizeClient {
        let size = size.filter(|(rows, cols)| {
            super::spawn::check_size("rows", *rows).is_ok() && super::spawn::check_size("cols", *cols).is_ok()
        });
        let mut id = 0;
        let _ = self.with_sizes(|sizes| {
            sizes.default = default;
            sizes.next_id += 1;
            id = sizes.next_id;
            let active = if size.is_some() { sizes.tick() } else { 0 };
            let name = name.map_or_else(|| format!("ws-{id}"), str::to_owned);
            sizes.clients.push(Client { id, name, size, active });
            size.is_some()
        });
        SizeClient { session: self.clone(), id }
    }

    /// A resize from REST or MCP: the size of the attached clients named `client`, else the
    /// manual size. `default` is the daemon's rule now (`None`: the one last passed in).
    pub(crate) fn resize_for(
        &self,
        client: Option<&str>,
        rows: u16,
        cols: u16,
        default: Option<WindowSize>,
    ) -> Result<(), SessionError> {
        super::spawn::check_size("rows", rows)?;
        super::spawn::check_size("cols", cols)?;
        self.ensure_running("resizes")?;
        self.with_sizes(|sizes| {
            if let Some(default) = default {
                sizes.default = default;
            }
            let seq = sizes.tick();
            let mut named = false;
            for c in sizes.clients.iter_mut().filter(|c| Some(c.name.as_str()) == client) {
                c.size = Some((rows, cols));
                c.active = seq;
                named = true;
            }
            if !named {
                sizes.manual = Some(((rows, cols), seq));
            }
            true
        })
    }

    /// Input from the attached clients named `client` (REST write): under `latest` the session
    /// takes their size.
    pub(crate) fn client_active(&self, client: &str, default: WindowSize) {
        let _ = self.with_sizes(|sizes| {
            sizes.default = default;
            if !sizes.clients.iter().any(|c| c.name == client) {
                return false;
            }
            let seq = sizes.tick();
            sizes.clients.iter_mut().filter(|c| c.name == client).for_each(|c| c.active = seq);
            sizes.rule() == WindowSize::Latest
        });
    }

    /// The session's size now: (rows, cols).
    pub(crate) fn size(&self) -> (u16, u16) {
        self.term().screen.size()
    }

    /// Changes the clients under the lock, then (when `change` says the pick may differ) applies
    /// the size the rule picks, still under it.
    fn with_sizes(&self, change: impl FnOnce(&mut Sizes) -> bool) -> Result<(), SessionError> {
        let mut sizes: MutexGuard<'_, Sizes> = self.sizes.locked();
        if !change(&mut sizes) {
            return Ok(());
        }
        match sizes.choose() {
            Some((rows, cols)) => self.set_size(rows, cols),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(rule: WindowSize) -> Sizes {
        Sizes::new(Some(rule))
    }

    fn add(s: &mut Sizes, size: Option<(u16, u16)>) -> u64 {
        s.next_id += 1;
        let active = if size.is_some() { s.tick() } else { 0 };
        s.clients.push(Client { id: s.next_id, name: format!("ws-{}", s.next_id), size, active });
        s.next_id
    }

    #[test]
    fn each_rule_picks_its_size() {
        for (rule, want) in [
            (WindowSize::Latest, Some((20, 60))),
            (WindowSize::Smallest, Some((20, 60))),
            (WindowSize::Largest, Some((30, 100))),
            (WindowSize::Manual, None),
        ] {
            let mut s = sizes(rule);
            add(&mut s, Some((30, 100)));
            add(&mut s, None);
            add(&mut s, Some((20, 60)));
            assert_eq!(s.choose(), want, "{rule:?}");
        }
        // Each dimension on its own.
        let mut s = sizes(WindowSize::Smallest);
        add(&mut s, Some((30, 60)));
        add(&mut s, Some((20, 100)));
        assert_eq!(s.choose(), Some((20, 60)));
    }

    #[test]
    fn latest_follows_activity_and_the_manual_size() {
        let mut s = sizes(WindowSize::Latest);
        let a = add(&mut s, Some((30, 100)));
        add(&mut s, Some((20, 60)));
        let seq = s.tick();
        s.clients.iter_mut().find(|c| c.id == a).unwrap().active = seq;
        assert_eq!(s.choose(), Some((30, 100)));
        let seq = s.tick();
        s.manual = Some(((40, 120), seq));
        assert_eq!(s.choose(), Some((40, 120)));
    }

    #[test]
    fn smallest_uses_the_manual_size_only_without_clients() {
        let mut s = sizes(WindowSize::Smallest);
        s.manual = Some(((10, 10), 1));
        assert_eq!(s.choose(), Some((10, 10)));
        add(&mut s, Some((30, 100)));
        assert_eq!(s.choose(), Some((30, 100)));
        s.clients.clear();
        s.manual = None;
        assert_eq!(s.choose(), None);
    }

    #[test]
    fn the_default_rule_applies_without_the_sessions_own() {
        let mut s = Sizes::new(None);
        s.default = WindowSize::Largest;
        add(&mut s, Some((30, 60)));
        add(&mut s, Some((20, 100)));
        assert_eq!(s.choose(), Some((30, 100)));
    }
}
