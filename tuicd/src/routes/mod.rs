//! Route handlers, one module per area. Handlers take typed input and return `ApiResult`.

pub(crate) mod agents;
pub(crate) mod auth;
pub(crate) mod capture;
pub(crate) mod compose;
pub(crate) mod config;
pub(crate) mod events;
pub(crate) mod fs;
pub(crate) mod fs_transfer;
pub(crate) mod github;
pub(crate) mod health;
pub(crate) mod mobile;
pub(crate) mod monitor;
pub(crate) mod peers;
pub(crate) mod plugins;
pub(crate) mod progress;
pub(crate) mod repo;
pub(crate) mod repos;
pub(crate) mod sessions;
pub(crate) mod stream;
mod stream_direct;
mod stream_encode;
pub(crate) mod ui;
pub(crate) mod ui_screenshot;
pub(crate) mod upstream_oauth;
pub(crate) mod upstream_status;
pub(crate) mod upstreams;
pub(crate) mod worktrees;
