//! Partial updates (`PUT /config`) and secret redaction (`GET /config`).

use serde_json::{Map, Value};

use super::AppConfig;

/// Secret fields: `(parent object path, field)`. Responses replace each with `<field>_exists`.
const SECRET_FIELDS: [(&[&str], &str); 1] = [(&["services", "auth"], "password_hash")];

/// Deep-merges `patch` onto `base`: objects merge key by key, anything else replaces.
pub fn deep_merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => {
            for (key, value) in patch {
                match base.get_mut(&key) {
                    Some(slot) => deep_merge(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (slot, value) => *slot = value,
    }
}

/// Parses a full config value strictly. The error names the key path and what was wrong.
pub(crate) fn parse_config(value: Value) -> Result<AppConfig, String> {
    let config: AppConfig = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." { e.inner().to_string() } else { format!("{path}: {}", e.inner()) }
    })?;
    config.validate()?;
    Ok(config)
}

/// Applies a partial body to the live config. `*_exists` flags that a client echoes back from
/// `GET /config` are accepted and ignored, so read-modify-write round-trips work.
pub(crate) fn apply_patch(current: &AppConfig, mut patch: Value) -> Result<AppConfig, String> {
    if !patch.is_object() {
        return Err("the body must be a JSON object of config fields to save".into());
    }
    for (parents, field) in SECRET_FIELDS {
        if let Some(obj) = object_at(&mut patch, parents) {
            obj.remove(&format!("{field}_exists"));
        }
    }
    let mut merged = serde_json::to_value(current).map_err(|e| e.to_string())?;
    deep_merge(&mut merged, patch);
    parse_config(merged)
}

/// The config as clients see it: secrets replaced by `<field>_exists` booleans.
pub(crate) fn redacted(config: &AppConfig) -> Value {
    let mut value = serde_json::to_value(config).unwrap_or(Value::Null);
    for (parents, field) in SECRET_FIELDS {
        if let Some(obj) = object_at(&mut value, parents) {
            let exists = obj.remove(field).and_then(|v| v.as_str().map(|s| !s.is_empty())).unwrap_or(false);
            obj.insert(format!("{field}_exists"), Value::Bool(exists));
        }
    }
    value
}

fn object_at<'a>(value: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut cursor = value;
    for key in path {
        cursor = cursor.as_object_mut()?.get_mut(*key)?;
    }
    cursor.as_object_mut()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_omitted_field_keeps_its_value() {
        let mut current = AppConfig { collapse_tools: true, ..AppConfig::default() };
        current.services.server.port = 7000;
        let next = apply_patch(&current, json!({"services": {"server": {"enabled": true}}})).unwrap();
        assert!(next.collapse_tools);
        assert_eq!(next.services.server.port, 7000);
        assert!(next.services.server.enabled);
    }

    #[test]
    fn errors_name_the_key() {
        let current = AppConfig::default();
        let err = apply_patch(&current, json!({"services": {"server": {"port": "x"}}})).unwrap_err();
        assert!(err.contains("services.server.port"), "{err}");
        let err = apply_patch(&current, json!({"servces": {}})).unwrap_err();
        assert!(err.contains("servces"), "{err}");
        let err = apply_patch(&current, json!([1])).unwrap_err();
        assert!(err.contains("object"), "{err}");
    }

    #[test]
    fn redaction_hides_the_hash_and_round_trips() {
        let mut config = AppConfig::default();
        config.services.auth.password_hash = "$2b$04$abcdefghijklmnopqrstuv".into();
        let shown = redacted(&config);
        assert!(!shown.to_string().contains("$2b$"));
        assert_eq!(shown["services"]["auth"]["password_hash_exists"], json!(true));
        let back = apply_patch(&config, shown).unwrap();
        assert_eq!(back, config);
    }
}
