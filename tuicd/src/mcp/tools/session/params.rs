//! Typed parameters of each `session` action. The tool's `inputSchema` is derived from these
//! structs (see `tools::schema`), and calls are parsed into them, so the two cannot drift.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

use super::keys::SPECIAL_KEYS;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct List {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Create {
    /// Terminal rows (default 24).
    #[schemars(range(min = 1, max = 500))]
    pub rows: Option<u16>,
    /// Terminal columns (default 80).
    #[schemars(range(min = 1, max = 500))]
    pub cols: Option<u16>,
    /// Program to run (default $SHELL, then /bin/sh); a bare name is found in PATH.
    pub shell: Option<String>,
    /// Arguments for `shell`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Working directory (default: home).
    pub cwd: Option<String>,
    /// A human name for the session.
    pub display_name: Option<String>,
}

/// Actions that take only the session reference.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Target {
    /// PTY session_id, tuic_session or alias (tu-1).
    pub session_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Input {
    /// PTY session_id, tuic_session or alias (tu-1).
    pub session_id: String,
    /// Text to type, raw (no Enter added; add special_key=enter).
    pub input: Option<String>,
    /// Pressed after the text, in the same write.
    #[schemars(schema_with = "special_key_schema")]
    pub special_key: Option<String>,
    /// The PTY's short work description; "" or null clears it, omitted keeps it.
    #[serde(default, deserialize_with = "present")]
    pub pty_description: Option<Option<String>>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum Format {
    /// ANSI stripped; cursors count log lines.
    #[default]
    Text,
    /// Escape sequences preserved; cursors count bytes.
    Raw,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Output {
    /// PTY session_id, tuic_session or alias (tu-1).
    pub session_id: String,
    /// Most bytes to return (default 8192).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// text (default) or raw.
    pub format: Option<Format>,
    /// A previous answer's cursor: only what came after it.
    pub since_cursor: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum Until {
    #[default]
    Idle,
    Exited,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Wait {
    /// PTY session_id, tuic_session or alias (tu-1).
    pub session_id: String,
    /// idle (default) or exited.
    pub until: Option<Until>,
    /// ms to wait (default 60000; 300000 and above run as 295000).
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Resize {
    /// PTY session_id, tuic_session or alias (tu-1).
    pub session_id: String,
    /// Terminal rows.
    #[schemars(range(min = 1, max = 500))]
    pub rows: u16,
    /// Terminal columns.
    #[schemars(range(min = 1, max = 500))]
    pub cols: u16,
}

fn special_key_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": SPECIAL_KEYS.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        "description": "Pressed after the text, in the same write.",
    })
}

/// `Some(None)` for an explicit null, `None` when the field is absent.
fn present<'de, D: Deserializer<'de>>(de: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(de).map(Some)
}
