//! The SSE encoder, shared by the event streams (`GET /events` and the MCP GET stream).

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use super::{BoxError, Response};

/// Wraps a channel of encoded SSE frames as a streaming response.
pub fn sse_response(rx: mpsc::Receiver<Bytes>) -> Response {
    let body = StreamBody::new(ReceiverStream::new(rx).map(|b| Ok::<_, BoxError>(Frame::data(b))));
    let mut response = Response::new(body.boxed_unsync());
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// Encodes one SSE message.
pub fn encode(id: Option<u64>, kind: &str, data: &str) -> Bytes {
    let mut out = String::with_capacity(data.len() + kind.len() + 32);
    if let Some(id) = id {
        out.push_str(&format!("id: {id}\n"));
    }
    out.push_str(&format!("event: {kind}\n"));
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::encode;

    #[test]
    fn every_line_of_the_data_gets_its_own_data_field() {
        let frame = encode(Some(7), "message", "{\"a\":1}\n{\"b\":2}");
        assert_eq!(&frame[..], b"id: 7\nevent: message\ndata: {\"a\":1}\ndata: {\"b\":2}\n\n");
    }

    #[test]
    fn a_message_without_an_id_has_no_id_field() {
        assert_eq!(&encode(None, "lagged", "{}")[..], b"event: lagged\ndata: {}\n\n");
    }
}
