use super::*;
use crate::agent::event::Intent;

fn all(bytes: &[u8]) -> Vec<Marker> {
    let mut parser = MarkerParser::new();
    let mut out = Vec::new();
    parser.feed(bytes, &mut out);
    out
}

/// Feeds `bytes` split at every possible point and checks each split finds the same markers.
fn same_at_every_split(bytes: &[u8]) -> Vec<Marker> {
    let whole = all(bytes);
    for at in 0..=bytes.len() {
        let mut parser = MarkerParser::new();
        let mut out = Vec::new();
        parser.feed(&bytes[..at], &mut out);
        parser.feed(&bytes[at..], &mut out);
        assert_eq!(out, whole, "split at {at}");
    }
    whole
}

#[test]
fn markers_survive_any_split_across_reads() {
    let stream = "\x1b]133;A\x07$ cargo test\r\n\x1b]133;C\x1b\\running…\r\n\x1b]133;D;101\x07\
                  ⏺ intent: Fixing the flaky test (CI)\r\n\x1b[1mok\x1b[0m\r\n⏺ suggest: [ Run it again | Open PR ]\r\n";
    let markers = same_at_every_split(stream.as_bytes());
    assert_eq!(
        markers,
        vec![
            Marker::Prompt,
            Marker::CommandExecuted,
            Marker::CommandFinished(Some(101)),
            Marker::TextIntent(Intent { text: "Fixing the flaky test".into(), title: Some("CI".into()) }),
            Marker::TextSuggest(vec!["Run it again".into(), "Open PR".into()]),
        ]
    );
}

#[test]
fn a_soft_wrapped_suggestion_is_joined() {
    let stream = "suggest: [ Run the whole test suite |\r\n  Open a pull request | Review\r\n  the diff ]\r\n";
    assert_eq!(
        same_at_every_split(stream.as_bytes()),
        vec![Marker::TextSuggest(vec![
            "Run the whole test suite".into(),
            "Open a pull request".into(),
            "Review the diff".into()
        ])]
    );
}

#[test]
fn an_unclosed_suggestion_gives_up_and_the_next_line_stands_alone() {
    let mut stream = String::from("suggest: [ a | b\r\n");
    for _ in 0..SUGGEST_WRAP_MAX_LINES + 1 {
        stream.push_str("more\r\n");
    }
    stream.push_str("intent: Next thing\r\n");
    assert_eq!(all(stream.as_bytes()), vec![Marker::TextIntent(Intent { text: "Next thing".into(), title: None })]);
}

#[test]
fn styled_text_and_cursor_moves_do_not_hide_a_marker() {
    // A full-screen renderer: position, colour, write the row.
    let stream = "\x1b[12;3H\x1b[38;5;244m\x1b(B•\x1b[0m intent:\x1b[1C\x1b[1mShipping\x1b[22m the fix\x1b[13;1H";
    assert_eq!(
        all(stream.as_bytes()),
        vec![Marker::TextIntent(Intent { text: "Shipping the fix".into(), title: None })]
    );
}

#[test]
fn spinner_redraws_with_carriage_return_do_not_glue_lines() {
    let stream = "⠋ Working\r⠙ Working\rintent: Done spinning\r\n";
    assert_eq!(all(stream.as_bytes()), vec![Marker::TextIntent(Intent { text: "Done spinning".into(), title: None })]);
}

#[test]
fn backspace_edits_the_line_being_assembled() {
    assert_eq!(
        all("intent: Fix é\x08e\r\n".as_bytes()),
        vec![Marker::TextIntent(Intent { text: "Fix e".into(), title: None })]
    );
}

#[test]
fn over_long_lines_and_oscs_are_dropped_not_buffered() {
    let mut parser = MarkerParser::new();
    let mut out = Vec::new();
    let mut long = b"intent: ".to_vec();
    long.extend(std::iter::repeat_n(b'x', MARKER_LINE_MAX_BYTES * 4));
    long.extend_from_slice(b"\r\n");
    parser.feed(&long, &mut out);
    assert!(parser.line.capacity() <= MARKER_LINE_MAX_BYTES * 2);
    let mut osc = b"\x1b]7770;intent=".to_vec();
    osc.extend(std::iter::repeat_n(b'y', MARKER_OSC_MAX_BYTES * 4));
    osc.push(BEL);
    parser.feed(&osc, &mut out);
    assert!(out.is_empty());
    parser.feed(b"\x1b]7770;state=idle\x07", &mut out);
    assert_eq!(out, vec![Marker::Hook { state: HookState::Idle, question: None }]);
}

#[test]
fn dcs_and_apc_strings_are_skipped_whole() {
    let stream = "\x1bPq#0;2;0;0;0intent: not me\x1b\\\x1b_Gi=1;intent: nor me\x1b\\intent: me\n";
    assert_eq!(all(stream.as_bytes()), vec![Marker::TextIntent(Intent { text: "me".into(), title: None })]);
}

#[test]
fn printable_bytes_are_counted_without_escapes() {
    let mut parser = MarkerParser::new();
    let stats = parser.feed(b"\x1b[31mab\x1b[0m\r\n\x1b]0;title\x07", &mut Vec::new());
    assert_eq!(stats.printable, 2);
}

#[test]
fn ten_megabytes_of_mixed_output_pass_in_bounded_memory() {
    let chunk = "\x1b[32mcompiling\x1b[0m crate v1.0 \u{2714}\r\n⠋ Working (3s • esc to interrupt)\r\x1b]133;C\x07\
                 \x1b[2;1H\x1b[2Kline of output with some text in it\r\n";
    let mut parser = MarkerParser::new();
    let mut out = Vec::new();
    let mut fed = 0;
    while fed < 10 * 1024 * 1024 {
        parser.feed(chunk.as_bytes(), &mut out);
        fed += chunk.len();
        out.clear();
    }
    parser.feed(b"suggest: [ a | b ]\n", &mut out);
    assert_eq!(out, vec![Marker::TextSuggest(vec!["a".into(), "b".into()])]);
    assert!(parser.line.capacity() <= MARKER_LINE_MAX_BYTES * 2);
}
