//! The daemon's configuration: `config.json` in the config dir.
//!
//! [`AppConfig`] is the typed model with every default; [`store`] loads and saves it atomically;
//! [`merge`] applies partial updates and redacts secrets for responses; [`tls`] reads the TLS
//! settings into a rustls server config.

pub(crate) mod apply;
pub(crate) mod merge;
pub(crate) mod model;
pub(crate) mod origins;
pub(crate) mod prompts;
pub(crate) mod store;
pub(crate) mod tls;

pub(crate) use model::{AppConfig, AuthConfig, TlsConfig};
pub(crate) use store::{ConfigError, ConfigStore};
