//! Route handlers, one module per area. Handlers take typed input and return `ApiResult`.

pub mod agents;
pub mod auth;
pub mod capture;
pub mod compose;
pub mod config;
pub mod events;
pub mod health;
pub mod monitor;
pub mod sessions;
pub mod stream;
mod stream_encode;
