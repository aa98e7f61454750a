//! Okapi BM25 over short English documents: the ranking behind `search_tools`.
//!
//! Pure and small on purpose: the corpus is a few dozen tool actions (later, upstream tools too),
//! so the index is rebuilt whole whenever the tool set changes instead of being updated in place.

use std::collections::HashMap;

/// The usual Okapi constants: `K1` saturates repeated terms, `B` normalises by document length.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words too common in tool text to tell one tool from another.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "in", "into", "is", "it",
    "its", "me", "my", "of", "on", "one", "or", "that", "the", "their", "then", "this", "to", "until", "what", "when",
    "which", "with", "you", "your",
];

/// Lower-cased words of `text` with a light suffix stemming; `snake_case` names give their parts
/// and, when they have several, the whole name too (so `list_peers` matches "list peers" and
/// `list_peers` alike).
pub(crate) fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let word = word.trim_matches('_').to_lowercase();
        if word.is_empty() {
            continue;
        }
        let parts: Vec<&str> = word.split('_').filter(|p| !p.is_empty()).collect();
        if parts.len() > 1 {
            tokens.push(word.clone());
        }
        for part in parts {
            if !STOP_WORDS.contains(&part) {
                tokens.push(stem(part));
            }
        }
    }
    tokens
}

/// Strips one common English inflection and a final silent `e`, keeping at least three letters,
/// so that "types", "typing" and "type" (or "closed" and "close") meet.
fn stem(word: &str) -> String {
    let mut stem = word.to_owned();
    let long = |s: &str| s.chars().count() >= 3;
    if let Some(s) = word.strip_suffix("ies").filter(|s| long(s)) {
        stem = format!("{s}y");
    } else if let Some(s) =
        word.strip_suffix("es").filter(|s| long(s) && ["x", "z", "ch", "sh", "ss"].iter().any(|e| s.ends_with(e)))
    {
        stem = s.to_owned();
    } else if let Some(s) = ["ing", "ed"].iter().find_map(|suffix| word.strip_suffix(suffix)).filter(|s| long(s)) {
        stem = s.to_owned();
    } else if let Some(s) = word.strip_suffix('s').filter(|s| long(s) && !s.ends_with('s')) {
        stem = s.to_owned();
    }
    match stem.strip_suffix('e') {
        Some(s) if long(s) => s.to_owned(),
        _ => stem,
    }
}

/// An index over documents given as token lists; scores are by document position.
#[derive(Debug, Default)]
pub(crate) struct Bm25 {
    /// Per document: term frequencies and length.
    docs: Vec<(HashMap<String, u32>, usize)>,
    /// Per term: how many documents hold it.
    df: HashMap<String, u32>,
    avg_len: f64,
}

impl Bm25 {
    pub(crate) fn new(documents: Vec<Vec<String>>) -> Self {
        let mut df: HashMap<String, u32> = HashMap::new();
        let mut docs = Vec::with_capacity(documents.len());
        let mut total = 0usize;
        for tokens in documents {
            let mut tf: HashMap<String, u32> = HashMap::new();
            for token in &tokens {
                *tf.entry(token.clone()).or_default() += 1;
            }
            for term in tf.keys() {
                *df.entry(term.clone()).or_default() += 1;
            }
            total += tokens.len();
            docs.push((tf, tokens.len()));
        }
        let avg_len = if docs.is_empty() { 0.0 } else { total as f64 / docs.len() as f64 };
        Self { docs, df, avg_len }
    }

    /// The score of every document for `query` (already tokenized), by document position.
    pub(crate) fn scores(&self, query: &[String]) -> Vec<f64> {
        let n = self.docs.len() as f64;
        let mut terms: Vec<&String> = query.iter().collect();
        terms.sort();
        terms.dedup();
        self.docs
            .iter()
            .map(|(tf, len)| {
                terms
                    .iter()
                    .filter_map(|term| {
                        let f = f64::from(*tf.get(*term)?);
                        let df = f64::from(self.df.get(*term).copied().unwrap_or(0));
                        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                        let norm = 1.0 - B + B * (*len as f64) / self.avg_len.max(1.0);
                        Some(idf * f * (K1 + 1.0) / (f + K1 * norm))
                    })
                    .sum()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_lowercased_stemmed_and_split_on_underscores() {
        assert_eq!(tokenize("Waits until the Agents are idle"), ["wait", "agent", "idl"]);
        assert_eq!(tokenize("types typing type"), ["typ", "typ", "typ"]);
        assert_eq!(tokenize("closed close matches"), ["clos", "clos", "match"]);
        assert_eq!(tokenize("list_peers"), ["list_peers", "list", "peer"]);
        assert_eq!(tokenize("process"), ["process"], "a double s is no plural");
        assert_eq!(tokenize("replies"), ["reply"]);
    }

    #[test]
    fn the_document_with_the_rarer_matching_term_ranks_first() {
        let docs = ["read terminal output", "write terminal input", "terminal terminal list"];
        let index = Bm25::new(docs.iter().map(|d| tokenize(d)).collect());
        let scores = index.scores(&tokenize("read the output"));
        assert!(scores[0] > scores[1] && scores[0] > scores[2], "{scores:?}");
        assert_eq!(index.scores(&tokenize("nothing matches")), [0.0, 0.0, 0.0]);
    }
}
