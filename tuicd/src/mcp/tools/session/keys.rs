//! `special_key` names and the bytes each writes (xterm sequences, normal cursor mode).

pub(crate) const SPECIAL_KEYS: &[(&str, &str)] = &[
    ("enter", "\r"),
    ("return", "\r"),
    ("tab", "\t"),
    ("escape", "\x1b"),
    ("esc", "\x1b"),
    ("backspace", "\x7f"),
    ("delete", "\x1b[3~"),
    ("up", "\x1b[A"),
    ("down", "\x1b[B"),
    ("right", "\x1b[C"),
    ("left", "\x1b[D"),
    ("home", "\x1b[H"),
    ("end", "\x1b[F"),
    ("ctrl+a", "\x01"),
    ("ctrl+c", "\x03"),
    ("ctrl+d", "\x04"),
    ("ctrl+e", "\x05"),
    ("ctrl+k", "\x0b"),
    ("ctrl+l", "\x0c"),
    ("ctrl+n", "\x0e"),
    ("ctrl+p", "\x10"),
    ("ctrl+r", "\x12"),
    ("ctrl+u", "\x15"),
    ("ctrl+w", "\x17"),
    ("ctrl+z", "\x1a"),
];

/// The bytes for a key name (case-insensitive), or an error listing the valid names.
pub(crate) fn bytes_for(name: &str) -> Result<&'static str, String> {
    let lower = name.to_ascii_lowercase();
    SPECIAL_KEYS.iter().find(|(k, _)| *k == lower).map(|(_, b)| *b).ok_or_else(|| {
        let valid: Vec<&str> = SPECIAL_KEYS.iter().map(|(k, _)| *k).collect();
        format!("special_key: unknown key '{name}'; valid keys: {}", valid.join(", "))
    })
}
