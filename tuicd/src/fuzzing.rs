//! Entry points for the fuzz targets in `fuzz/` and for the corpus replay test
//! (`tests/api/fuzz_corpus.rs`): thin wrappers over private parsers. Each wrapper panics only when
//! the code under test panics or breaks the property named on it.

use serde_json::Value;

use crate::http::body::parse_query;

/// The JSON-RPC request reader: any body is classified or refused, and a body that is not JSON is
/// never classified as a message.
pub fn jsonrpc_request(data: &[u8]) {
    let classified = crate::mcp::model::classify(data);
    if serde_json::from_slice::<Value>(data).is_err() {
        assert!(classified.is_err(), "a body that is not JSON was classified");
    }
}

/// The router's matching on an arbitrary request target: the path splits into segments the way
/// the router splits it, and every query-string type the routes read parses or names its error.
pub fn route(data: &[u8]) {
    let Ok(uri) = http::Uri::try_from(data) else { return };
    let segments = crate::server::router::segments(uri.path());
    assert!(segments.iter().all(|s| !s.is_empty() && !s.contains('/')));
    let raw = uri.query().unwrap_or("");
    let _ = parse_query::<crate::routes::sessions::OutputParams>(raw);
    let _ = parse_query::<crate::routes::events::EventsQuery>(raw);
    let _ = parse_query::<crate::routes::stream::StreamParams>(raw);
}

/// The agent marker parser: the first byte picks where the rest is split into reads, and the
/// markers found must not depend on the split.
pub fn markers(data: &[u8]) {
    let Some((&split, stream)) = data.split_first() else { return };
    let whole = collect_markers(&[stream]);
    let at = (split as usize * stream.len()) / 255;
    let (a, b) = stream.split_at(at.min(stream.len()));
    let chunks: Vec<&[u8]> = if split % 2 == 0 { vec![a, b] } else { stream.chunks(1 + split as usize % 7).collect() };
    assert_eq!(whole, collect_markers(&chunks), "markers depend on how the stream was split");
}

fn collect_markers(chunks: &[&[u8]]) -> Vec<crate::agent::markers::Marker> {
    let mut parser = crate::agent::markers::MarkerParser::new();
    let mut out = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, &mut out);
    }
    out
}

/// The input-line buffer: any sequence of writes (split by the first byte) is tracked without
/// a panic, and the composer state stays readable.
pub fn input_line(data: &[u8]) {
    let Some((&split, stream)) = data.split_first() else { return };
    let mut buffer = crate::agent::input_line::InputLineBuffer::new();
    for chunk in stream.chunks(1 + split as usize) {
        let _ = buffer.feed(chunk);
    }
    let _ = buffer.state();
}

/// The config merge: a patch (after the first NUL; before it, the base) is applied to the base
/// config or refused; an applied one survives the redacted round trip `GET` then `PUT` unchanged.
pub fn config_merge(data: &[u8]) {
    let (base, patch) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (&[][..], data),
    };
    let Ok(patch) = serde_json::from_slice::<Value>(patch) else { return };
    let base = serde_json::from_slice::<Value>(base)
        .ok()
        .and_then(|v| crate::config::merge::parse_config(v).ok())
        .unwrap_or_default();
    if let Ok(next) = crate::config::merge::apply_patch(&base, patch) {
        let shown = crate::config::merge::redacted(&next);
        let back = crate::config::merge::apply_patch(&next, shown).expect("a redacted config applies");
        assert_eq!(back, next, "GET then PUT of the redacted config changed it");
    }
}
