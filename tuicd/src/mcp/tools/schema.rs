//! Deriving a tool's `inputSchema` from its typed per-action parameter structs.
//!
//! Each action has its own `#[derive(JsonSchema, Deserialize)]` struct; the tool's schema is the
//! flat union of their properties plus an `action` enum taken from the tool's declared actions.
//! Flat on purpose: several clients (Anthropic's API among them) refuse `oneOf`/`anyOf` at the top
//! of an `inputSchema`, which an internally tagged enum would produce. Each property's description
//! ends with the actions that accept it, or gives each action's own text where they document it
//! differently, so the schema still says which go together.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

use super::ToolDef;

/// Derives the schema of one action's parameters (subschemas inlined, no `$defs`).
pub(crate) fn derive<T: JsonSchema>() -> Schema {
    let generator = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true).into_generator();
    generator.into_root_schema_for::<T>()
}

/// The tool's `inputSchema`. With actions: `action` (required, one of them) plus every action's
/// properties. A tool without an `action` parameter: its one action's schema.
pub(crate) fn merge(tool: &ToolDef) -> Value {
    if !tool.takes_action {
        let Some(only) = tool.actions.first() else { return json!({"type": "object", "additionalProperties": false}) };
        let derived = (only.schema)();
        let mut properties = Map::new();
        if let Some(props) = derived.get("properties").and_then(Value::as_object) {
            for (name, schema) in props {
                properties.insert(name.clone(), simplify(schema.clone()));
            }
        }
        let required = derived.get("required").cloned().unwrap_or_else(|| json!([]));
        return json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
    }
    let mut properties = Map::new();
    properties.insert("action".into(), json!({"type": "string", "enum": tool.action_names()}));
    // Per property: the actions that take it, each with its own description.
    let mut used_by: Vec<(String, Vec<(&str, String)>)> = Vec::new();
    for action in tool.actions {
        let derived = (action.schema)();
        let Some(props) = derived.get("properties").and_then(Value::as_object) else { continue };
        for (name, schema) in props {
            let schema = simplify(schema.clone());
            let doc = schema.get("description").and_then(Value::as_str).unwrap_or("").trim_end_matches('.').to_owned();
            match used_by.iter_mut().find(|(n, _)| n == name) {
                Some((_, list)) => list.push((action.name, doc)),
                None => {
                    used_by.push((name.clone(), vec![(action.name, doc)]));
                    properties.insert(name.clone(), schema);
                }
            }
        }
    }
    let all = tool.action_names();
    for (name, list) in used_by {
        if let Some(Value::Object(prop)) = properties.get_mut(&name) {
            let description = describe(&list, &all);
            if description.is_empty() {
                prop.remove("description");
            } else {
                prop.insert("description".into(), Value::String(description));
            }
        }
    }
    json!({"type": "object", "properties": properties, "required": ["action"], "additionalProperties": false})
}

/// A shared property's description: one text ending with the actions that take it (nothing when
/// every action of the tool does, the exceptions when more than half do), or, where the actions
/// document it differently (their own default or bounds), each action's text in turn.
fn describe(list: &[(&str, String)], all: &[&str]) -> String {
    let first = &list[0].1;
    if list.iter().all(|(_, doc)| doc == first) {
        let actions: Vec<&str> = list.iter().map(|(a, _)| *a).collect();
        let others: Vec<&str> = all.iter().copied().filter(|a| !actions.contains(a)).collect();
        let actions = match others.len() {
            0 => String::new(),
            n if n < actions.len() => format!("Actions: all but {}.", others.join(", ")),
            _ => format!("Actions: {}.", actions.join(", ")),
        };
        return match (first.is_empty(), actions.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!("{first}."),
            (true, false) => actions,
            (false, false) => format!("{first}. {actions}"),
        };
    }
    let mut parts: Vec<(Vec<&str>, &str)> = Vec::new();
    for (action, doc) in list {
        match parts.iter_mut().find(|(_, d)| d == doc) {
            Some((actions, _)) => actions.push(action),
            None => parts.push((vec![action], doc)),
        }
    }
    parts.iter().map(|(actions, doc)| format!("{}: {doc}.", actions.join(", "))).collect::<Vec<_>>().join(" ")
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
    // `true` is what an absent `additionalProperties` already means.
    if map.get("additionalProperties") == Some(&Value::Bool(true)) {
        map.remove("additionalProperties");
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
    use crate::mcp::tools::action::{ActionDef, action};
    use crate::mcp::tools::{CallContext, ToolError};

    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct A {
        /// The session.
        session_id: String,
        limit: Option<u32>,
        /// How long (default 10).
        timeout_ms: Option<u64>,
    }

    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct B {
        /// The session.
        session_id: String,
        /// How long (default 20).
        timeout_ms: Option<u64>,
    }

    fn ok<P>(_: &CallContext, _: P) -> Result<Value, ToolError> {
        Ok(Value::Null)
    }

    static T: ToolDef = ToolDef {
        name: "t",
        description: "",
        takes_action: true,
        actions: &[
            action!("t", "a", A => sync ok, loopback: false, blocks: false),
            action!("t", "b", B => sync ok, loopback: false, blocks: false),
        ],
    };

    #[test]
    fn merged_schema_is_flat_and_names_the_actions_of_each_property() {
        let _: &[ActionDef] = T.actions;
        let schema = merge(&T);
        assert_eq!(schema["properties"]["action"]["enum"], json!(["a", "b"]));
        assert_eq!(schema["properties"]["limit"]["description"], "Actions: a.");
        assert_eq!(schema["properties"]["limit"]["type"], "integer");
        assert!(schema["properties"]["limit"].get("format").is_none());
        assert!(schema.get("oneOf").is_none() && schema.get("anyOf").is_none());
    }

    static WIDE: ToolDef = ToolDef {
        name: "w",
        description: "",
        takes_action: true,
        actions: &[
            action!("w", "a", B => sync ok, loopback: false, blocks: false),
            action!("w", "b", B => sync ok, loopback: false, blocks: false),
            action!("w", "c", B => sync ok, loopback: false, blocks: false),
            action!("w", "d", A => sync ok, loopback: false, blocks: false),
        ],
    };

    #[test]
    fn a_property_every_action_takes_names_none_and_one_most_take_names_the_exceptions() {
        let schema = merge(&T);
        assert_eq!(schema["properties"]["session_id"]["description"], "The session.", "a and b are every action");
        let schema = merge(&WIDE);
        assert_eq!(schema["properties"]["session_id"]["description"], "The session.");
        assert_eq!(schema["properties"]["limit"]["description"], "Actions: d.");
        let timeout = schema["properties"]["timeout_ms"]["description"].as_str().unwrap();
        assert_eq!(timeout, "a, b, c: How long (default 20). d: How long (default 10).");
    }

    #[test]
    fn a_property_documented_differently_per_action_says_each_actions_own_text() {
        let schema = merge(&T);
        assert_eq!(
            schema["properties"]["timeout_ms"]["description"],
            "a: How long (default 10). b: How long (default 20)."
        );
    }
}
