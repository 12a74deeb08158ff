//! Turning what a user typed into models: `--model` (one model; docs/agent-behavior.md,
//! "Model patterns"), `--models` / `enabledModels` scopes ("Command line" there) and the
//! `--list-models [search]` filter.
//!
//! `--model` considers every model, key or not (so `--api-key` works on first use), as pi 1.6
//! resolves it:
//! - `--provider` (case-insensitive) restricts the candidates;
//! - an exact id, or `provider/id` (`provider/` is only a hint: the whole text may be a gateway's
//!   id), matches first; when several providers match, a key decides, else it is ambiguous;
//! - else a substring of an id or name; aliases (`-latest`, or no `-YYYYMMDD` date) beat dated
//!   ids and the highest id wins; the same id at several providers is decided by a key or is
//!   ambiguous, never by catalogue order;
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
    /// A model several providers list, none of them (or more than one) with a key.
    #[error(
        "Model \"{pattern}\" is ambiguous across providers: {}. {} Use --provider or provider/model.",
        matches.join(", "),
        if *authenticated { "More than one matching provider is authenticated." } else { "No matching provider is authenticated." }
    )]
    Ambiguous { pattern: String, matches: Vec<String>, authenticated: bool },
}

/// Resolves a `--model` pattern, restricted to `provider` when `--provider` was given. A
/// provider's key only breaks ties between providers, so a model one provider lists resolves
/// without one (`--api-key` on first use).
pub fn resolve_model(
    registry: &ModelRegistry,
    pattern: &str,
    provider: Option<&str>,
) -> Result<ResolvedModel, ResolveError> {
    let all: Vec<&Model> = registry.all().iter().collect();
    let constraint = match provider {
        Some(name) => {
            // A provider pi renamed is also found by its former name (`azure-openai-responses`).
            let known =
                |name: &str| all.iter().find(|m| m.provider.eq_ignore_ascii_case(name)).map(|m| m.provider.as_str());
            let Some(p) = known(name).or_else(|| known(crate::auth::current_provider_name(name))) else {
                return Err(ResolveError::UnknownProvider { provider: name.to_owned() });
            };
            Some(p)
        }
        None => None,
    };
    let pattern = crate::auth::RENAMED_PROVIDERS
        .iter()
        .find_map(|(old, new)| {
            let rest = pattern.get(old.len()..)?.strip_prefix('/')?;
            pattern[..old.len()].eq_ignore_ascii_case(old).then(|| format!("{new}/{rest}"))
        })
        .unwrap_or_else(|| pattern.to_owned());
    let usable = |provider: &str| registry.has_key(provider);
    let request = Request { suffix: Suffix::Strict, fuzzy: true };
    let (outcome, target) = resolve_reference(&pattern, constraint, request, &all, &usable);
    match outcome {
        Outcome::Resolved { model, thinking, warning } => Ok(ResolvedModel { model: model.clone(), thinking, warning }),
        Outcome::Ambiguous { candidates, usable_count, .. } => Err(ResolveError::Ambiguous {
            pattern: pattern.clone(),
            matches: sorted_selectors(&candidates),
            authenticated: usable_count > 0,
        }),
        Outcome::NotFound => {
            let Some(target) = target else {
                let pool: Vec<&Model> = match constraint {
                    Some(p) => all.iter().copied().filter(|m| m.provider == p).collect(),
                    None => all.clone(),
                };
                let display = match constraint {
                    Some(p) => format!("{p}/{pattern}"),
                    None => pattern.clone(),
                };
                let suggestions = suggestions(&pool, split_thinking(&pattern).0);
                return Err(ResolveError::NotFound { pattern: display, suggestions });
            };
            // The provider's default model (else the model the provider was found by) under the
            // id asked for.
            let base = registry
                .provider_default(target.provider)
                .filter(|m| m.provider == target.provider)
                .unwrap_or(target.anchor);
            let mut model = base.clone();
            model.id = target.model_id.to_owned();
            model.name = target.model_id.to_owned();
            if target.thinking.is_some_and(|t| t != ThinkingLevel::Off) {
                model.reasoning = true;
            }
            let warning = format!(
                "Model \"{}\" not found for provider \"{}\". Using custom model id.",
                target.model_id, target.provider
            );
            Ok(ResolvedModel { model, thinking: target.thinking, warning: Some(warning) })
        }
    }
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
    // Every available model is usable, so a key cannot choose between providers of one id: all
    // of them are added, with a warning.
    let usable = |_: &str| true;
    for pattern in patterns.iter().map(|p| p.as_ref().trim()) {
        if pattern.is_empty() {
            continue;
        }
        if pattern.contains(['*', '?', '[']) {
            let (glob, thinking) = split_thinking(pattern);
            // Ids such as `model[1m]` are not globs.
            let request = Request { suffix: Suffix::None, fuzzy: false };
            let matched: Vec<&Model> = match resolve_reference(glob, None, request, &available, &usable).0 {
                Outcome::Resolved { model, .. } => vec![model],
                Outcome::Ambiguous { candidates, .. } => {
                    scope.warnings.push(ambiguous(pattern, &candidates));
                    candidates
                }
                Outcome::NotFound => {
                    let matcher =
                        match globset::GlobBuilder::new(glob).case_insensitive(true).literal_separator(false).build() {
                            Ok(glob) => glob.compile_matcher(),
                            Err(e) => {
                                scope.warnings.push(format!("Invalid model pattern \"{pattern}\": {}", e.kind()));
                                continue;
                            }
                        };
                    available
                        .iter()
                        .copied()
                        .filter(|m| matcher.is_match(m.selector()) || matcher.is_match(&m.id))
                        .collect()
                }
            };
            if matched.is_empty() {
                scope.warnings.push(no_match(pattern));
            }
            for model in matched {
                add(&mut scope, model, thinking);
            }
            continue;
        }
        let request = Request { suffix: Suffix::Lenient, fuzzy: true };
        match resolve_reference(pattern, None, request, &available, &usable).0 {
            Outcome::NotFound => scope.warnings.push(no_match(pattern)),
            Outcome::Resolved { model, thinking, warning } => {
                scope.warnings.extend(warning);
                add(&mut scope, model, thinking);
            }
            Outcome::Ambiguous { candidates, thinking, warning, .. } => {
                scope.warnings.extend(warning);
                scope.warnings.push(ambiguous(pattern, &candidates));
                for model in candidates {
                    add(&mut scope, model, thinking);
                }
            }
        }
    }
    scope
}

fn ambiguous(pattern: &str, candidates: &[&Model]) -> String {
    let mut providers: Vec<&str> = candidates.iter().map(|m| m.provider.as_str()).collect();
    providers.sort_by(|a, b| crate::catalog::locale_compare(a, b));
    providers.dedup();
    format!("Pattern \"{pattern}\" matches several providers: {}. Use provider/id to choose one.", providers.join(", "))
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

/// What a `:suffix` that is no thinking level means.
#[derive(Clone, Copy, PartialEq)]
enum Suffix {
    /// Glob scopes: no suffix is split off.
    None,
    /// `--model`: an invalid suffix is part of the id, so nothing matches.
    Strict,
    /// Scopes: an invalid suffix is dropped with a warning.
    Lenient,
}

#[derive(Clone, Copy)]
struct Request {
    suffix: Suffix,
    /// Whether substrings of ids and names match.
    fuzzy: bool,
}

enum Outcome<'a> {
    Resolved {
        model: &'a Model,
        thinking: Option<ThinkingLevel>,
        warning: Option<String>,
    },
    /// Several providers list the match; `usable_count` of them have a key.
    Ambiguous {
        candidates: Vec<&'a Model>,
        usable_count: usize,
        thinking: Option<ThinkingLevel>,
        warning: Option<String>,
    },
    NotFound,
}

impl Outcome<'_> {
    /// This outcome under the thinking level and warning a stripped suffix gave.
    fn with_suffix(self, level: Option<ThinkingLevel>, note: Option<String>) -> Self {
        match self {
            Outcome::Resolved { model, .. } => Outcome::Resolved { model, thinking: level, warning: note },
            Outcome::Ambiguous { candidates, usable_count, .. } => {
                Outcome::Ambiguous { candidates, usable_count, thinking: level, warning: note }
            }
            Outcome::NotFound => Outcome::NotFound,
        }
    }

    fn warning(&self) -> Option<&str> {
        match self {
            Outcome::Resolved { warning, .. } | Outcome::Ambiguous { warning, .. } => warning.as_deref(),
            Outcome::NotFound => None,
        }
    }
}

/// The provider a pattern that matched nothing names, for a made-up model of that provider.
struct Target<'a> {
    provider: &'a str,
    /// The model the provider was found by.
    anchor: &'a Model,
    model_id: &'a str,
    thinking: Option<ThinkingLevel>,
}

/// `text` among `models` (only `constraint`'s when given), and when nothing matches, the provider
/// it names.
fn resolve_reference<'a, 't>(
    text: &'t str,
    constraint: Option<&str>,
    request: Request,
    models: &[&'a Model],
    usable: &dyn Fn(&str) -> bool,
) -> (Outcome<'a>, Option<Target<'a>>)
where
    't: 'a,
{
    let text = text.trim();
    if text.is_empty() {
        return (Outcome::NotFound, None);
    }
    let pool: Vec<&'a Model> = match constraint {
        Some(p) => models.iter().copied().filter(|m| m.provider.eq_ignore_ascii_case(p)).collect(),
        None => models.to_vec(),
    };
    let outcome = resolve_text(text, request, &pool, usable);
    if !matches!(outcome, Outcome::NotFound) {
        return (outcome, None);
    }
    let split = split_provider_prefix(text, &pool);
    let anchor = match constraint {
        Some(_) => pool.first().copied(),
        None => split.and_then(|(provider, _)| pool.iter().copied().find(|m| m.provider == provider)),
    };
    let Some(anchor) = anchor else {
        return (Outcome::NotFound, None);
    };
    let model_text = split.map_or(text, |(_, rest)| rest);
    let (model_id, thinking) =
        if request.suffix == Suffix::None { (model_text, None) } else { split_thinking(model_text) };
    (Outcome::NotFound, Some(Target { provider: anchor.provider.as_str(), anchor, model_id, thinking }))
}

fn resolve_text<'a>(text: &str, request: Request, pool: &[&'a Model], usable: &dyn Fn(&str) -> bool) -> Outcome<'a> {
    if let Some(outcome) = select_reference(text, pool, request.fuzzy, usable) {
        return outcome;
    }
    if request.fuzzy
        && let Some(outcome) = select_fuzzy(fuzzy_matches(text, pool), usable)
    {
        return outcome;
    }
    if request.suffix == Suffix::None {
        return Outcome::NotFound;
    }
    if let (base, Some(level)) = split_thinking(text) {
        let inner = resolve_text(base, request, pool, usable);
        // A level under a warning from further in is not taken.
        let level = if inner.warning().is_some() { None } else { Some(level) };
        let warning = inner.warning().map(str::to_owned);
        return inner.with_suffix(level, warning);
    }
    if request.suffix == Suffix::Strict {
        return Outcome::NotFound;
    }
    let Some((base, suffix)) = text.rsplit_once(':') else {
        return Outcome::NotFound;
    };
    let note = format!("Invalid thinking level \"{suffix}\" in pattern \"{text}\". Using default instead.");
    resolve_text(base, request, pool, usable).with_suffix(None, Some(note))
}

/// `provider/rest` names a provider, but the whole text may also be an id elsewhere (a gateway's
/// `zai/glm-5`). The named provider wins when it has a key; else the one other provider with a
/// key; else the named provider, so `--api-key` can set it up; else it is ambiguous.
fn select_reference<'a>(
    text: &str,
    pool: &[&'a Model],
    fuzzy: bool,
    usable: &dyn Fn(&str) -> bool,
) -> Option<Outcome<'a>> {
    let lower = text.to_lowercase();
    let raw: Vec<&'a Model> = pool.iter().copied().filter(|m| m.id.to_lowercase() == lower).collect();
    let named = split_provider_prefix(text, pool).and_then(|(provider, rest)| {
        let own: Vec<&'a Model> = pool.iter().copied().filter(|m| m.provider == provider).collect();
        let rest_lower = rest.to_lowercase();
        // The provider's own literal id (OpenRouter's `openrouter/free`) beats its substrings.
        own.iter()
            .copied()
            .find(|m| m.id.to_lowercase() == rest_lower)
            .or_else(|| raw.iter().copied().find(|m| m.provider == provider))
            .or_else(|| fuzzy.then(|| best_fuzzy(fuzzy_matches(rest, &own))).flatten())
    });
    let others: Vec<&'a Model> = raw.iter().copied().filter(|m| !named.is_some_and(|n| std::ptr::eq(*m, n))).collect();
    let candidates: Vec<&'a Model> = named.into_iter().chain(others.iter().copied()).collect();
    let first = *candidates.first()?;
    let resolved = |model| Some(Outcome::Resolved { model, thinking: None, warning: None });
    if candidates.iter().all(|m| m.provider == first.provider) {
        return resolved(first);
    }
    if let Some(named) = named.filter(|n| usable(&n.provider)) {
        return resolved(named);
    }
    let usable_others: Vec<&'a Model> = others.iter().copied().filter(|m| usable(&m.provider)).collect();
    match (usable_others.as_slice(), named) {
        ([one], _) => resolved(one),
        ([], Some(named)) => resolved(named),
        (several, _) => {
            Some(Outcome::Ambiguous { candidates, usable_count: several.len(), thinking: None, warning: None })
        }
    }
}

/// The models whose id or name contains `text` (case-insensitive).
fn fuzzy_matches<'a>(text: &str, models: &[&'a Model]) -> Vec<&'a Model> {
    let needle = text.to_lowercase();
    models
        .iter()
        .copied()
        .filter(|m| m.id.to_lowercase().contains(&needle) || m.name.to_lowercase().contains(&needle))
        .collect()
}

/// The best of `matches`, preferring those of providers with a key when several providers
/// match; the same id at several providers is ambiguous rather than decided by catalogue order.
fn select_fuzzy<'a>(matches: Vec<&'a Model>, usable: &dyn Fn(&str) -> bool) -> Option<Outcome<'a>> {
    let first = *matches.first()?;
    let several = matches.iter().any(|m| m.provider != first.provider);
    let usable_matches: Vec<&'a Model> =
        if several { matches.iter().copied().filter(|m| usable(&m.provider)).collect() } else { Vec::new() };
    let pool = if usable_matches.is_empty() { matches } else { usable_matches.clone() };
    let best = best_fuzzy(pool.clone())?;
    let tied: Vec<&'a Model> = pool.into_iter().filter(|m| m.id == best.id).collect();
    if tied.iter().all(|m| m.provider == best.provider) {
        return Some(Outcome::Resolved { model: best, thinking: None, warning: None });
    }
    let usable_count = if usable_matches.is_empty() { 0 } else { tied.len() };
    Some(Outcome::Ambiguous { candidates: tied, usable_count, thinking: None, warning: None })
}

/// Aliases before dated snapshots, then the highest id in pi's order (`localeCompare`:
/// `~anthropic/…` is below `claude-…`); on a tie, the first in registry order.
fn best_fuzzy(matches: Vec<&Model>) -> Option<&Model> {
    let aliases: Vec<&Model> = matches.iter().copied().filter(|m| is_alias(&m.id)).collect();
    let pool = if aliases.is_empty() { matches } else { aliases };
    pool.into_iter().rev().max_by(|a, b| crate::catalog::locale_compare(&a.id, &b.id))
}

/// The known provider `text` starts with (`provider/…`, case-insensitive; the longest when
/// provider names nest) and the text after its slash.
fn split_provider_prefix<'a, 't>(text: &'t str, models: &[&'a Model]) -> Option<(&'a str, &'t str)> {
    let lower = text.to_ascii_lowercase();
    let mut best: Option<(&'a str, &'t str)> = None;
    for model in models {
        let provider = model.provider.as_str();
        let prefix = provider.trim().to_ascii_lowercase();
        if prefix.is_empty() || best.is_some_and(|(b, _)| b.len() >= provider.len()) {
            continue;
        }
        let Some(slash) = lower.get(prefix.len()..).and_then(|after| after.find('/')).map(|i| i + prefix.len()) else {
            continue;
        };
        if lower[..slash].trim() != prefix {
            continue;
        }
        let rest = text[slash + 1..].trim();
        if !rest.is_empty() {
            best = Some((provider, rest));
        }
    }
    best
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

fn sorted_selectors(models: &[&Model]) -> Vec<String> {
    let mut selectors: Vec<String> = models.iter().map(|m| m.selector()).collect();
    selectors.sort_by(|a, b| crate::catalog::locale_compare(a, b));
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
