//! The daemon's configuration: `config.json` in the config dir.
//!
//! [`AppConfig`] is the typed model with every default; [`store`] loads and saves it atomically;
//! [`merge`] applies partial updates and redacts secrets for responses; [`tls`] reads the TLS
//! settings into a rustls server config.

pub mod merge;
pub mod model;
pub mod store;
pub mod tls;

pub use model::{AppConfig, AuthConfig, ServerConfig, ServicesConfig, TlsConfig};
pub use store::{ConfigError, ConfigStore};
