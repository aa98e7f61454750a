//! The agent's answer text into the task's typed shape. Accepted: the JSON object alone, or the
//! JSON object as the only content of one Markdown code fence (```json … ```). Anything else
//! (prose around it, two objects, a field of the wrong type) is refused with the reason.

use serde::de::DeserializeOwned;

use super::AiError;
use super::agent::head;

pub(crate) fn parse<T: DeserializeOwned>(agent: &'static str, text: &str) -> Result<T, AiError> {
    let json = unfence(text.trim());
    if !json.starts_with('{') {
        return Err(AiError::BadReply { agent, message: format!("its answer is not a JSON object: {}", head(text)) });
    }
    let de = &mut serde_json::Deserializer::from_str(json);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = if inner.is_syntax() || inner.is_eof() {
            format!("its answer is not valid JSON ({inner}): {}", head(text))
        } else if path == "." {
            format!("its answer does not have the shape asked for: {inner}")
        } else {
            format!("its answer does not have the shape asked for: {path}: {inner}")
        };
        AiError::BadReply { agent, message }
    })?;
    // Only whitespace may follow the object.
    de.end().map_err(|e| AiError::BadReply {
        agent,
        message: format!("its answer is not valid JSON ({e}): {}", head(text)),
    })?;
    Ok(value)
}

/// The inside of one code fence that is the whole text; the text itself otherwise.
fn unfence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else { return text };
    let Some(body) = rest.strip_suffix("```") else { return text };
    // The info string (`json`) runs to the end of the first line.
    match body.split_once('\n') {
        Some((info, inside)) if !info.contains("```") && !inside.contains("```") => inside.trim(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Shape {
        n: u32,
    }

    #[test]
    fn a_bare_or_fenced_object_parses_and_anything_else_is_refused_with_why() {
        assert_eq!(parse::<Shape>("a", " {\"n\": 1} ").unwrap(), Shape { n: 1 });
        assert_eq!(parse::<Shape>("a", "```json\n{\"n\": 2}\n```").unwrap(), Shape { n: 2 });
        let err = |text: &str| parse::<Shape>("claude", text).unwrap_err().to_string();
        assert!(err("Sure! {\"n\": 1}").contains("not a JSON object"));
        assert!(err("{\"n\": 1} and more").contains("not valid JSON"));
        assert!(err("{\"n\": \"one\"}").contains("n: invalid type"), "{}", err("{\"n\": \"one\"}"));
        assert!(err("{}").contains("missing field `n`"));
        assert!(err("```json\n{\"n\": 1}\n```\n```json\n{\"n\": 2}\n```").contains("not a JSON object"));
        assert!(err("").starts_with("the headless agent 'claude' answered"));
    }
}
