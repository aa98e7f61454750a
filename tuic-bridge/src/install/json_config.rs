//! The JSON configs (Claude Code, Gemini CLI, Cursor): one entry under the top-level
//! `mcpServers` object. Everything else in the file keeps its keys and their order; the file is
//! written back with 2-space indentation, as those CLIs write it themselves.

use super::json::{Json, Object};
use super::{Change, Edit, Refusal};

/// Puts `entry` under `mcpServers.<name>` in `old` (None: no file yet).
pub(crate) fn edit(old: Option<&str>, name: &str, entry: Json) -> Result<Edit, Refusal> {
    let mut root = match old {
        Some(text) if !text.trim().is_empty() => parse(text)?,
        _ => Object::default(),
    };
    let servers = match root.get_or_insert("mcpServers", Json::Object(Object::default())) {
        Json::Object(servers) => servers,
        other => return Err(Refusal(format!("\"mcpServers\" is {}, not an object", other.kind()))),
    };
    let change = match servers.get(name) {
        Some(existing) if *existing == entry => return Ok(Edit::unchanged(old.unwrap_or_default())),
        Some(_) => Change::Replaced,
        None => Change::Added,
    };
    servers.insert(name, entry);
    let mut text = serde_json::to_string_pretty(&Json::Object(root))
        .map_err(|e| Refusal(format!("cannot encode the new file: {e}")))?;
    if old.is_none_or(|old| old.is_empty() || old.ends_with('\n')) {
        text.push('\n');
    }
    Ok(Edit { change, text })
}

fn parse(text: &str) -> Result<Object, Refusal> {
    match serde_json::from_str(text) {
        Ok(Json::Object(root)) => Ok(root),
        Ok(other) => Err(Refusal(format!("the top level is {}, not an object", other.kind()))),
        Err(e) => Err(Refusal(format!("invalid JSON: {e}"))),
    }
}

/// The stdio entry `claude mcp add --scope user` writes.
pub(crate) fn claude_entry(command: &str) -> Json {
    Json::Object(Object::from_iter([
        ("type".to_owned(), Json::String("stdio".to_owned())),
        ("command".to_owned(), Json::String(command.to_owned())),
        ("args".to_owned(), Json::Array(Vec::new())),
        ("env".to_owned(), Json::Object(Object::default())),
    ]))
}

/// Gemini CLI's and Cursor's stdio entry.
pub(crate) fn plain_entry(command: &str) -> Json {
    Json::Object(Object::from_iter([
        ("command".to_owned(), Json::String(command.to_owned())),
        ("args".to_owned(), Json::Array(Vec::new())),
    ]))
}
