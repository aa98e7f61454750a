//! A scripted Streamable HTTP server on loopback for the client's tests: it records every request
//! and answers each from a closure, with JSON, SSE (finished, or held open), or a bare status.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, Method, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use serde_json::Value;

use crate::lock::Recover;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    pub method: Method,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Seen {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON-RPC method of a POST, `""` for anything else.
    pub(super) fn rpc(&self) -> &str {
        self.body["method"].as_str().unwrap_or_default()
    }
}

pub(super) type Reply = Response<BoxBody<Bytes, Infallible>>;
type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

pub(super) struct TestServer {
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    accept: tokio::task::JoinHandle<()>,
}

impl TestServer {
    pub(super) async fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let log = seen.clone();
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (handler, log) = (handler.clone(), log.clone());
                let service = hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let (handler, log) = (handler.clone(), log.clone());
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                        let seen = Seen {
                            method: parts.method,
                            headers: parts.headers,
                            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                        };
                        log.locked().push(seen.clone());
                        Ok::<_, Infallible>(handler(&seen))
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service),
                );
            }
        });
        Self { url, seen, accept }
    }

    pub(super) fn seen(&self) -> Vec<Seen> {
        self.seen.locked().clone()
    }

    /// Waits until a request matching `test` has arrived, or fails after `within`.
    pub(super) async fn wait_for(&self, what: &str, within: Duration, test: impl Fn(&Seen) -> bool) -> Seen {
        let deadline = Instant::now() + within;
        loop {
            if let Some(found) = self.seen().into_iter().find(&test) {
                return found;
            }
            assert!(Instant::now() < deadline, "no {what} within {within:?}; saw {:?}", self.seen());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

pub(super) fn json(value: Value) -> Reply {
    Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(value.to_string())).boxed())
        .unwrap()
}

/// A JSON answer that assigns a session.
pub(super) fn json_with_session(value: Value, session: &str) -> Reply {
    let mut reply = json(value);
    reply.headers_mut().insert("mcp-session-id", session.parse().unwrap());
    reply
}

/// An SSE body that ends after `text`.
pub(super) fn sse(text: &str) -> Reply {
    event_stream(Full::new(Bytes::from(text.to_owned())).boxed())
}

/// An SSE body that sends `text` and then stays open without another byte.
pub(super) fn sse_then_hold(text: &str) -> Reply {
    let first = futures_util::stream::once(std::future::ready(Ok(Frame::data(Bytes::from(text.to_owned())))));
    event_stream(BodyExt::boxed(StreamBody::new(first.chain(futures_util::stream::pending()))))
}

pub(super) fn status(code: StatusCode, headers: &[(&str, &str)]) -> Reply {
    let mut builder = Response::builder().status(code);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Full::new(Bytes::new()).boxed()).unwrap()
}

fn event_stream(body: BoxBody<Bytes, Infallible>) -> Reply {
    Response::builder().header("content-type", "text/event-stream").body(body).unwrap()
}
