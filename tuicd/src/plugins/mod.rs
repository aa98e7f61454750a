//! Plugins, as far as the daemon serves them: the developer guide (`GET /plugins/docs`), each
//! plugin's data files (`data.rs`) and the frontends' output watchers (`watchers.rs`, matched on
//! each session's own task through [`SessionTap`]). Plugin code itself runs in the frontends.

pub(crate) mod data;
mod lines;
pub(crate) mod watchers;

pub(crate) use watchers::{OutputWatchers, SessionTap};

/// The plugin developer guide, in Markdown (`GET /plugins/docs` answers `{content}`).
pub(crate) const GUIDE: &str = include_str!("guide.md");
