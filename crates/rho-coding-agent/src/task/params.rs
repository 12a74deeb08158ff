//! The `task` tool's arguments (xcsh's shape plus S2's `verify`), their JSON Schema, and the
//! checks made before anything runs: tasks present, ids non-empty, at most 48 characters and
//! unique (ignoring case, as they name artifact files).

use std::sync::LazyLock;

use rho_rpc::{VerifyMode, VerifyOnFailure};
use rho_tools::params::{require, undescribed};
use schemars::{JsonSchema, Schema};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::config::settings::VerificationCommand;

/// The longest task id accepted.
pub const MAX_ID_CHARS: usize = 48;

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(transform = |s: &mut Schema| require(s, &["description"]))]
pub struct TaskItem {
    /// CamelCase identifier, at most 48 characters
    #[schemars(length(max = MAX_ID_CHARS))]
    pub id: String,
    /// Short label for the UI; the sub-agent does not see it
    #[serde(default)]
    pub description: String,
    /// Complete instructions for this task (only what differs from context)
    pub assignment: String,
}

/// `verify` (docs/protocol.md, "Verification"): off, the default profile, a named profile, or an
/// inline config (optionally on top of a profile).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(transform = undescribed)]
pub enum VerifySpec {
    Flag(bool),
    Profile(String),
    Inline(InlineVerify),
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InlineVerify {
    #[serde(default)]
    pub profile: Option<String>,
    #[serde(default)]
    pub mode: Option<VerifyMode>,
    #[serde(default)]
    pub commands: Option<Vec<VerificationCommand>>,
    #[serde(default)]
    pub on_failure: Option<VerifyOnFailure>,
}

/// The tool's arguments; their JSON Schema is derived from this (see [`schema`]), so each
/// description is one line, as the model is given it. `tasks` is required by the schema but read
/// as empty when missing, so the answer can say what to send.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(transform = |s: &mut Schema| require(s, &["tasks"]))]
pub struct TaskParams {
    /// Agent type for every task in this batch
    pub agent: String,
    /// Shared background prepended to every task's assignment: goal, constraints, conventions, reference paths. Written once instead of in each assignment.
    #[serde(default)]
    pub context: Option<String>,
    /// JSON-encoded JTD schema the sub-agents' final answers must match
    #[serde(default)]
    pub schema: Option<String>,
    /// Tasks to run in parallel; each small and self-contained given context + assignment
    #[serde(default)]
    pub tasks: Vec<TaskItem>,
    /// Run each task in its own git worktree and return its changes as a patch. Use when tasks edit files.
    #[serde(default)]
    pub isolated: Option<bool>,
    /// With isolated: check each task's changes before they are returned. true: the default profile; a string: that profile; an object: {profile?, commands, onFailure?}
    #[serde(default)]
    pub verify: Option<VerifySpec>,
}

impl TaskParams {
    /// Reads validated arguments; the error is the model-facing text.
    pub fn parse(args: Map<String, Value>) -> Result<Self, String> {
        serde_json::from_value(Value::Object(args)).map_err(|e| format!("Invalid task arguments: {e}"))
    }

    /// The problems with the task list, if any (one message naming all of them).
    pub fn check_tasks(&self) -> Result<(), String> {
        if self.tasks.is_empty() {
            return Err(
                "No tasks provided. Use: { agent, context, tasks: [{id, description, assignment}, ...] }".into()
            );
        }
        let mut problems = Vec::new();
        let blank: Vec<String> =
            self.tasks.iter().enumerate().filter(|(_, t)| t.id.trim().is_empty()).map(|(i, _)| i.to_string()).collect();
        if !blank.is_empty() {
            problems.push(format!("Missing task ids at indexes: {}", blank.join(", ")));
        }
        let long: Vec<&str> =
            self.tasks.iter().filter(|t| t.id.chars().count() > MAX_ID_CHARS).map(|t| t.id.as_str()).collect();
        if !long.is_empty() {
            problems.push(format!("Task ids longer than {MAX_ID_CHARS} characters: {}", long.join(", ")));
        }
        let mut duplicates: Vec<String> = Vec::new();
        for (i, task) in self.tasks.iter().enumerate() {
            let key = task.id.to_lowercase();
            let first = self.tasks.iter().position(|t| t.id.to_lowercase() == key);
            if first != Some(i) && !task.id.trim().is_empty() && !duplicates.contains(&key) {
                duplicates.push(key);
            }
        }
        if !duplicates.is_empty() {
            problems.push(format!("Duplicate task ids (ignoring case): {}", duplicates.join(", ")));
        }
        if problems.is_empty() { Ok(()) } else { Err(format!("Invalid tasks: {}.", problems.join(". "))) }
    }
}

/// The prompt a sub-agent gets: the shared context, its assignment, and the answer schema.
pub fn task_prompt(context: Option<&str>, assignment: &str, schema: Option<&str>) -> String {
    let mut prompt = String::new();
    if let Some(context) = context.map(str::trim).filter(|c| !c.is_empty()) {
        prompt.push_str("<context>\n");
        prompt.push_str(context);
        prompt.push_str("\n</context>\n\n");
    }
    prompt.push_str(assignment.trim());
    if let Some(schema) = schema.map(str::trim).filter(|s| !s.is_empty()) {
        prompt.push_str("\n\nYour final reply must be a single JSON value matching this JTD schema:\n");
        prompt.push_str(schema);
    }
    prompt
}

/// The JSON Schema offered to the model, derived from [`TaskParams`]. `isolated` and `verify`
/// are offered only when isolation is enabled (an `isolated` argument is still read, to answer
/// that isolation is off). Each is derived when first asked for, not at start-up.
pub fn schema(isolation_enabled: bool) -> &'static Value {
    static WITH_ISOLATION: LazyLock<Value> = LazyLock::new(rho_tools::params::schema_of::<TaskParams>);
    static WITHOUT_ISOLATION: LazyLock<Value> = LazyLock::new(|| {
        let mut schema = rho_tools::params::schema_of::<TaskParams>();
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            properties.remove("isolated");
            properties.remove("verify");
        }
        schema
    });
    if isolation_enabled { &WITH_ISOLATION } else { &WITHOUT_ISOLATION }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    /// The schema as xcsh's tool writes it (with rho's `verify`).
    fn reference_schema(isolation_enabled: bool) -> Value {
        let mut properties = json!({
            "agent": {"type": "string", "description": "Agent type for every task in this batch"},
            "context": {
                "type": "string",
                "description": "Shared background prepended to every task's assignment: goal, constraints, \
                                conventions, reference paths. Written once instead of in each assignment."
            },
            "schema": {
                "type": "string",
                "description": "JSON-encoded JTD schema the sub-agents' final answers must match"
            },
            "tasks": {
                "type": "array",
                "description": "Tasks to run in parallel; each small and self-contained given context + assignment",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "maxLength": MAX_ID_CHARS,
                               "description": "CamelCase identifier, at most 48 characters"},
                        "description": {"type": "string",
                                        "description": "Short label for the UI; the sub-agent does not see it"},
                        "assignment": {"type": "string",
                                       "description": "Complete instructions for this task (only what differs from context)"}
                    },
                    "required": ["id", "description", "assignment"]
                }
            }
        });
        if isolation_enabled && let Value::Object(map) = &mut properties {
            map.insert(
                "isolated".into(),
                json!({"type": "boolean",
                       "description": "Run each task in its own git worktree and return its changes as a patch. \
                                       Use when tasks edit files."}),
            );
            map.insert("verify".into(), verify_schema());
        }
        json!({"type": "object", "properties": properties, "required": ["agent", "tasks"]})
    }

    fn verify_schema() -> Value {
        let command = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "command": {"type": "string"},
                "timeoutMs": {"type": "number"},
                "optional": {"type": "boolean"}
            },
            "required": ["name", "command"]
        });
        json!({
            "description": "With isolated: check each task's changes before they are returned. true: the default \
                            profile; a string: that profile; an object: {profile?, commands, onFailure?}",
            "anyOf": [
                {"type": "boolean"},
                {"type": "string"},
                {"type": "object", "properties": {
                    "profile": {"type": "string"},
                    "mode": {"type": "string", "enum": ["none", "command"]},
                    "commands": {"type": "array", "items": command},
                    "onFailure": {"type": "string", "enum": ["return_failure", "retry_once", "discard_patch"]}
                }}
            ]
        })
    }

    #[test]
    fn the_derived_schema_is_the_reference_word_for_word() {
        for isolation in [false, true] {
            assert_eq!(schema(isolation), &reference_schema(isolation), "isolation {isolation}");
        }
    }

    fn params(v: Value) -> TaskParams {
        let Value::Object(map) = v else { panic!() };
        TaskParams::parse(map).unwrap()
    }

    #[test]
    fn verify_shapes() {
        let p = params(json!({"agent": "task", "tasks": [], "verify": true}));
        assert_eq!(p.verify, Some(VerifySpec::Flag(true)));
        let p = params(json!({"agent": "task", "tasks": [], "verify": "ci"}));
        assert_eq!(p.verify, Some(VerifySpec::Profile("ci".into())));
        let p = params(json!({"agent": "task", "tasks": [],
            "verify": {"profile": "ci", "commands": [{"name": "x", "command": "true"}], "onFailure": "retry_once"}}));
        let Some(VerifySpec::Inline(inline)) = p.verify else { panic!() };
        assert_eq!(inline.profile.as_deref(), Some("ci"));
        assert_eq!(inline.on_failure, Some(VerifyOnFailure::RetryOnce));
        assert_eq!(inline.commands.unwrap()[0].command, "true");
    }

    #[test]
    fn task_lists_are_checked() {
        let p = params(json!({"agent": "task", "tasks": []}));
        assert!(p.check_tasks().unwrap_err().starts_with("No tasks provided."));
        let p = params(json!({"agent": "task", "tasks": [
            {"id": "A", "description": "", "assignment": "x"},
            {"id": "a", "description": "", "assignment": "y"},
            {"id": " ", "description": "", "assignment": "z"}]}));
        assert_eq!(
            p.check_tasks().unwrap_err(),
            "Invalid tasks: Missing task ids at indexes: 2. Duplicate task ids (ignoring case): a."
        );
    }

    #[test]
    fn the_prompt_puts_context_first() {
        assert_eq!(task_prompt(Some("ctx"), "do it", None), "<context>\nctx\n</context>\n\ndo it");
        assert_eq!(task_prompt(Some("  "), "do it\n", Some("{}")).lines().last(), Some("{}"));
    }

    #[test]
    fn isolation_adds_isolated_and_verify() {
        assert!(schema(false)["properties"].get("isolated").is_none());
        assert_eq!(schema(true)["properties"]["isolated"]["type"], "boolean");
        assert!(schema(true)["properties"]["verify"]["anyOf"].is_array());
    }
}
