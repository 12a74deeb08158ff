//! The settings rho knows: each key's type and built-in default, in one table.
//!
//! The table is the single source of truth for defaults (the typed accessors read it) and for
//! validation (a value of the wrong type is reported and dropped when a file is loaded, so the
//! accessors never see one). Keys whose value is itself a map (`task.verification.profiles`,
//! `modelRoles`, …) are marked as such, which is also what stops the nested-to-dotted
//! flattening there. Keys not in the table are kept as they are, unvalidated.

use serde_json::Value;

use super::typed::TaskVerifyConfig;

/// The shape a key's value must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Bool,
    /// A non-negative integer (a whole float such as `16384.0` is accepted).
    UInt,
    Number,
    Str,
    Enum(&'static [&'static str]),
    StrList,
    /// An array of anything (package sources may be strings or objects).
    List,
    /// A JSON object kept whole.
    Record,
    /// A JSON object whose values are all strings.
    StrRecord,
    /// `task.verification.profiles`: named `TaskVerifyConfig`s.
    VerifyProfiles,
}

/// A key's built-in default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum DefaultValue {
    /// Unset: the accessor returns `None`.
    None,
    Bool(bool),
    UInt(u64),
    Number(f64),
    Str(&'static str),
    EmptyList,
    EmptyRecord,
}

impl DefaultValue {
    pub(crate) fn to_value(self) -> Option<Value> {
        match self {
            Self::None => None,
            Self::Bool(b) => Some(Value::Bool(b)),
            Self::UInt(n) => Some(Value::from(n)),
            Self::Number(n) => Some(Value::from(n)),
            Self::Str(s) => Some(Value::String(s.to_owned())),
            Self::EmptyList => Some(Value::Array(Vec::new())),
            Self::EmptyRecord => Some(Value::Object(serde_json::Map::new())),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyDef {
    pub key: &'static str,
    pub kind: Kind,
    pub default: DefaultValue,
}

const fn k(key: &'static str, kind: Kind, default: DefaultValue) -> KeyDef {
    KeyDef { key, kind, default }
}

use DefaultValue as D;
use Kind::*;

const QUEUE_MODES: &[&str] = &["all", "one-at-a-time"];
const THINKING_LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// Every known key, with its type and default.
pub(crate) const KEYS: &[KeyDef] = &[
    // Model and thinking.
    k("defaultProvider", Str, D::None),
    k("defaultModel", Str, D::None),
    k("defaultThinkingLevel", Enum(THINKING_LEVELS), D::None),
    k("modelThinkingLevels", StrRecord, D::EmptyRecord),
    k("modelRoles", StrRecord, D::EmptyRecord),
    k("enabledModels", StrList, D::None),
    // pi 1.6: trust for a project with no saved decision (read from the agent directory's file).
    k("defaultProjectTrust", Enum(&["ask", "always", "never"]), D::Str("ask")),
    // pi 1.6: the tools a session starts with (`+name` / `-name` change pi's four).
    k("defaultTools", StrList, D::None),
    k("transport", Enum(&["sse", "websocket", "websocket-cached", "auto"]), D::Str("auto")),
    k("thinkingBudgets.minimal", UInt, D::None),
    k("thinkingBudgets.low", UInt, D::None),
    k("thinkingBudgets.medium", UInt, D::None),
    k("thinkingBudgets.high", UInt, D::None),
    k("thinkingBudgets.xhigh", UInt, D::None),
    // Queues.
    k("steeringMode", Enum(QUEUE_MODES), D::Str("one-at-a-time")),
    k("followUpMode", Enum(QUEUE_MODES), D::Str("one-at-a-time")),
    k("interruptMode", Enum(&["immediate", "wait"]), D::Str("wait")),
    // Compaction and branch summaries.
    k("compaction.enabled", Bool, D::Bool(true)),
    k("compaction.reserveTokens", UInt, D::UInt(16384)),
    k("compaction.keepRecentTokens", UInt, D::UInt(20000)),
    k("compaction.thresholdTokens", Number, D::None),
    k("compaction.thresholdPercent", Number, D::None),
    k("compaction.modelOverrides", Record, D::EmptyRecord),
    k("branchSummary.reserveTokens", UInt, D::UInt(16384)),
    k("branchSummary.skipPrompt", Bool, D::Bool(false)),
    // Retry.
    k("retry.enabled", Bool, D::Bool(true)),
    k("retry.maxRetries", UInt, D::UInt(3)),
    k("retry.baseDelayMs", UInt, D::UInt(2000)),
    k("retry.maxDelayMs", UInt, D::UInt(60000)),
    k("retry.fallbackChains", Record, D::EmptyRecord),
    // Shell.
    k("shellPath", Str, D::None),
    k("shellCommandPrefix", Str, D::None),
    k("bash.environment", StrRecord, D::EmptyRecord),
    // rho: commands run for the model see the provider key variables rho reads.
    k("bash.inheritProviderKeys", Bool, D::Bool(false)),
    k("bash.autoBackground.enabled", Bool, D::Bool(false)),
    k("bash.autoBackground.thresholdMs", UInt, D::UInt(60000)),
    // The sandbox the model's commands run in (read from the global file and the command line
    // only: a project cannot loosen its own confinement).
    k("sandbox.mode", Enum(&rho_sandbox::SandboxMode::NAMES), D::Str("danger-full-access")),
    k("sandbox.writableRoots", StrList, D::EmptyList),
    k("sandbox.network", Bool, D::Bool(false)),
    // Permission rules (Claude Code's syntax) and when calls no rule decides ask.
    k("permissions.allow", StrList, D::EmptyList),
    k("permissions.ask", StrList, D::EmptyList),
    k("permissions.deny", StrList, D::EmptyList),
    k("approval", Enum(&crate::permissions::Approval::NAMES), D::Str("auto")),
    // Hooks in Claude Code's format (claude_hooks/).
    k("hooks", Record, D::None),
    // File checkpoints for a rewind (checkpoints/).
    k("checkpoints.enabled", Bool, D::Bool(true)),
    // The web_search tool's API (its key from the environment) and another address for it.
    k("webSearch.provider", Enum(&["brave", "tavily"]), D::None),
    k("webSearch.baseUrl", Str, D::None),
    // OpenTelemetry export (telemetry.rs; the OTEL_* variables win; global only: a project does
    // not choose where its usage is sent).
    k("telemetry.enabled", Bool, D::Bool(false)),
    k("telemetry.endpoint", Str, D::None),
    k("telemetry.protocol", Enum(&["http/protobuf", "http/json"]), D::Str("http/protobuf")),
    k("telemetry.headers", StrRecord, D::EmptyRecord),
    // Images.
    k("images.autoResize", Bool, D::Bool(true)),
    k("images.blockImages", Bool, D::Bool(false)),
    // Resources.
    k("packages", List, D::EmptyList),
    k("extensions", List, D::EmptyList),
    // rho: how long a hook that can change what happens (tool_call, context, input, …) may take
    // to answer, not counting the time a dialog it opened stays open.
    k("extensionHookTimeoutMs", UInt, D::UInt(30000)),
    k("skills", StrList, D::EmptyList),
    k("prompts", StrList, D::EmptyList),
    k("themes", List, D::EmptyList),
    k("enableSkillCommands", Bool, D::Bool(true)),
    // The interactive screen.
    k("hideThinkingBlock", Bool, D::Bool(false)),
    // pi 1.6: this installation's id (a UUID), made at the first Sign in with ChatGPT.
    k("deviceId", Str, D::None),
    // pi 1.6: Mermaid blocks drawn as diagrams (rho draws them once their block has closed).
    k("markdown.mermaid", Enum(&["off", "final", "streaming"]), D::Str("streaming")),
    k("quietStartup", Bool, D::Bool(false)),
    k("doubleEscapeAction", Enum(&["tree", "fork", "none"]), D::Str("tree")),
    k("treeFilterMode", Enum(&["default", "no-tools", "user-only", "labeled-only", "all"]), D::Str("default")),
    k("theme", Str, D::None),
    // Where sessions are kept (global only: a project does not choose where transcripts go).
    k("sessionDir", Str, D::None),
    // pi 1.6: prompt-cache warming after replies (global only in pi).
    k("cacheWarming", Enum(&["off", "streaming", "idle"]), D::Str("idle")),
    // pi 1.6: where `/share` uploads (`auto`: Radius when signed in to it, else a gist).
    k("sessionShareDestination", Enum(&["auto", "gist", "radius"]), D::Str("auto")),
    // Todos.
    k("todo.enabled", Bool, D::Bool(true)),
    k("todo.reminders", Bool, D::Bool(true)),
    k("todo.reminders.max", UInt, D::UInt(3)),
    k("todo.eager", Bool, D::Bool(true)),
    k("todoCompletion.enabled", Bool, D::Bool(false)),
    k("todoCompletion.maxReminders", UInt, D::UInt(3)),
    // Seconds; 0 clears at once, a negative value never.
    k("tasks.todoClearDelay", Number, D::Number(60.0)),
    // The task tool.
    k("task.enabled", Bool, D::Bool(true)),
    k("task.isolation.mode", Enum(&["none", "worktree", "fuse-overlay", "fuse-projfs"]), D::Str("none")),
    k("task.isolation.merge", Enum(&["patch", "branch"]), D::Str("patch")),
    k("task.isolation.commits", Enum(&["generic", "ai"]), D::Str("generic")),
    k("task.eager", Bool, D::Bool(true)),
    k("task.maxConcurrency", UInt, D::UInt(32)),
    k("task.maxRecursionDepth", UInt, D::UInt(2)),
    k("task.disabledAgents", StrList, D::EmptyList),
    k("task.agentModelOverrides", StrRecord, D::EmptyRecord),
    k("task.verification.enabled", Bool, D::Bool(false)),
    k("task.verification.defaultProfile", Str, D::Str("")),
    k("task.verification.requireForIsolated", Bool, D::Bool(false)),
    k("task.verification.maxRetries", UInt, D::UInt(1)),
    k("task.verification.failureContextLineLimit", UInt, D::UInt(200)),
    k("task.verification.profiles", VerifyProfiles, D::EmptyRecord),
    k("task.budget.maxWallTimeMs", UInt, D::None),
    k("task.budget.maxInputTokens", UInt, D::None),
    k("task.budget.maxOutputTokens", UInt, D::None),
    k("task.budget.maxTotalTokens", UInt, D::None),
    k("task.budget.maxCostUsd", Number, D::None),
    k("task.budget.maxToolCalls", UInt, D::None),
    k("task.budget.maxSubagents", UInt, D::None),
    k("task.budget.warnAtRatio", Number, D::Number(0.8)),
    // Async jobs.
    k("async.enabled", Bool, D::Bool(false)),
    k("async.maxJobs", UInt, D::UInt(100)),
    // Time-traveling stream rules.
    k("ttsr.enabled", Bool, D::Bool(true)),
    k("ttsr.contextMode", Enum(&["discard", "keep"]), D::Str("discard")),
    k("ttsr.repeatMode", Enum(&["once", "after-gap"]), D::Str("once")),
    k("ttsr.repeatGap", UInt, D::UInt(10)),
    k("ttsr.interruptMode", Enum(&["always", "prose-only", "tool-only", "never"]), D::Str("always")),
];

/// The definition of a known key.
pub(crate) fn lookup(key: &str) -> Option<&'static KeyDef> {
    KEYS.iter().find(|d| d.key == key)
}

/// True when `key`'s value is a map kept whole (so flattening stops there).
pub(crate) fn is_map_valued(key: &str) -> bool {
    lookup(key).is_some_and(|d| matches!(d.kind, Record | StrRecord | VerifyProfiles))
}

impl Kind {
    /// `Ok` when `value` has this shape; otherwise what was expected, in words.
    pub(crate) fn check(self, value: &Value) -> Result<(), String> {
        let ok = match self {
            Bool => value.is_boolean(),
            UInt => as_u64(value).is_some(),
            Number => value.is_number(),
            Str => value.is_string(),
            Enum(values) => value.as_str().is_some_and(|s| values.contains(&s)),
            StrList => value.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            List => value.is_array(),
            Record => value.is_object(),
            StrRecord => value.as_object().is_some_and(|m| m.values().all(Value::is_string)),
            VerifyProfiles => {
                return serde_json::from_value::<std::collections::BTreeMap<String, TaskVerifyConfig>>(value.clone())
                    .map(|_| ())
                    .map_err(|e| format!("a map of verification profiles ({e})"));
            }
        };
        if ok { Ok(()) } else { Err(self.expected()) }
    }

    fn expected(self) -> String {
        match self {
            Bool => "true or false".into(),
            UInt => "a non-negative integer".into(),
            Number => "a number".into(),
            Str => "a string".into(),
            Enum(values) => {
                let quoted: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
                format!("one of {}", quoted.join(", "))
            }
            StrList => "an array of strings".into(),
            List => "an array".into(),
            Record => "an object".into(),
            StrRecord => "an object whose values are strings".into(),
            VerifyProfiles => "a map of verification profiles".into(),
        }
    }
}

/// A non-negative integer, also when written as a whole float.
pub(crate) fn as_u64(value: &Value) -> Option<u64> {
    if let Some(n) = value.as_u64() {
        return Some(n);
    }
    let f = value.as_f64()?;
    (f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64).then_some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for d in KEYS {
            assert!(seen.insert(d.key), "duplicate key {}", d.key);
        }
    }

    #[test]
    fn defaults_have_their_kind() {
        for d in KEYS {
            if let Some(v) = d.default.to_value() {
                assert!(d.kind.check(&v).is_ok(), "default of {} does not fit its kind", d.key);
            }
        }
    }

    #[test]
    fn kinds_check_values() {
        assert!(UInt.check(&json!(3)).is_ok());
        assert!(UInt.check(&json!(3.0)).is_ok());
        assert!(UInt.check(&json!(-1)).is_err());
        assert!(UInt.check(&json!(1.5)).is_err());
        assert!(Bool.check(&json!("true")).is_err());
        assert!(Enum(&["a", "b"]).check(&json!("b")).is_ok());
        assert_eq!(Enum(&["a", "b"]).check(&json!("c")).unwrap_err(), "one of \"a\", \"b\"");
        assert!(StrList.check(&json!(["a", 1])).is_err());
        assert!(StrRecord.check(&json!({"a": "b"})).is_ok());
        assert!(VerifyProfiles.check(&json!({"ci": {"commands": []}})).is_ok());
        assert!(VerifyProfiles.check(&json!({"ci": {"commands": 3}})).is_err());
    }
}
