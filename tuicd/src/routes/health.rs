//! `GET /health` and `GET /api/version`.

use proto::{Health, PROTOCOL_VERSION, Version};

use crate::http::ApiResult;
use crate::http::body::ok_json;
use crate::state::App;

/// The wire `Health`, plus `sandbox`: what confines `ai_terminal_run_command` on this kernel
/// (`{available, landlock_abi, network}` or `{available: false, reason, unsandboxed_allowed}`).
pub(crate) async fn health(app: &App) -> ApiResult {
    let mut body = serde_json::to_value(Health {
        ok: true,
        uptime_secs: app.started.elapsed().as_secs(),
        session_count: app.sessions.active_count(),
        protocol_version: PROTOCOL_VERSION.to_owned(),
        socket_path: Some(app.socket_path.display().to_string()),
        tcp_address: app.tcp.address().map(|a| a.to_string()),
        pid: Some(std::process::id()),
        boot_id: Some(app.boot_id.clone()),
    })
    .unwrap_or_default();
    let config = app.config.get();
    let sandbox = crate::sandbox::status().to_json(config.ai_terminal_allow_network, config.ai_terminal_unsandboxed);
    if let Some(fields) = body.as_object_mut() {
        fields.insert("sandbox".into(), sandbox);
        fields.insert("crash_recovery".into(), app.sessions.kept_by().into());
    }
    ok_json(&body)
}

pub(crate) async fn version() -> ApiResult {
    ok_json(&Version {
        name: "tuicd".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        protocol_version: PROTOCOL_VERSION.into(),
    })
}
