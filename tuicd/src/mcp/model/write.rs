//! Writes JSON-RPC responses straight into one buffer: no envelope `Value`, and a tool's text is
//! escaped once, into the buffer it is sent from.
//!
//! The bytes are the ones the `json!` envelopes printed: `serde_json`'s `Map` keeps its keys
//! sorted, so members come in alphabetical order (`id`, `jsonrpc`, `result`; `content`,
//! `isError`; `text`, `type`). The tests check this against `serde_json` for awkward text.

use serde_json::Value;

use super::{Reply, ToolText};

/// Bytes of a result envelope around its result: `{"id":,"jsonrpc":"2.0","result":}` plus a
/// tool result's `{"content":[{"text":,"type":"text"}],"isError":false}` and a short id. A sizing
/// hint for the buffer, not a limit.
const ENVELOPE_BYTES: usize = 128;
/// A tool's text grows by one byte per escaped quote or backslash; compact JSON text has about one
/// in five, so a quarter on top usually fits in the first allocation (a sizing hint, not a limit).
const ESCAPE_GROWTH_DIVISOR: usize = 4;

/// `{"id":<id>,"jsonrpc":"2.0","result":<result>}`.
pub fn result_body(id: &Value, result: &Reply) -> Vec<u8> {
    let capacity = match result {
        Reply::Value(_) => ENVELOPE_BYTES,
        Reply::Tool(tool) => tool.text.len() + tool.text.len() / ESCAPE_GROWTH_DIVISOR + ENVELOPE_BYTES,
    };
    let mut out = Vec::with_capacity(capacity);
    out.extend_from_slice(b"{\"id\":");
    write_value(&mut out, id);
    out.extend_from_slice(b",\"jsonrpc\":\"2.0\",\"result\":");
    match result {
        Reply::Value(value) => write_value(&mut out, value),
        Reply::Tool(tool) => write_tool_text(&mut out, tool),
    }
    out.push(b'}');
    out
}

/// `{"content":[{"text":<text as a JSON string>,"type":"text"}],"isError":<bool>}`.
fn write_tool_text(out: &mut Vec<u8>, tool: &ToolText) {
    out.extend_from_slice(b"{\"content\":[{\"text\":");
    write_str(out, &tool.text);
    out.extend_from_slice(if tool.is_error {
        b",\"type\":\"text\"}],\"isError\":true}"
    } else {
        b",\"type\":\"text\"}],\"isError\":false}"
    });
}

/// `s` as a JSON string, escaped by `serde_json`'s own string writer (one pass, into `out`).
fn write_str(out: &mut Vec<u8>, s: &str) {
    let mut ser = serde_json::Serializer::new(out);
    // Writing into a Vec cannot fail, and a str always serialises.
    let _ = serde::Serializer::serialize_str(&mut ser, s);
}

fn write_value(out: &mut Vec<u8>, value: &Value) {
    // Writing into a Vec cannot fail, and a Value (string keys only) always serialises.
    let _ = serde_json::to_writer(&mut *out, value);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The old way: envelope `Value`s, printed by `serde_json`.
    fn reference(id: &Value, result: &Reply) -> Vec<u8> {
        let result = match result {
            Reply::Value(value) => value.clone(),
            Reply::Tool(tool) => json!({"content": [{"type": "text", "text": tool.text}], "isError": tool.is_error}),
        };
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap()
    }

    const AWKWARD: [&str; 9] = [
        "",
        "plain",
        r#"{"alias":"sh-1","cols":80,"cwd":"/root","nested":{"q":"say \"hi\""}}"#,
        "back\\slash and \\\" both",
        "\u{0}\u{1}\u{7}\u{8}\t\n\u{b}\u{c}\r\u{1b}[31m\u{1f} control characters",
        "\u{7f} delete is not escaped",
        "non-ASCII: é ü 中文 🦀 \u{2028}\u{2029}",
        "slash / and html <script>&amp;</script>",
        "trailing backslash \\",
    ];

    #[test]
    fn tool_results_are_byte_identical_to_the_value_envelope() {
        let ids = [json!(1), json!(-7), json!(u64::MAX), json!(1.5), json!("req-\"1\"\n"), json!("")];
        for id in &ids {
            for text in AWKWARD {
                for is_error in [false, true] {
                    let reply = Reply::Tool(ToolText { text: text.to_owned(), is_error });
                    let ours = result_body(id, &reply);
                    assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(reference(id, &reply)).unwrap());
                }
            }
        }
    }

    #[test]
    fn value_results_are_byte_identical_to_the_value_envelope() {
        let results = [
            json!({}),
            json!({"tools": [{"name": "session", "inputSchema": {"type": "object"}}], "z": null, "a": [1, 2.5]}),
            json!({"protocolVersion": "2025-11-25", "instructions": AWKWARD.join("\n")}),
        ];
        for result in results {
            let reply = Reply::Value(result);
            assert_eq!(result_body(&json!("x"), &reply), reference(&json!("x"), &reply));
        }
    }

    #[test]
    fn text_is_escaped_once_and_reads_back_unchanged() {
        for text in AWKWARD {
            let reply = Reply::Tool(ToolText { text: text.to_owned(), is_error: false });
            let parsed: Value = serde_json::from_slice(&result_body(&json!(3), &reply)).unwrap();
            assert_eq!(parsed["result"]["content"][0]["text"], text);
        }
        let reply = Reply::Tool(ToolText { text: "\"\\\u{1}é".to_owned(), is_error: false });
        let body = String::from_utf8(result_body(&json!(3), &reply)).unwrap();
        assert!(body.contains(r#""text":"\"\\\u0001é""#), "{body}");
    }
}
