//! `GET /health` and `GET /api/version`.

use proto::{Health, PROTOCOL_VERSION, Version};

use crate::http::ApiResult;
use crate::http::body::ok_json;
use crate::state::App;

pub(crate) async fn health(app: &App) -> ApiResult {
    ok_json(&Health {
        ok: true,
        uptime_secs: app.started.elapsed().as_secs(),
        session_count: app.sessions.active_count(),
        protocol_version: PROTOCOL_VERSION.to_owned(),
        socket_path: Some(app.socket_path.display().to_string()),
        tcp_address: app.tcp.address().map(|a| a.to_string()),
    })
}

pub(crate) async fn version() -> ApiResult {
    ok_json(&Version {
        name: "tuicd".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        protocol_version: PROTOCOL_VERSION.into(),
    })
}
