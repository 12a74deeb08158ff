//! Settings rho reads and validates but does not act on: pi's and omp's keys for features rho
//! does not have. A value that would turn one of them on gets a warning at start-up, so no
//! setting is silently ignored; their defaults (which change nothing) pass quietly.

use serde_json::Value;

use super::Settings;

/// A key, whether its value asks for something, and what rho does instead.
struct WithoutEffect {
    key: &'static str,
    asks: fn(&Value) -> bool,
    instead: &'static str,
}

fn any(_: &Value) -> bool {
    true
}

fn is_true(v: &Value) -> bool {
    v.as_bool() == Some(true)
}

fn non_empty(v: &Value) -> bool {
    !matches!(v, Value::Null) && v.as_object().is_none_or(|o| !o.is_empty())
}

const KEYS: &[WithoutEffect] = &[
    WithoutEffect { key: "modelRoles", asks: non_empty, instead: "rho has no model roles" },
    WithoutEffect {
        key: "compaction.modelOverrides",
        asks: non_empty,
        instead: "compaction summarizes with the session's current model",
    },
    WithoutEffect {
        key: "retry.fallbackChains",
        asks: non_empty,
        instead: "retries use the same model; when they run out the error is reported",
    },
    WithoutEffect {
        key: "bash.autoBackground.enabled",
        asks: is_true,
        instead: "bash commands run in the foreground until they end or time out",
    },
    WithoutEffect {
        key: "task.isolation.commits",
        asks: |v| v.as_str() == Some("ai"),
        instead: "an isolated task's changes are committed with a generic message",
    },
    WithoutEffect { key: "async.enabled", asks: is_true, instead: "rho runs no background jobs" },
    WithoutEffect {
        key: "thinkingBudgets.xhigh",
        asks: any,
        instead: "xhigh thinking uses the high budget on models that take a token budget",
    },
    WithoutEffect { key: "locale", asks: any, instead: "rho's texts are in English" },
];

impl Settings {
    /// One warning per setting that asks for something rho does not do.
    pub fn without_effect(&self) -> Vec<String> {
        KEYS.iter()
            .filter(|k| self.get(k.key).is_some_and(|v| (k.asks)(v)))
            .map(|k| format!("setting `{}` has no effect in rho: {}", k.key, k.instead))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_values_that_ask_for_something_are_reported() {
        let (quiet, _) =
            Settings::from_json(json!({"transport": "websocket", "async": {"enabled": false}, "modelRoles": {}}));
        assert!(quiet.without_effect().is_empty(), "{:?}", quiet.without_effect());
        let (loud, _) = Settings::from_json(json!({
            "retry": {"fallbackChains": {"default": ["a/b"]}},
            "bash": {"autoBackground": {"enabled": true}},
            "locale": "ja"
        }));
        assert_eq!(
            loud.without_effect(),
            [
                "setting `retry.fallbackChains` has no effect in rho: retries use the same model; when they run out the error is reported",
                "setting `bash.autoBackground.enabled` has no effect in rho: bash commands run in the foreground until they end or time out",
                "setting `locale` has no effect in rho: rho's texts are in English",
            ]
        );
    }
}
