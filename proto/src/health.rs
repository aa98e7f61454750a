//! `/health`, `/api/version` and `/auth/hash-password` bodies.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub ok: bool,
    pub uptime_secs: u64,
    pub session_count: usize,
    pub protocol_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_path: Option<String>,
    /// Where remote access listens, when it is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_address: Option<String>,
    /// The daemon's process id: the same across an upgrade in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Names this process image: new after every start and every upgrade in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Version {
    pub name: String,
    pub version: String,
    pub protocol_version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HashPasswordRequest {
    pub password: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HashPasswordResponse {
    pub hash: String,
}
