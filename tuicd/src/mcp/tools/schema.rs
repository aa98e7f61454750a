//! Deriving a tool's `inputSchema` from its typed per-action parameter structs.
//!
//! Each action has its own `#[derive(JsonSchema, Deserialize)]` struct; the tool's schema is the
//! flat union of their properties plus an `action` enum taken from the tool's `*_ACTIONS`
//! constant. Flat on purpose: several clients (Anthropic's API among them) refuse `oneOf`/`anyOf`
//! at the top of an `inputSchema`, which an internally tagged enum would produce. Each property's
//! description ends with the actions that accept it, so the schema still says which go together.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

/// One action's parameter schema, as derived from its struct.
#[derive(Debug)]
pub struct ActionSchema {
    pub action: &'static str,
    pub schema: Schema,
}

/// Derives the schema of one action's parameters (subschemas inlined, no `$defs`).
pub fn action<T: JsonSchema>(action: &'static str) -> ActionSchema {
    let generator = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true).into_generator();
    ActionSchema { action, schema: generator.into_root_schema_for::<T>() }
}

/// The flat tool schema: `action` (required, one of `actions`) plus every action's properties.
pub fn merge(actions: &[&str], per_action: &[ActionSchema]) -> Value {
    let mut properties = Map::new();
    properties.insert(
        "action".into(),
        json!({"type": "string", "enum": actions, "description": "What to do; see the tool description for each action."}),
    );
    let mut used_by: Vec<(String, Vec<&str>)> = Vec::new();
    for entry in per_action {
        let Some(props) = entry.schema.get("properties").and_then(Value::as_object) else { continue };
        for (name, schema) in props {
            match used_by.iter_mut().find(|(n, _)| n == name) {
                Some((_, list)) => list.push(entry.action),
                None => {
                    used_by.push((name.clone(), vec![entry.action]));
                    properties.insert(name.clone(), simplify(schema.clone()));
                }
            }
        }
    }
    for (name, list) in used_by {
        if let Some(Value::Object(prop)) = properties.get_mut(&name) {
            let doc = prop.get("description").and_then(Value::as_str).unwrap_or("").trim_end_matches('.').to_owned();
            let actions = format!("Actions: {}.", list.join(", "));
            let text = if doc.is_empty() { actions } else { format!("{doc}. {actions}") };
            prop.insert("description".into(), Value::String(text));
        }
    }
    json!({"type": "object", "properties": properties, "required": ["action"], "additionalProperties": false})
}

/// Makes a derived property schema portable: `Option<T>` becomes plain `T` (absence is how a
/// value is omitted; we never ask for `null`), and Rust-specific `format`s are dropped.
fn simplify(schema: Value) -> Value {
    let Value::Object(mut map) = schema else { return schema };
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
        let replacement = if kept.len() == 1 { kept[0].clone() } else { Value::Array(kept) };
        map.insert("type".into(), replacement);
    }
    if let Some(Value::Array(variants)) = map.get("anyOf").or_else(|| map.get("oneOf")) {
        let kept: Vec<Value> =
            variants.iter().filter(|v| v.get("type").and_then(Value::as_str) != Some("null")).cloned().collect();
        if kept.len() == 1 {
            let inner = kept[0].clone();
            map.remove("anyOf");
            map.remove("oneOf");
            if let Value::Object(inner) = simplify(inner) {
                for (k, v) in inner {
                    map.entry(k).or_insert(v);
                }
            }
        }
    }
    // An enum whose variants carry docs derives as `oneOf` of `const`s: flatten it to `enum`.
    if let Some(Value::Array(variants)) = map.get("oneOf").or_else(|| map.get("anyOf"))
        && let Some(consts) = variants.iter().map(|v| v.get("const").cloned()).collect::<Option<Vec<Value>>>()
    {
        map.remove("oneOf");
        map.remove("anyOf");
        map.insert("type".into(), Value::String("string".into()));
        map.insert("enum".into(), Value::Array(consts));
    }
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
    if let Some(Value::String(text)) = map.get_mut("description") {
        *text = text.replace('\n', " ");
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if map.get("format").and_then(Value::as_str).is_some_and(|f| f.starts_with("int") || f.starts_with("uint")) {
        map.remove("format");
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct A {
        /// The session.
        session_id: String,
        limit: Option<u32>,
    }

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct B {
        /// The session.
        session_id: String,
    }

    #[test]
    fn merged_schema_is_flat_and_names_the_actions_of_each_property() {
        let schema = merge(&["a", "b"], &[action::<A>("a"), action::<B>("b")]);
        assert_eq!(schema["properties"]["action"]["enum"], json!(["a", "b"]));
        assert_eq!(schema["properties"]["session_id"]["description"], "The session. Actions: a, b.");
        assert_eq!(schema["properties"]["limit"]["type"], "integer");
        assert!(schema["properties"]["limit"].get("format").is_none());
        assert!(schema.get("oneOf").is_none() && schema.get("anyOf").is_none());
    }
}
