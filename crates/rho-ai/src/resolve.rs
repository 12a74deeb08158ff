//! Turning what a user typed into models: `--model` (one model; docs/agent-behavior.md,
//! "Model patterns"), `--models` / `enabledModels` scopes ("Command line" there) and the
//! `--list-models [search]` filter.
//!
//! `--model` considers every model, key or not (so `--api-key` works on first use):
//! - `--provider` (case-insensitive) restricts the candidates; without it, a `prefix/` naming a
//!   known provider is split off, else an exact id or `provider/id` across all models wins (an id
//!   several providers share picks the one provider with a key, else it is ambiguous);
//! - a pattern matches exactly (`provider/id` or id, case-insensitive) or else as a substring of
//!   an id or name; among several, aliases (`-latest`, or no `-YYYYMMDD` date) beat dated ids and
//!   the highest id wins;
//! - a `:level` suffix that is a thinking level is tried off when the whole pattern matches
//!   nothing;
//! - a known provider with an unknown id gives that provider's default model under the new id,
//!   with a warning.

use std::collections::HashSet;

use crate::model::{Model, ThinkingLevel};
use crate::registry::ModelRegistry;

/// A model chosen by `--model`, with the thinking level its `:level` suffix gave.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedModel {
    pub model: Model,
    pub thinking: Option<ThinkingLevel>,
    /// Set when the model was made up for an id its provider does not list; print it.
    pub warning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResolveError {
    #[error("Unknown provider \"{provider}\". Use --list-models to see available providers/models.")]
    UnknownProvider { provider: String },
    /// `suggestions` holds the closest `provider/id`s, best first, for a "did you mean" line.
    #[error("Model \"{pattern}\" not found. Use --list-models to see available models.")]
    NotFound { pattern: String, suggestions: Vec<String> },
    /// An exact id several providers list, none of them (or more than one) with a key.
    #[error(
        "Model \"{pattern}\" is listed by more than one provider: {}. Use --provider or provider/model.",
        matches.join(", ")
    )]
    Ambiguous { pattern: String, matches: Vec<String> },
}

/// Resolves a `--model` pattern, restricted to `provider` when `--provider` was given.
pub fn resolve_model(
    registry: &ModelRegistry,
    pattern: &str,
    provider: Option<&str>,
) -> Result<ResolvedModel, ResolveError> {
    let all: Vec<&Model> = registry.all().iter().collect();
    let providers = registry.providers();
    // A provider pi 1.6 renamed is also found by its new name (`azure` for the catalogue's
    // `azure-openai-responses`).
    let canonical = |name: &str| {
        let renamed = crate::auth::RENAMED_PROVIDERS.iter().find(|(_, new)| new.eq_ignore_ascii_case(name));
        let name = renamed.map_or(name, |(old, _)| *old);
        providers.iter().copied().find(|p| p.eq_ignore_ascii_case(name))
    };
    let found = |model: &Model, thinking| ResolvedModel { model: model.clone(), thinking, warning: None };

    let mut rest = pattern;
    let mut inferred = false;
    let chosen = match provider {
        Some(name) => {
            let Some(p) = canonical(name) else {
                return Err(ResolveError::UnknownProvider { provider: name.to_owned() });
            };
            if let Some((prefix, tail)) = pattern.split_once('/')
                && canonical(prefix) == Some(p)
            {
                rest = tail;
            }
            Some(p)
        }
        None => match pattern.split_once('/') {
            Some((prefix, tail)) if canonical(prefix).is_some() => {
                rest = tail;
                inferred = true;
                canonical(prefix)
            }
            _ => None,
        },
    };

    if chosen.is_none() {
        let exact = exact_anywhere(&all, pattern);
        match pick_keyed(registry, &exact) {
            Pick::One(model) => return Ok(found(model, None)),
            Pick::Many => {
                return Err(ResolveError::Ambiguous { pattern: pattern.to_owned(), matches: sorted_selectors(&exact) });
            }
            Pick::None => {}
        }
    }

    let candidates: Vec<&Model> = match chosen {
        Some(p) => all.iter().copied().filter(|m| m.provider == p).collect(),
        None => all.clone(),
    };
    let parsed = parse_pattern(rest, &candidates, Strictness::Strict);
    if let Some(model) = parsed.model {
        return Ok(found(model, parsed.thinking));
    }

    if inferred {
        // `openai/gpt-oss-120b` may be an id of its own (OpenRouter, Groq), not provider/id.
        let exact = exact_anywhere(&all, pattern);
        match pick_keyed(registry, &exact) {
            Pick::One(model) => return Ok(found(model, None)),
            Pick::Many => return Ok(found(exact[0], None)),
            Pick::None => {}
        }
        let parsed = parse_pattern(pattern, &all, Strictness::Strict);
        if let Some(model) = parsed.model {
            return Ok(found(model, parsed.thinking));
        }
    }

    if let Some(p) = chosen
        && let Some(base) = registry.provider_default(p)
    {
        let (id, thinking) = split_thinking(rest);
        let mut model = base.clone();
        model.id = id.to_owned();
        model.name = id.to_owned();
        if thinking.is_some_and(|t| t != ThinkingLevel::Off) {
            model.reasoning = true;
        }
        return Ok(ResolvedModel {
            model,
            thinking,
            warning: Some(format!("Model \"{id}\" not found for provider \"{p}\". Using custom model id.")),
        });
    }

    let display = match chosen {
        Some(p) => format!("{p}/{rest}"),
        None => pattern.to_owned(),
    };
    Err(ResolveError::NotFound { pattern: display, suggestions: suggestions(&candidates, split_thinking(rest).0) })
}

/// A model of a `--models` scope with the level its `:level` suffix gave.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedModel {
    pub model: Model,
    pub thinking: Option<ThinkingLevel>,
}

/// The models a list of scope patterns selects, and a warning per pattern that selected none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    pub models: Vec<ScopedModel>,
    pub warnings: Vec<String>,
}

/// Resolves `--models` / `enabledModels` patterns over the available models. A pattern with
/// `*`, `?` or `[` is a glob matched case-insensitively against `provider/id` and against `id`
/// (`*` also matches `/`, so `openrouter/*` selects every OpenRouter model); others resolve like
/// `--model`, except that an invalid `:level` suffix is dropped with a warning. Each model is
/// listed once, in the order first selected.
pub fn resolve_scope<S: AsRef<str>>(registry: &ModelRegistry, patterns: &[S]) -> Scope {
    let available = registry.available();
    let mut scope = Scope::default();
    let mut seen = HashSet::new();
    let mut add = |scope: &mut Scope, model: &Model, thinking| {
        if seen.insert((model.provider.clone(), model.id.clone())) {
            scope.models.push(ScopedModel { model: model.clone(), thinking });
        }
    };
    for pattern in patterns.iter().map(|p| p.as_ref().trim()) {
        if pattern.is_empty() {
            continue;
        }
        if pattern.contains(['*', '?', '[']) {
            let (glob, thinking) = split_thinking(pattern);
            if let Exact::One(model) = find_exact(glob, &available) {
                add(&mut scope, model, thinking);
                continue;
            }
            let matcher = match globset::GlobBuilder::new(glob).case_insensitive(true).literal_separator(false).build()
            {
                Ok(glob) => glob.compile_matcher(),
                Err(e) => {
                    scope.warnings.push(format!("Invalid model pattern \"{pattern}\": {}", e.kind()));
                    continue;
                }
            };
            let matched: Vec<&Model> = available
                .iter()
                .copied()
                .filter(|m| matcher.is_match(m.selector()) || matcher.is_match(&m.id))
                .collect();
            if matched.is_empty() {
                scope.warnings.push(no_match(pattern));
            }
            for model in matched {
                add(&mut scope, model, thinking);
            }
            continue;
        }
        let parsed = parse_pattern(pattern, &available, Strictness::Lenient);
        if let Some(warning) = parsed.warning {
            scope.warnings.push(warning);
        }
        match parsed.model {
            Some(model) => add(&mut scope, model, parsed.thinking),
            None => scope.warnings.push(no_match(pattern)),
        }
    }
    scope
}

fn no_match(pattern: &str) -> String {
    format!("No models match pattern \"{pattern}\"")
}

/// The models whose `provider id` text contains every word of `search` as a subsequence
/// (case-insensitive), best matches first: whole-word substrings before scattered letters.
/// An empty search keeps every model in order.
pub fn filter_models<'a>(models: impl IntoIterator<Item = &'a Model>, search: &str) -> Vec<&'a Model> {
    let words: Vec<String> = search.split_whitespace().map(str::to_lowercase).collect();
    let mut scored: Vec<(usize, &Model)> = models
        .into_iter()
        .filter_map(|model| {
            let text = format!("{} {}", model.provider, model.id).to_lowercase();
            let mut score = 0;
            for word in &words {
                score += fuzzy_score(&text, word)?;
            }
            Some((score, model))
        })
        .collect();
    scored.sort_by_key(|(score, _)| *score);
    scored.into_iter().map(|(_, m)| m).collect()
}

/// 0 for a substring; else how many letters the match skips (`None` when it is no subsequence).
fn fuzzy_score(text: &str, word: &str) -> Option<usize> {
    if text.contains(word) {
        return Some(0);
    }
    let mut gaps = 0;
    let mut chars = text.chars();
    for wanted in word.chars() {
        let mut skipped = 0;
        loop {
            match chars.next() {
                Some(c) if c == wanted => break,
                Some(_) => skipped += 1,
                None => return None,
            }
        }
        gaps += skipped;
    }
    Some(1 + gaps)
}

// ---- matching --------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Strictness {
    /// `--model`: an invalid `:suffix` is part of the id, so nothing matches.
    Strict,
    /// Scopes: an invalid `:suffix` is dropped with a warning.
    Lenient,
}

struct Parsed<'a> {
    model: Option<&'a Model>,
    thinking: Option<ThinkingLevel>,
    warning: Option<String>,
}

/// Matches `pattern` whole; failing that, splits a `:suffix` off the end and tries again, so ids
/// with colons of their own (`model:free`) still match.
fn parse_pattern<'a>(pattern: &str, models: &[&'a Model], strictness: Strictness) -> Parsed<'a> {
    if let Some(model) = try_match(pattern, models) {
        return Parsed { model: Some(model), thinking: None, warning: None };
    }
    let none = Parsed { model: None, thinking: None, warning: None };
    let Some((prefix, suffix)) = pattern.rsplit_once(':') else {
        return none;
    };
    match ThinkingLevel::parse(suffix) {
        Some(level) => {
            let inner = parse_pattern(prefix, models, strictness);
            Parsed { thinking: inner.model.is_some().then_some(level).filter(|_| inner.warning.is_none()), ..inner }
        }
        None if strictness == Strictness::Strict => none,
        None => {
            let inner = parse_pattern(prefix, models, strictness);
            match inner.model {
                Some(model) => Parsed {
                    model: Some(model),
                    thinking: None,
                    warning: Some(format!(
                        "Invalid thinking level \"{suffix}\" in pattern \"{pattern}\". Using default instead."
                    )),
                },
                None => inner,
            }
        }
    }
}

/// An exact match, else the best substring match.
fn try_match<'a>(pattern: &str, models: &[&'a Model]) -> Option<&'a Model> {
    if let Exact::One(model) = find_exact(pattern, models) {
        return Some(model);
    }
    let needle = pattern.to_lowercase();
    if needle.is_empty() {
        return None;
    }
    let matches: Vec<&Model> = models
        .iter()
        .copied()
        .filter(|m| m.id.to_lowercase().contains(&needle) || m.name.to_lowercase().contains(&needle))
        .collect();
    let aliases: Vec<&Model> = matches.iter().copied().filter(|m| is_alias(&m.id)).collect();
    let pool = if aliases.is_empty() { matches } else { aliases };
    // The highest id in pi's order (`localeCompare`: `~anthropic/…` is below `claude-…`); on a
    // tie (one id at several providers) the first in registry order.
    pool.into_iter().rev().max_by(|a, b| crate::catalog::locale_compare(&a.id, &b.id))
}

/// `claude-sonnet-4-5` and `mistral-large-latest` are aliases; `claude-sonnet-4-5-20250929` is
/// a dated snapshot.
fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let bytes = id.as_bytes();
    let dated =
        bytes.len() >= 9 && bytes[bytes.len() - 9] == b'-' && bytes[bytes.len() - 8..].iter().all(u8::is_ascii_digit);
    !dated
}

enum Exact<'a> {
    One(&'a Model),
    Many,
    None,
}

/// An exact `provider/id` or id match (case-insensitive) that names one model.
fn find_exact<'a>(reference: &str, models: &[&'a Model]) -> Exact<'a> {
    let reference = reference.trim();
    if reference.is_empty() {
        return Exact::None;
    }
    let lower = reference.to_lowercase();
    let canonical: Vec<&Model> = models.iter().copied().filter(|m| m.selector().to_lowercase() == lower).collect();
    match canonical.len() {
        1 => return Exact::One(canonical[0]),
        0 => {}
        _ => return Exact::Many,
    }
    let by_id: Vec<&Model> = models.iter().copied().filter(|m| m.id.to_lowercase() == lower).collect();
    match by_id.len() {
        0 => Exact::None,
        1 => Exact::One(by_id[0]),
        _ => Exact::Many,
    }
}

/// Every model whose id or `provider/id` is `pattern` (case-insensitive).
fn exact_anywhere<'a>(all: &[&'a Model], pattern: &str) -> Vec<&'a Model> {
    let lower = pattern.to_lowercase();
    all.iter().copied().filter(|m| m.id.to_lowercase() == lower || m.selector().to_lowercase() == lower).collect()
}

enum Pick<'a> {
    One(&'a Model),
    Many,
    None,
}

/// One model, or the one among several whose provider has a key.
fn pick_keyed<'a>(registry: &ModelRegistry, models: &[&'a Model]) -> Pick<'a> {
    match models {
        [] => Pick::None,
        [one] => Pick::One(one),
        many => {
            let keyed: Vec<&Model> = many.iter().copied().filter(|m| registry.has_key(&m.provider)).collect();
            match keyed.as_slice() {
                [one] => Pick::One(one),
                _ => Pick::Many,
            }
        }
    }
}

fn sorted_selectors(models: &[&Model]) -> Vec<String> {
    let mut selectors: Vec<String> = models.iter().map(|m| m.selector()).collect();
    selectors.sort();
    selectors
}

/// `pattern` without a `:level` suffix, and that level.
fn split_thinking(pattern: &str) -> (&str, Option<ThinkingLevel>) {
    match pattern.rsplit_once(':') {
        Some((prefix, suffix)) => match ThinkingLevel::parse(suffix) {
            Some(level) => (prefix, Some(level)),
            None => (pattern, None),
        },
        None => (pattern, None),
    }
}

/// Up to five `provider/id`s close to `pattern`: by edit distance, or sharing a word of three or
/// more letters with it.
fn suggestions(models: &[&Model], pattern: &str) -> Vec<String> {
    const MAX: usize = 5;
    let query = pattern.to_lowercase();
    if query.is_empty() {
        return Vec::new();
    }
    let words: Vec<&str> = query
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .collect();
    let threshold = (query.chars().count() / 3).max(2);
    let mut ranked: Vec<(usize, usize, String)> = models
        .iter()
        .enumerate()
        .filter_map(|(order, m)| {
            let id = m.id.to_lowercase();
            let distance = edit_distance(&query, &id).min(edit_distance(&query, &m.selector().to_lowercase()));
            let shares_word = words.iter().any(|w| id.contains(w));
            (distance <= threshold || shares_word).then(|| (distance, order, m.selector()))
        })
        .collect();
    ranked.sort();
    ranked.into_iter().take(MAX).map(|(_, _, s)| s).collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb { diagonal } else { 1 + diagonal.min(above).min(row[j]) };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
