//! The `search_tools` index: BM25 over tool documents (name, description, action names, parameter
//! names), one entry per action so a query finds the action as well as the tool.
//!
//! The index takes any set of [`ToolDoc`]s: native tools give one from their declaration
//! ([`ToolDoc::native`]); an upstream tool, which has no actions, gives its name, description and
//! its schema's parameter names.

use std::cmp::Ordering;

use serde::Serialize;

use super::bm25::{Bm25, tokenize};
use crate::mcp::tools::ToolDef;

/// What the index knows of one tool.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolDoc {
    pub name: String,
    pub description: String,
    /// Empty for a tool called without an `action`.
    pub actions: Vec<ActionDoc>,
    /// Parameters of a tool without actions.
    pub params: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ActionDoc {
    pub name: String,
    pub params: Vec<String>,
}

impl ToolDoc {
    /// A native tool's document, from its declaration and derived schemas.
    pub(crate) fn native(tool: &ToolDef) -> Self {
        let params_of = |schema: schemars::Schema| -> Vec<String> {
            schema
                .get("properties")
                .and_then(|p| p.as_object())
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        };
        if !tool.takes_action {
            let params = tool.actions.first().map(|a| params_of((a.schema)())).unwrap_or_default();
            return Self { name: tool.name.into(), description: tool.description.into(), actions: Vec::new(), params };
        }
        let actions =
            tool.actions.iter().map(|a| ActionDoc { name: a.name.into(), params: params_of((a.schema)()) }).collect();
        Self { name: tool.name.into(), description: tool.description.into(), actions, params: Vec::new() }
    }

    /// The tool's first sentence: what `search_tools` shows beside its name.
    pub(crate) fn summary(&self) -> String {
        first_sentence(&self.description)
    }
}

/// The first sentence of a description (up to the first ". " or line end).
pub(crate) fn first_sentence(description: &str) -> String {
    let line = description.lines().next().unwrap_or("");
    let end = line.find(". ").map_or(line.len(), |i| i + 1);
    line[..end].trim().to_owned()
}

/// One tool in a search answer: its matching actions best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Hit {
    pub name: String,
    pub summary: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    #[serde(skip)]
    pub score: f64,
}

/// The index: one BM25 document per action (or per tool without actions), and one per tool.
///
/// An action scores by two fields: what it says (its name, line, keywords and parameters) and,
/// at [`TOOL_FIELD_WEIGHT`], what its tool says (name and preamble); a tool without actions by
/// its one document (name, first sentence, keywords). Kept apart, the tool's words
/// (every `agent` action's preamble mentions messages) do not make those words common among the
/// actions, which would leave the action that is about them no better off than its siblings.
#[derive(Debug, Default)]
pub(crate) struct ToolIndex {
    tools: Vec<ToolDoc>,
    /// Per action document: the tool's position and the action's name, if any.
    entries: Vec<(usize, Option<String>)>,
    actions: Bm25,
    /// One document per tool, by position.
    own: Bm25,
}

/// Most actions one hit lists.
const ACTIONS_PER_HIT: usize = 3;

/// How much the tool's own words count against its action's: they tell `session wait` from
/// `agent wait`, but an action's own words say more precisely what a request means.
const TOOL_FIELD_WEIGHT: f64 = 0.3;

impl ToolIndex {
    pub(crate) fn build(tools: Vec<ToolDoc>) -> Self {
        let mut entries = Vec::new();
        let mut documents = Vec::new();
        let mut own = Vec::new();
        for (position, tool) in tools.iter().enumerate() {
            let (preamble, lines) = split_description(&tool.description);
            let mut common = tokenize(&tool.name);
            common.extend(tokenize(&preamble));
            own.push(common);
            if tool.actions.is_empty() {
                // Its first sentence, like an action's line, says what it does; the rest of its
                // description and its parameters say how, and would only make its document long
                // beside the actions' short ones.
                let mut tokens = tokenize(&tool.name);
                tokens.extend(tokenize(&first_sentence(&tool.description)));
                tokens.extend(tokenize(super::keywords::of(&tool.name, None)));
                documents.push(tokens);
                entries.push((position, None));
                continue;
            }
            for action in &tool.actions {
                let own_line = lines.iter().filter(|(names, _)| names.contains(&action.name.as_str()));
                let mut tokens = tokenize(&action.name);
                tokens.extend(own_line.flat_map(|(_, text)| tokenize(text)));
                tokens.extend(tokenize(super::keywords::of(&tool.name, Some(&action.name))));
                tokens.extend(action.params.iter().flat_map(|p| tokenize(p)));
                documents.push(tokens);
                entries.push((position, Some(action.name.clone())));
            }
        }
        Self { tools, entries, actions: Bm25::new(documents), own: Bm25::new(own) }
    }

    /// The names of the indexed tools, in the order they were given.
    pub(crate) fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// Every matching (tool, action) pair, best first; ties keep declaration order.
    pub(crate) fn ranked(&self, query: &str) -> Vec<(String, Option<String>, f64)> {
        let query = tokenize(query);
        let own = self.own.scores(&query);
        let scores = self.actions.scores(&query).into_iter().zip(&self.entries);
        // A tool without actions is scored by its one document (its tool field says the same).
        let scores = scores.map(|(score, (tool, action))| match action {
            Some(_) => score + TOOL_FIELD_WEIGHT * own[*tool],
            None => score,
        });
        let mut ranked: Vec<(usize, f64)> = scores.enumerate().filter(|(_, s)| *s > 0.0).collect();
        ranked.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .map(|(i, score)| {
                let (tool, action) = &self.entries[i];
                (self.tools[*tool].name.clone(), action.clone(), score)
            })
            .collect()
    }

    /// The best `limit` tools for `query`, each with its best matching actions.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let mut hits: Vec<Hit> = Vec::new();
        for (tool, action, score) in self.ranked(query) {
            let hit = match hits.iter_mut().position(|h| h.name == tool) {
                Some(i) => &mut hits[i],
                None => {
                    let summary = self.tools.iter().find(|t| t.name == tool).map(ToolDoc::summary).unwrap_or_default();
                    hits.push(Hit { name: tool, summary, actions: Vec::new(), score });
                    hits.last_mut().expect("just pushed")
                }
            };
            if let Some(action) = action
                && hit.actions.len() < ACTIONS_PER_HIT
            {
                hit.actions.push(action);
            }
        }
        hits.truncate(limit);
        hits
    }
}

/// A description's preamble and its `- name: text` (or `- a / b: text`) action lines.
fn split_description(description: &str) -> (String, Vec<(Vec<&str>, &str)>) {
    let mut preamble = String::new();
    let mut lines = Vec::new();
    for line in description.lines() {
        let parsed = line.strip_prefix("- ").and_then(|rest| rest.split_once(": "));
        match parsed {
            Some((names, text))
                if names.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c == ' ' || c == '/') =>
            {
                lines.push((names.split('/').map(str::trim).collect(), text));
            }
            _ => {
                preamble.push_str(line);
                preamble.push('\n');
            }
        }
    }
    (preamble, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, description: &str, actions: &[(&str, &[&str])]) -> ToolDoc {
        ToolDoc {
            name: name.into(),
            description: description.into(),
            actions: actions
                .iter()
                .map(|(a, p)| ActionDoc { name: (*a).into(), params: p.iter().map(|s| (*s).into()).collect() })
                .collect(),
            params: Vec::new(),
        }
    }

    #[test]
    fn any_tool_documents_can_be_indexed_and_actions_rank_within_tools() {
        let index = ToolIndex::build(vec![
            doc(
                "files",
                "Files on disk.\n\n- read: a file's bytes.\n- write: replaces a file.",
                &[("read", &["path"]), ("write", &["path", "content"])],
            ),
            ToolDoc {
                name: "weather".into(),
                description: "Forecasts for a city.".into(),
                actions: Vec::new(),
                params: vec!["city".into()],
            },
        ]);
        assert_eq!(index.names(), ["files", "weather"]);
        let hits = index.search("replace the content of a file", 10);
        assert_eq!(hits[0].name, "files");
        assert_eq!(hits[0].actions, ["write", "read"]);
        assert_eq!(hits[0].summary, "Files on disk.");
        assert_eq!(index.search("forecast for my city", 10)[0].name, "weather");
        assert!(index.search("zebra", 10).is_empty());
    }
}
