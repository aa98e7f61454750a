//! Replays the committed fuzz corpora (`fuzz/corpus/<target>/`) through the same wrappers the
//! cargo-fuzz targets call, on the stable toolchain, so an input that once crashed stays fixed.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut inputs = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        if std::panic::catch_unwind(|| run(&data)).is_err() {
            panic!("{target}: {} fails", path.display());
        }
        inputs += 1;
    }
    assert!(inputs > 0, "{target}: the corpus is empty");
}

#[test]
fn the_jsonrpc_request_corpus_replays() {
    replay("jsonrpc_request", tuicd::fuzzing::jsonrpc_request);
}

#[test]
fn the_route_corpus_replays() {
    replay("route", tuicd::fuzzing::route);
}

#[test]
fn the_markers_corpus_replays() {
    replay("markers", tuicd::fuzzing::markers);
}

#[test]
fn the_input_line_corpus_replays() {
    replay("input_line", tuicd::fuzzing::input_line);
}

#[test]
fn the_config_merge_corpus_replays() {
    replay("config_merge", tuicd::fuzzing::config_merge);
}
