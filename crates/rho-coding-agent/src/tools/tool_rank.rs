//! How `tool_search` ranks the tools it may load for a query: Okapi BM25 over each tool's
//! description and its schema's descriptions and property names, with the tool's name as a field
//! of its own worth more than any number of mentions. A tool matching more of the query's words
//! ranks above one matching fewer; a query that is exactly a tool's name (or the part after its
//! last `__`) puts that tool first; a tool whose own name's words are all in the query gets a
//! bonus. Words are split at case and punctuation changes, lower-cased, stop words dropped and
//! plural `s` endings taken off.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// What a ranked tool is known by.
#[derive(Debug, Clone)]
pub struct ToolDocument {
    pub name: String,
    /// Its description and its schema's text.
    pub text: String,
}

impl ToolDocument {
    /// The document of a tool with `description` and the JSON Schema `parameters`.
    pub fn new(name: &str, description: &str, parameters: &Value) -> Self {
        let mut parts = vec![description.to_owned()];
        schema_text(parameters, &mut parts, 0);
        Self { name: name.to_owned(), text: parts.join(" ") }
    }
}

/// How many times a word's rarity a word in the name counts.
const NAME_WEIGHT: f64 = 3.0;
const K1: f64 = 1.2;
const B: f64 = 0.75;

const STOP_WORDS: [&str; 21] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on", "or", "that", "the",
    "this", "to", "with",
];

/// The schema's descriptions and property names, nested ones included (bounded).
fn schema_text(schema: &Value, parts: &mut Vec<String>, depth: usize) {
    if depth > 8 {
        return;
    }
    let Some(object) = schema.as_object() else { return };
    if let Some(description) = object.get("description").and_then(Value::as_str) {
        parts.push(description.to_owned());
    }
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            parts.push(name.clone());
            schema_text(property, parts, depth + 1);
        }
    }
    if let Some(items) = object.get("items") {
        schema_text(items, parts, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for variant in object.get(key).and_then(Value::as_array).into_iter().flatten() {
            schema_text(variant, parts, depth + 1);
        }
    }
}

/// A word without a plural ending.
fn singular(word: &str) -> String {
    let n = word.len();
    if n > 4 && word.ends_with("ies") {
        return format!("{}y", &word[..n - 3]);
    }
    if n > 4 && ["ches", "shes", "sses", "xes", "zes"].iter().any(|end| word.ends_with(end)) {
        return word[..n - 2].to_owned();
    }
    if n > 3 && word.ends_with('s') && !word.ends_with("ss") {
        return word[..n - 1].to_owned();
    }
    word.to_owned()
}

/// The words of `text`: `getIssue` and `get_issue` are `get` and `issue`.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous: Option<char> = None;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            let lower = word.to_lowercase();
            if !STOP_WORDS.contains(&lower.as_str()) {
                let ascii = lower.chars().all(|c| c.is_ascii_alphanumeric());
                out.push(if ascii { singular(&lower) } else { lower });
            }
            word.clear();
        }
    };
    for c in text.chars() {
        if !c.is_alphanumeric() {
            flush(&mut word, &mut out);
        } else {
            // A capital after a lower-case letter or digit starts a word.
            if c.is_uppercase() && previous.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) {
                flush(&mut word, &mut out);
            }
            word.push(c);
        }
        previous = Some(c);
    }
    flush(&mut word, &mut out);
    out
}

/// A name as a query compares it: lower-case, what is not a letter, digit or `_` made `_`.
fn normal_name(name: &str) -> String {
    name.trim().to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// The names of the best `limit` tools for `query`, best first; none matching no word.
pub fn rank(query: &str, documents: &[ToolDocument], limit: usize) -> Vec<String> {
    let query_words: HashSet<String> = words(query).into_iter().collect();
    if query_words.is_empty() || documents.is_empty() || limit == 0 {
        return Vec::new();
    }
    struct Indexed {
        name_words: HashSet<String>,
        local_words: HashSet<String>,
        counts: HashMap<String, usize>,
        length: usize,
    }
    let indexed: Vec<Indexed> = documents
        .iter()
        .map(|d| {
            let mut counts: HashMap<String, usize> = HashMap::new();
            for word in words(&d.text) {
                *counts.entry(word).or_default() += 1;
            }
            let local = d.name.rsplit("__").next().unwrap_or(&d.name);
            Indexed {
                name_words: words(&d.name).into_iter().collect(),
                local_words: words(local).into_iter().collect(),
                length: counts.values().sum(),
                counts,
            }
        })
        .collect();
    let total = indexed.len() as f64;
    let average = (indexed.iter().map(|d| d.length).sum::<usize>() as f64 / total).max(1.0);
    let rarity: HashMap<&String, f64> = query_words
        .iter()
        .map(|w| {
            let having = indexed.iter().filter(|d| d.name_words.contains(w) || d.counts.contains_key(w)).count() as f64;
            (w, (1.0 + (total - having + 0.5) / (having + 0.5)).ln())
        })
        .collect();
    let whole_name_bonus: f64 = rarity.values().sum();
    let exact = normal_name(query);
    let mut scored: Vec<(bool, usize, f64, usize)> = Vec::new();
    for (at, doc) in indexed.iter().enumerate() {
        let norm = K1 * (1.0 - B + B * doc.length as f64 / average);
        let (mut score, mut covered) = (0.0, 0);
        for word in &query_words {
            let count = *doc.counts.get(word).unwrap_or(&0) as f64;
            let weight =
                if doc.name_words.contains(word) { NAME_WEIGHT } else { 0.0 } + count * (K1 + 1.0) / (count + norm);
            if weight > 0.0 {
                covered += 1;
            }
            score += rarity[word] * weight;
        }
        if score == 0.0 {
            continue;
        }
        if !doc.local_words.is_empty() && doc.local_words.iter().all(|w| query_words.contains(w)) {
            score += whole_name_bonus;
        }
        let name = normal_name(&documents[at].name);
        let is_exact = name == exact || name.ends_with(&format!("__{exact}"));
        scored.push((is_exact, covered, score, at));
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(b.2.total_cmp(&a.2)).then(a.3.cmp(&b.3)));
    scored.into_iter().take(limit).map(|(_, _, _, at)| documents[at].name.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(name: &str, text: &str) -> ToolDocument {
        ToolDocument::new(name, text, &json!({}))
    }

    #[test]
    fn words_split_identifiers_and_drop_plurals_and_stop_words() {
        assert_eq!(words("getIssues for the repo_names"), ["get", "issue", "repo", "name"]);
        assert_eq!(words("mcp__github__search_code"), ["mcp", "github", "search", "code"]);
    }

    #[test]
    fn names_coverage_and_exact_names_rank_first() {
        let docs = [
            doc("mcp__gh__list_issues", "Lists the issues of a repository."),
            doc("mcp__gh__create_issue", "Opens a new issue in a repository with a title and body."),
            doc("mcp__files__window", "Moves a window."),
            doc("mcp__shot__capture", "Takes a screenshot of a window."),
        ];
        assert_eq!(rank("create issue", &docs, 2), ["mcp__gh__create_issue", "mcp__gh__list_issues"]);
        // Both words in a description beat one in a name.
        assert_eq!(rank("screenshot window", &docs, 1), ["mcp__shot__capture"]);
        // The whole query is a tool's (local) name.
        assert_eq!(rank("list_issues", &docs, 1), ["mcp__gh__list_issues"]);
        assert!(rank("weather", &docs, 5).is_empty());
        assert!(rank("the", &docs, 5).is_empty());
    }

    #[test]
    fn schemas_count_toward_the_text() {
        let schema =
            json!({"type": "object", "properties": {"latitude": {"type": "number", "description": "Degrees north"}}});
        let d = ToolDocument::new("mcp__w__get", "Looks something up.", &schema);
        assert_eq!(rank("latitude", &[d], 1), ["mcp__w__get"]);
    }
}
