//! From what a settings file or `--setting` says to one flat map of dotted keys.
//!
//! pi writes nested objects (`{"compaction":{"enabled":false}}`), omp and xcsh write flat dotted
//! keys (`{"compaction.enabled": false}`); both, and any mix of them, mean the same key here.
//! Objects are descended until a key whose value is a map kept whole (see the schema); arrays
//! and scalars are leaves. A key can be both a leaf and a prefix (`todo.reminders` and
//! `todo.reminders.max`), which a flat map holds without conflict. Within one source a later
//! spelling of the same key wins. Legacy keys are migrated per source, as pi does.

use std::collections::BTreeMap;
use std::str::FromStr;

use serde_json::Value;

use super::SettingsError;
use super::schema;

/// One source's settings, by dotted key.
pub(crate) type Layer = BTreeMap<String, Value>;

/// Adds `value` under `prefix` to `out`, descending into objects.
pub(crate) fn flatten_into(prefix: &str, value: Value, out: &mut Layer) {
    match value {
        Value::Object(map) if prefix.is_empty() || !schema::is_map_valued(prefix) => {
            for (key, child) in map {
                let path = if prefix.is_empty() { key } else { format!("{prefix}.{key}") };
                flatten_into(&path, child, out);
            }
        }
        other => {
            if !prefix.is_empty() {
                out.insert(prefix.to_owned(), other);
            }
        }
    }
}

/// The flat layer of one settings file's top-level object, with legacy keys migrated.
pub(crate) fn layer_from_object(object: serde_json::Map<String, Value>) -> Layer {
    let mut layer = Layer::new();
    flatten_into("", Value::Object(object), &mut layer);
    migrate_legacy(&mut layer);
    layer
}

/// pi's migrations: `queueMode` → `steeringMode`; `websockets: bool` → `transport`; the old
/// `skills` object (`{enableSkillCommands, customDirectories}`) → `enableSkillCommands` and the
/// `skills` array. The new key wins when both are present.
pub(crate) fn migrate_legacy(layer: &mut Layer) {
    if let Some(mode) = layer.remove("queueMode") {
        layer.entry("steeringMode".into()).or_insert(mode);
    }
    if let Some(ws) = layer.remove("websockets") {
        match ws {
            Value::Bool(b) => {
                let transport = if b { "websocket" } else { "sse" };
                layer.entry("transport".into()).or_insert_with(|| Value::String(transport.into()));
            }
            other => {
                layer.insert("websockets".into(), other);
            }
        }
    }
    if let Some(enable) = layer.remove("skills.enableSkillCommands") {
        layer.entry("enableSkillCommands".into()).or_insert(enable);
    }
    if let Some(dirs) = layer.remove("skills.customDirectories") {
        let non_empty = dirs.as_array().is_some_and(|a| !a.is_empty());
        if non_empty {
            layer.entry("skills".into()).or_insert(dirs);
        }
    }
}

/// One `--setting key=value` from the command line. The value is JSON when it parses as JSON
/// (`true`, `3`, `{"a":1}`, `"quoted"`), otherwise the text itself as a string.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingOverride {
    pub key: String,
    pub value: Value,
}

impl SettingOverride {
    pub fn new(key: impl Into<String>, value: Value) -> Self {
        Self { key: key.into(), value }
    }
}

impl FromStr for SettingOverride {
    type Err = SettingsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let Some((key, raw)) = s.split_once('=') else {
            return Err(SettingsError::BadOverride(s.to_owned()));
        };
        let key = key.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(SettingsError::BadOverride(s.to_owned()));
        }
        let value = serde_json::from_str::<Value>(raw).unwrap_or_else(|_| Value::String(raw.into()));
        Ok(Self::new(key, value))
    }
}

/// The flat layer of the command-line overrides, in order (a later one wins). An object
/// value merges into the keys under its prefix, like a nested object in a file.
pub(crate) fn layer_from_overrides(overrides: &[SettingOverride]) -> Layer {
    let mut layer = Layer::new();
    for o in overrides {
        flatten_into(&o.key, o.value.clone(), &mut layer);
    }
    layer
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layer(v: Value) -> Layer {
        match v {
            Value::Object(m) => layer_from_object(m),
            _ => unreachable!(),
        }
    }

    #[test]
    fn nested_and_dotted_spell_the_same_key() {
        let a = layer(json!({"compaction": {"enabled": false, "reserveTokens": 5}}));
        let b = layer(json!({"compaction.enabled": false, "compaction.reserveTokens": 5}));
        let c = layer(json!({"compaction": {"enabled": false}, "compaction.reserveTokens": 5}));
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a.get("compaction.enabled"), Some(&json!(false)));
    }

    #[test]
    fn deep_keys_flatten_and_maps_stay_whole() {
        let l = layer(json!({
            "task": {
                "isolation": {"mode": "worktree"},
                "verification": {"profiles": {"ci.x": {"commands": []}}},
                "agentModelOverrides": {"explore": "openai/gpt-5.2"}
            },
            "todo": {"reminders": {"max": 5}},
            "todo.reminders": false
        }));
        assert_eq!(l.get("task.isolation.mode"), Some(&json!("worktree")));
        assert_eq!(l.get("task.verification.profiles"), Some(&json!({"ci.x": {"commands": []}})));
        assert_eq!(l.get("task.agentModelOverrides"), Some(&json!({"explore": "openai/gpt-5.2"})));
        assert_eq!(l.get("todo.reminders.max"), Some(&json!(5)));
        assert_eq!(l.get("todo.reminders"), Some(&json!(false)));
    }

    #[test]
    fn arrays_are_leaves() {
        let l = layer(json!({"skills": ["a", "b"], "enabledModels": []}));
        assert_eq!(l.get("skills"), Some(&json!(["a", "b"])));
        assert_eq!(l.get("enabledModels"), Some(&json!([])));
    }

    #[test]
    fn legacy_migrations() {
        let l = layer(json!({"queueMode": "all", "websockets": true}));
        assert_eq!(l.get("steeringMode"), Some(&json!("all")));
        assert_eq!(l.get("transport"), Some(&json!("websocket")));
        assert!(!l.contains_key("queueMode"));

        let l = layer(json!({"queueMode": "all", "steeringMode": "one-at-a-time"}));
        assert_eq!(l.get("steeringMode"), Some(&json!("one-at-a-time")));

        let l = layer(json!({"skills": {"enableSkillCommands": false, "customDirectories": ["~/s"]}}));
        assert_eq!(l.get("enableSkillCommands"), Some(&json!(false)));
        assert_eq!(l.get("skills"), Some(&json!(["~/s"])));

        let l = layer(json!({"skills": {"customDirectories": []}}));
        assert!(!l.contains_key("skills"));
    }

    #[test]
    fn override_values_parse_as_json_or_string() {
        let o: SettingOverride = "compaction.enabled=false".parse().unwrap();
        assert_eq!(o, SettingOverride::new("compaction.enabled", json!(false)));
        let o: SettingOverride = "task.maxConcurrency=3".parse().unwrap();
        assert_eq!(o.value, json!(3));
        let o: SettingOverride = "x={\"a\":1}".parse().unwrap();
        assert_eq!(o.value, json!({"a": 1}));
        let o: SettingOverride = "defaultModel=claude-sonnet-4-5".parse().unwrap();
        assert_eq!(o.value, json!("claude-sonnet-4-5"));
        let o: SettingOverride = "shellCommandPrefix=a=b".parse().unwrap();
        assert_eq!(o.value, json!("a=b"));
        let o: SettingOverride = "defaultModel=".parse().unwrap();
        assert_eq!(o.value, json!(""));
        assert!("novalue".parse::<SettingOverride>().is_err());
        assert!("=3".parse::<SettingOverride>().is_err());
        assert!("a..b=3".parse::<SettingOverride>().is_err());
    }

    #[test]
    fn override_objects_flatten_under_their_key() {
        let l = layer_from_overrides(&[
            "compaction.reserveTokens=1".parse().unwrap(),
            "compaction={\"enabled\":false}".parse().unwrap(),
        ]);
        assert_eq!(l.get("compaction.enabled"), Some(&json!(false)));
        assert_eq!(l.get("compaction.reserveTokens"), Some(&json!(1)));
    }
}
