//! Chat-template values a model's `compat` configures (pi 1.6's `chatTemplateArgs`, sent as
//! Baseten's `chat_template_args`, and `chatTemplateKwargs`, sent as `chat_template_kwargs` in
//! the `chat-template` format), with the values rho controls filled in.
//!
//! A plain value (string, number, boolean, `null`) goes out as it is. An object names a value
//! by `$var`: `thinking.enabled` is whether thinking is on, `thinking.budget` the level's token
//! budget (left out when thinking is off), `thinking.effort` the level as the model's
//! `thinkingLevelMap` names it (its `off` entry when thinking is off; left out where the map says
//! `null`). `omitWhenOff: true` leaves the entry out while thinking is off. Nothing is sent when
//! every entry is left out.

use serde_json::{Map, Value, json};

use crate::model::{Model, ThinkingLevel};

/// `values` with each `$var` filled in for a request at `level` (`None`: thinking off) with
/// `budget` thinking tokens; `None` when nothing is left.
pub(super) fn fill(
    model: &Model,
    level: Option<ThinkingLevel>,
    budget: Option<u64>,
    values: &Map<String, Value>,
) -> Option<Map<String, Value>> {
    let filled: Map<String, Value> = values
        .iter()
        .filter_map(|(key, value)| Some((key.clone(), fill_value(model, level, budget, value)?)))
        .collect();
    (!filled.is_empty()).then_some(filled)
}

fn fill_value(model: &Model, level: Option<ThinkingLevel>, budget: Option<u64>, value: &Value) -> Option<Value> {
    let Value::Object(spec) = value else {
        return Some(value.clone());
    };
    if level.is_none() && spec.get("omitWhenOff").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    match spec.get("$var").and_then(Value::as_str) {
        Some("thinking.enabled") => Some(json!(level.is_some())),
        Some("thinking.budget") => budget.map(|b| json!(b)),
        _ => {
            let key = level.unwrap_or(ThinkingLevel::Off);
            match model.thinking_level_map.as_ref().and_then(|map| map.get(&key)) {
                None => level.map(|l| json!(l.as_str())),
                Some(Some(named)) => Some(json!(named)),
                Some(None) => None,
            }
        }
    }
}

/// The token budget of `level` for `thinking.budget`, kept under `ceiling` (the request's output
/// cap) with 1024 tokens left for the answer; `None` when thinking is off or nothing is left.
pub(super) fn budget(level: Option<ThinkingLevel>, budgets: u64, ceiling: u64) -> Option<u64> {
    const MIN_ANSWER_TOKENS: u64 = 1024;
    level?;
    Some(budgets.min(ceiling.saturating_sub(MIN_ANSWER_TOKENS))).filter(|b| *b > 0)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::ThinkingLevel::*;

    fn values(json: Value) -> Map<String, Value> {
        json.as_object().unwrap().clone()
    }

    fn model(map: Option<BTreeMap<ThinkingLevel, Option<String>>>) -> Model {
        let mut model = crate::providers::test_fixtures::model(
            "openai-completions",
            "baseten",
            "m",
            "https://inference.baseten.co/v1",
        );
        model.thinking_level_map = map;
        model
    }

    #[test]
    fn variables_are_filled_in_for_the_level() {
        let spec = values(json!({
            "enable_thinking": {"$var": "thinking.enabled"},
            "reasoning_effort": {"$var": "thinking.effort"},
            "thinking_budget": {"$var": "thinking.budget"},
            "template": "glm",
            "n": 2,
            "flag": null,
        }));
        let m = model(None);
        assert_eq!(
            Value::Object(fill(&m, Some(High), Some(8000), &spec).unwrap()),
            json!({"enable_thinking": true, "reasoning_effort": "high", "thinking_budget": 8000, "template": "glm", "n": 2, "flag": null})
        );
        assert_eq!(
            Value::Object(fill(&m, None, None, &spec).unwrap()),
            json!({"enable_thinking": false, "template": "glm", "n": 2, "flag": null})
        );
    }

    #[test]
    fn the_effort_follows_the_thinking_level_map() {
        let spec = values(json!({"effort": {"$var": "thinking.effort"}}));
        let map = BTreeMap::from([(Off, Some("none".to_owned())), (Low, None), (High, Some("max".to_owned()))]);
        let m = model(Some(map));
        assert_eq!(fill(&m, Some(High), None, &spec), Some(values(json!({"effort": "max"}))));
        assert_eq!(fill(&m, None, None, &spec), Some(values(json!({"effort": "none"}))));
        // A level the map sets to null sends nothing; one it does not name goes by its name.
        assert_eq!(fill(&m, Some(Low), None, &spec), None);
        assert_eq!(fill(&m, Some(Medium), None, &spec), Some(values(json!({"effort": "medium"}))));
    }

    #[test]
    fn omit_when_off_leaves_an_entry_out_while_thinking_is_off() {
        let spec = values(json!({"enable_thinking": {"$var": "thinking.enabled", "omitWhenOff": true}}));
        let m = model(None);
        assert_eq!(fill(&m, None, None, &spec), None);
        assert_eq!(fill(&m, Some(Low), None, &spec), Some(values(json!({"enable_thinking": true}))));
    }

    #[test]
    fn the_budget_leaves_room_for_an_answer() {
        assert_eq!(budget(Some(High), 16384, 32000), Some(16384));
        assert_eq!(budget(Some(High), 16384, 4096), Some(3072));
        assert_eq!(budget(Some(High), 16384, 1000), None);
        assert_eq!(budget(None, 16384, 32000), None);
    }
}
