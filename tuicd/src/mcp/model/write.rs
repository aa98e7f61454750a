//! Writes JSON-RPC responses straight into one buffer, with no envelope `Value`.
//!
//! A tool's text travels inside a JSON string. Tools print their answer straight into that
//! escaped form with [`escaped_json`] (a `serde_json` formatter whose every output byte is already
//! escaped), so the text is printed once and never scanned again to be escaped; the envelope
//! around it is copied in.
//!
//! The bytes are the ones the `json!` envelopes printed: `serde_json`'s `Map` keeps its keys
//! sorted, so members come in alphabetical order (`id`, `jsonrpc`, `result`; `content`,
//! `isError`; `text`, `type`). The tests check this against `serde_json` for awkward text.

use std::io;

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{CharEscape, Formatter};

use super::{Reply, ToolText};

/// Bytes of a result envelope around its result: `{"id":,"jsonrpc":"2.0","result":}` plus a
/// tool result's `{"content":[{"text":"","type":"text"}],"isError":false}` and a short id. A
/// sizing hint for the buffer, not a limit.
const ENVELOPE_BYTES: usize = 128;

/// `{"id":<id>,"jsonrpc":"2.0","result":<result>}`.
pub(crate) fn result_body(id: &Value, result: &Reply) -> Vec<u8> {
    let capacity = match result {
        Reply::Value(_) => ENVELOPE_BYTES,
        Reply::Tool(tool) => tool.as_escaped().len() + ENVELOPE_BYTES,
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

/// `{"content":[{"text":"<escaped text>","type":"text"}],"isError":<bool>}`, and
/// `"structuredContent":{"result":<array>}` when the text is a JSON array (see [`ToolText::array`]).
fn write_tool_text(out: &mut Vec<u8>, tool: &ToolText) {
    out.extend_from_slice(b"{\"content\":[{\"text\":\"");
    out.extend_from_slice(tool.as_escaped().as_bytes());
    out.extend_from_slice(if tool.is_error {
        b"\",\"type\":\"text\"}],\"isError\":true"
    } else {
        b"\",\"type\":\"text\"}],\"isError\":false"
    });
    if let Some(array) = tool.array() {
        out.extend_from_slice(b",\"structuredContent\":{\"result\":");
        write_value(out, &array);
        out.push(b'}');
    }
    out.push(b'}');
}

fn write_value(out: &mut Vec<u8>, value: &Value) {
    // Writing into a Vec cannot fail, and a Value (string keys only) always serialises.
    let _ = serde_json::to_writer(&mut *out, value);
}

/// `value` as compact JSON, escaped as the inside of a JSON string: the bytes of
/// `serde_json::to_string(&serde_json::to_string(value)?)` without the outer quotes, in one pass.
pub(crate) fn escaped_json<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    let mut out = Vec::with_capacity(ENVELOPE_BYTES);
    value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, InString))?;
    // Only ASCII was added to serde_json's UTF-8 output.
    String::from_utf8(out).map_err(<serde_json::Error as serde::ser::Error>::custom)
}

/// `text` escaped as the inside of a JSON string (`serde_json`'s escaping).
pub(super) fn escape(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or_default().to_owned()
}

/// The inverse of [`escape`].
pub(super) fn unescape(escaped: &str) -> String {
    serde_json::from_str(&format!("\"{escaped}\"")).unwrap_or_default()
}

/// Compact JSON whose output is itself escaped for a JSON string. serde_json hands string
/// contents over as fragments free of quotes, backslashes and control characters (those come as
/// [`CharEscape`]s), and numbers and punctuation need no escaping, so only the string quotes and
/// the escape sequences change.
struct InString;

impl Formatter for InString {
    fn begin_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b"\\\"")
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b"\\\"")
    }

    /// The escape sequence compact JSON has, escaped again: its backslash doubles, and a quote or
    /// backslash after it gets its own.
    fn write_char_escape<W: ?Sized + io::Write>(&mut self, writer: &mut W, escape: CharEscape) -> io::Result<()> {
        let sequence: &[u8] = match escape {
            CharEscape::Quote => b"\\\\\\\"",
            CharEscape::ReverseSolidus => b"\\\\\\\\",
            CharEscape::Solidus => b"\\\\/",
            CharEscape::Backspace => b"\\\\b",
            CharEscape::FormFeed => b"\\\\f",
            CharEscape::LineFeed => b"\\\\n",
            CharEscape::CarriageReturn => b"\\\\r",
            CharEscape::Tab => b"\\\\t",
            CharEscape::AsciiControl(byte) => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let hex = [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]];
                writer.write_all(b"\\\\u00")?;
                return writer.write_all(&hex);
            }
        };
        writer.write_all(sequence)
    }

    /// Raw JSON (only `serde_json`'s `RawValue` writes it) may hold anything: escape it.
    fn write_raw_fragment<W: ?Sized + io::Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        writer.write_all(escape(fragment).as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The old way: envelope `Value`s, printed by `serde_json`.
    fn reference(id: &Value, result: &Value) -> String {
        serde_json::to_string(&json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap()
    }

    fn tool_reference(id: &Value, text: &str, is_error: bool) -> String {
        let mut result = json!({"content": [{"type": "text", "text": text}], "isError": is_error});
        if let Ok(array @ Value::Array(_)) = serde_json::from_str::<Value>(text) {
            result["structuredContent"] = json!({"result": array});
        }
        reference(id, &result)
    }

    const AWKWARD: [&str; 10] = [
        "",
        "plain",
        r#"{"alias":"sh-1","cols":80,"cwd":"/root","nested":{"q":"say \"hi\""}}"#,
        "back\\slash and \\\" both",
        "\u{0}\u{1}\u{7}\u{8}\t\n\u{b}\u{c}\r\u{1b}[31m\u{1f} control characters",
        "\u{7f} delete is not escaped",
        "non-ASCII: é ü 中文 🦀 \u{2028}\u{2029}",
        "slash / and html <script>&amp;</script>",
        "trailing backslash \\",
        "\"",
    ];

    fn awkward_values() -> Vec<Value> {
        let mut values: Vec<Value> = AWKWARD.iter().map(|t| json!(t)).collect();
        values.extend(AWKWARD.iter().map(|t| json!({ *t: [t, 1, -2.5, true, null, {"k": t}] })));
        values.push(json!({"error": "Unknown session \"x\"\n", "reason": "session_not_found_or_reaped"}));
        values.push(json!([u64::MAX, i64::MIN, 0.1, 1e300, {}, []]));
        values
    }

    #[test]
    fn plain_tool_text_is_byte_identical_to_the_value_envelope() {
        let ids = [json!(1), json!(-7), json!(u64::MAX), json!(1.5), json!("req-\"1\"\n"), json!("")];
        for id in &ids {
            for text in AWKWARD {
                for is_error in [false, true] {
                    let ours = result_body(id, &Reply::Tool(ToolText::plain(text, is_error)));
                    assert_eq!(String::from_utf8(ours).unwrap(), tool_reference(id, text, is_error));
                }
            }
        }
    }

    #[test]
    fn escaped_json_is_the_json_text_escaped_again() {
        for value in awkward_values() {
            let text = serde_json::to_string(&value).unwrap();
            let twice = serde_json::to_string(&text).unwrap();
            let escaped = escaped_json(&value).unwrap();
            assert_eq!(escaped, twice[1..twice.len() - 1], "{value}");
            assert_eq!(escape(&text), escaped);
            assert_eq!(unescape(&escaped), text);
            let ours = result_body(&json!(9), &Reply::Tool(ToolText::json(&value, true)));
            assert_eq!(String::from_utf8(ours).unwrap(), tool_reference(&json!(9), &text, true));
        }
        let escaped = escaped_json(&json!({"q": "\"\\\u{1}é\n"})).unwrap();
        assert_eq!(escaped, r#"{\"q\":\"\\\"\\\\\\u0001é\\n\"}"#);
    }

    #[test]
    fn value_results_are_byte_identical_to_the_value_envelope() {
        let mut results = vec![
            json!({}),
            json!({"tools": [{"name": "session", "inputSchema": {"type": "object"}}], "z": null, "a": [1, 2.5]}),
        ];
        results.extend(awkward_values());
        for result in results {
            let ours = result_body(&json!("x"), &Reply::Value(result.clone()));
            assert_eq!(String::from_utf8(ours).unwrap(), reference(&json!("x"), &result));
        }
    }

    #[test]
    fn the_text_reads_back_unchanged() {
        for text in AWKWARD {
            let tool = ToolText::plain(text, false);
            assert_eq!(tool.text(), text);
            let parsed: Value = serde_json::from_slice(&result_body(&json!(3), &Reply::Tool(tool))).unwrap();
            assert_eq!(parsed["result"]["content"][0]["text"], text);
        }
    }
}
