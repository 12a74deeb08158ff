//! `thinkingConfig` as pi 1.6 sets it. Gemini 3 Pro and Flash, Gemini 4 on, the `-latest` Flash
//! aliases and Gemma 4 take a `thinkingLevel`; the rest a `thinkingBudget`. The requested level
//! is first clamped to the ones the model has (its `thinkingLevelMap`), then mapped through that
//! map to one of Google's four levels.
//!
//! Thinking `off` on a reasoning model is said on the request, since Gemini models think by
//! default: `thinkingBudget: 0` where the model can turn thinking off, else its lowest level
//! (Gemini 3 Pro cannot), without `includeThoughts`, so no thought comes back. Gemini 2.5 Pro
//! cannot turn it off either and Google rejects a budget of 0: it gets its lowest budget, 128.

use serde_json::{Value, json};

use crate::model::{Model, ThinkingLevel};
use crate::providers::requested_thinking;
use crate::stream::{StreamOptions, ThinkingBudgets};

/// The `thinkingConfig` of a request to `model`; `None` for a model that does not reason.
pub(crate) fn config(model: &Model, options: &StreamOptions) -> Option<Value> {
    if !model.reasoning {
        return None;
    }
    let id = model.id.to_ascii_lowercase();
    let level = match requested_thinking(model, options).map(|level| model.clamp_thinking(level)) {
        None | Some(ThinkingLevel::Off) => return Some(disabled(model, &id)),
        Some(level) => level,
    };
    let google = google_level(model, level);
    if uses_thinking_level(&id) {
        return Some(json!({"includeThoughts": true, "thinkingLevel": google.to_ascii_uppercase()}));
    }
    let level = ThinkingLevel::parse(google).unwrap_or(level);
    let table = |minimal, high| ThinkingBudgets { minimal, low: 2048, medium: 8192, high };
    let budget = if options.thinking_budgets != ThinkingBudgets::default() {
        options.thinking_budgets.for_level(level) as i64
    } else if id.contains("2.5-pro") {
        table(128, 32_768).for_level(level) as i64
    } else if id.contains("2.5-flash-lite") {
        table(512, 24_576).for_level(level) as i64
    } else if id.contains("2.5-flash") {
        table(128, 24_576).for_level(level) as i64
    } else {
        -1
    };
    Some(json!({"includeThoughts": true, "thinkingBudget": budget}))
}

/// Thinking turned off, or as far down as the model goes.
fn disabled(model: &Model, id: &str) -> Value {
    if !uses_thinking_level(id) {
        let budget = if id.contains("2.5-pro") { 128 } else { 0 };
        return json!({"thinkingBudget": budget});
    }
    match model.clamp_thinking(ThinkingLevel::Off) {
        ThinkingLevel::Off => json!({"thinkingBudget": 0}),
        lowest => json!({"thinkingLevel": google_level(model, lowest).to_ascii_uppercase()}),
    }
}

/// `level` as one of Google's levels (`minimal`, `low`, `medium`, `high`): the model's map value
/// when it names one, else the level itself; anything above `high` is `high`.
fn google_level(model: &Model, level: ThinkingLevel) -> &'static str {
    let named = model.provider_level(level).map(str::to_ascii_lowercase);
    match named.as_deref().unwrap_or(level.as_str()) {
        "minimal" | "off" => "minimal",
        "low" => "low",
        "medium" => "medium",
        _ => "high",
    }
}

/// Whether `id` (lowercase) sets thinking by level: `gemini-3-pro…`, `gemini-3.1-flash…`,
/// `gemini-4…` and later, `gemini-flash-latest`, `gemini-flash-lite-latest`, `gemma-4…`/`gemma4…`.
fn uses_thinking_level(id: &str) -> bool {
    fn after<'a>(id: &'a str, prefix: &'a str) -> impl Iterator<Item = &'a str> {
        id.match_indices(prefix).map(move |(at, m)| &id[at + m.len()..])
    }
    let gemini3 = after(id, "gemini-3").any(|rest| {
        let rest = match rest.strip_prefix('.') {
            Some(minor) if minor.starts_with(|c: char| c.is_ascii_digit()) => {
                minor.trim_start_matches(|c: char| c.is_ascii_digit())
            }
            Some(_) => return false,
            None => rest,
        };
        rest.starts_with("-pro") || rest.starts_with("-flash")
    });
    // `gemini-4` to `gemini-9`, or two digits and more (`gemini-10`), not `gemini-1.5`/`gemini-2`.
    let later = after(id, "gemini-").any(|rest| {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        match digits {
            0 => false,
            1 => rest.as_bytes()[0] >= b'4',
            _ => !rest.starts_with('0'),
        }
    });
    gemini3
        || later
        || id == "gemini-flash-latest"
        || id == "gemini-flash-lite-latest"
        || id.contains("gemma-4")
        || id.contains("gemma4")
}

#[cfg(test)]
mod tests {
    use super::uses_thinking_level;

    #[test]
    fn the_lines_that_think_by_level() {
        for id in [
            "gemini-3-pro-preview",
            "gemini-3.1-pro-preview",
            "gemini-3-flash-preview",
            "gemini-3.8-flash",
            "gemini-4-argon",
            "gemini-12-x",
            "gemini-flash-latest",
            "gemma-4-27b-it",
            "gemma4",
        ] {
            assert!(uses_thinking_level(id), "{id}");
        }
        for id in
            ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-image", "gemini-1.5-pro", "gemini-3.x-pro", "gemma-3"]
        {
            assert!(!uses_thinking_level(id), "{id}");
        }
    }
}
