//! The GET stream: the server's notifications outside any request, for as long as the client
//! lives. Reconnects with backoff (or the server's `retry:`) and `Last-Event-ID`; a server that
//! answers 405 offers no such stream; a server unreachable that many times in a row ends the
//! connection, which the registry sees as its notification queue closing.

use std::sync::Arc;

use reqwest::StatusCode;

use super::Shared;
use super::post;
use super::sse::SseParser;
use crate::limits::{UPSTREAM_BACKOFF_MAX, UPSTREAM_BACKOFF_START, UPSTREAM_MAX_RETRIES, UPSTREAM_MESSAGE_MAX_BYTES};
use crate::proxy::wire::UpstreamError;

pub(super) async fn run(shared: Arc<Shared>) {
    let mut parser = SseParser::new(UPSTREAM_MESSAGE_MAX_BYTES);
    let mut backoff = UPSTREAM_BACKOFF_START;
    let mut unreachable = 0;
    loop {
        let session = shared.session();
        match post::send(&shared, post::get(&shared, &session, parser.last_event_id())).await {
            Ok(response) if response.status() == StatusCode::METHOD_NOT_ALLOWED => {
                tracing::debug!(source = "upstream", upstream = %shared.name, "the server offers no notification stream");
                return;
            }
            Ok(response) if response.status().is_success() && post::is_event_stream(&response) => {
                unreachable = 0;
                backoff = UPSTREAM_BACKOFF_START;
                if let Err(error) = post::read_events(&shared, response, &mut parser, None, None, &session).await {
                    tracing::warn!(source = "upstream", upstream = %shared.name, %error, "notification stream dropped");
                }
            }
            Ok(response) => {
                let status = response.status();
                tracing::debug!(source = "upstream", upstream = %shared.name, %status, "notification stream refused");
            }
            Err(UpstreamError::Closed(reason)) => {
                unreachable += 1;
                if unreachable >= UPSTREAM_MAX_RETRIES {
                    tracing::warn!(source = "upstream", upstream = %shared.name, %reason, "upstream unreachable; connection ended");
                    shared.end_connection();
                    return;
                }
            }
            Err(error) => {
                tracing::debug!(source = "upstream", upstream = %shared.name, %error, "notification stream refused");
            }
        }
        tokio::time::sleep(parser.retry().unwrap_or(backoff)).await;
        backoff = (backoff * 2).min(UPSTREAM_BACKOFF_MAX);
        parser = parser.resumed();
    }
}
