//! Each built-in tool's arguments as a typed struct that derives the JSON Schema the model is
//! given (the reference's schema, word for word) and reads a call's arguments. The tools, the
//! editor protocol's tool-call views and the interactive mode's tool blocks all read arguments
//! through these, so a field is named in one place.
//!
//! Reading is lenient where the reference is: arguments are checked against the schema (with its
//! coercions) before a tool runs, so a value of the wrong type can only come from a caller that
//! skipped the check; such an optional value counts as absent, a required one is an error.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::args::Args;
use rho_agent::ToolError;

/// `read`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReadParams {
    /// Path to the file to read (relative or absolute)
    pub path: String,
    /// Line number to start reading from (1-indexed)
    #[serde(default, deserialize_with = "number", skip_serializing_if = "Option::is_none")]
    pub offset: Option<f64>,
    /// Maximum number of lines to read
    #[serde(default, deserialize_with = "number", skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
}

/// `write`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WriteParams {
    /// Path to the file to write (relative or absolute)
    pub path: String,
    /// Content to write to the file
    pub content: String,
}

/// `bash`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BashParams {
    /// Bash command to execute
    pub command: String,
    /// Timeout in seconds (optional, no default timeout)
    #[serde(default, deserialize_with = "number", skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
}

/// `bash`'s arguments when background commands are on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BashBackgroundParams {
    /// Bash command to execute
    pub command: String,
    /// Timeout in seconds (optional, no default timeout)
    #[serde(default, deserialize_with = "number", skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// Run the command in the background and return its id at once; read its output with bash_output, stop it with kill_bash (default: false)
    #[serde(default, deserialize_with = "flag", skip_serializing_if = "Option::is_none")]
    pub run_in_background: Option<bool>,
}

/// `bash_output`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BashOutputParams {
    /// The id of the background command (from bash with run_in_background)
    pub bash_id: String,
    /// Only the new lines that match this regular expression (optional)
    #[serde(default, deserialize_with = "string", skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
}

/// `kill_bash`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KillBashParams {
    /// The id of the background command to stop
    pub shell_id: String,
}

/// `grep`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepParams {
    /// Search pattern (regex or literal string)
    pub pattern: String,
    /// Directory or file to search (default: current directory)
    #[serde(default, deserialize_with = "string", skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'
    #[serde(default, deserialize_with = "string", skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// Case-insensitive search (default: false)
    #[serde(default, deserialize_with = "flag", skip_serializing_if = "Option::is_none")]
    pub ignore_case: Option<bool>,
    /// Treat pattern as literal string instead of regex (default: false)
    #[serde(default, deserialize_with = "flag", skip_serializing_if = "Option::is_none")]
    pub literal: Option<bool>,
    /// Number of lines to show before and after each match (default: 0)
    #[serde(default, deserialize_with = "number", skip_serializing_if = "Option::is_none")]
    pub context: Option<f64>,
    /// Maximum number of matches to return (default: 100)
    #[serde(default, deserialize_with = "number", skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
}

/// `find`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FindParams {
    /// Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'
    pub pattern: String,
    /// Directory to search in (default: current directory)
    #[serde(default, deserialize_with = "string", skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Maximum number of results (default: 1000)
    #[serde(default, deserialize_with = "number", skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
}

/// `ls`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LsParams {
    /// Directory to list (default: current directory)
    #[serde(default, deserialize_with = "string", skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Maximum number of entries to return (default: 500)
    #[serde(default, deserialize_with = "number", skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
}

/// A tool's parameters: read from a call's arguments, and described by a schema derived once,
/// when it is first asked for (not at start-up).
pub trait Parameters: JsonSchema + DeserializeOwned {
    fn schema() -> &'static Value;
}

macro_rules! parameters {
    ($($params:ty),*) => {$(
        impl Parameters for $params {
            fn schema() -> &'static Value {
                static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(schema_of::<$params>);
                &SCHEMA
            }
        }
    )*};
}

/// `web_fetch`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebFetchParams {
    /// The http or https URL to fetch
    pub url: String,
}

/// `web_search`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebSearchParams {
    /// The search query
    pub query: String,
    /// Only include results from these domains (optional)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_domains: Option<Vec<String>>,
    /// Never include results from these domains (optional)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_domains: Option<Vec<String>>,
}

parameters!(
    ReadParams,
    WriteParams,
    BashParams,
    BashBackgroundParams,
    BashOutputParams,
    KillBashParams,
    GrepParams,
    FindParams,
    LsParams,
    WebFetchParams,
    WebSearchParams
);

/// The JSON Schema a tool advertises for `T`, in the reference's plain form: an object's
/// `type`, `properties` (each with its `type` and `description`) and `required`, every
/// subschema written in place; no `$schema`, title, number format, `null` alternative or `null`
/// default for optional fields; a choice between shapes is an `anyOf` (as TypeBox writes a
/// union).
pub fn schema_of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator();
    let mut value = Schema::to_value(generator.into_root_schema_for::<T>());
    strip(&mut value);
    // The struct's own doc comment is for Rust readers; the tool's description says what it does.
    if let Value::Object(map) = &mut value {
        map.remove("description");
    }
    value
}

/// Removes what the derivation adds beyond the reference's schemas: an optional field is one
/// that is not required, never one that may be `null`.
fn strip(value: &mut Value) {
    let Value::Object(map) = value else { return };
    for key in ["$schema", "title", "format"] {
        map.remove(key);
    }
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if let [only] = kept.as_slice() {
            map.insert("type".into(), only.clone());
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if map.get("required").and_then(Value::as_array).is_some_and(Vec::is_empty) {
        map.remove("required");
    }
    if let Some(choices) = map.remove("oneOf") {
        map.insert("anyOf".into(), choices);
    }
    // `anyOf: [X, null]` (an optional enum or object) is X, keeping this schema's description.
    let is_null = |v: &Value| v.get("type").is_some_and(|t| t == "null");
    if let Some(Value::Array(choices)) = map.get("anyOf")
        && choices.iter().any(is_null)
        && let [Value::Object(only)] = choices.iter().filter(|c| !is_null(c)).collect::<Vec<_>>().as_slice()
    {
        let only = only.clone();
        map.remove("anyOf");
        for (key, v) in only {
            map.entry(key).or_insert(v);
        }
    }
    for child in map.values_mut() {
        match child {
            Value::Array(items) => items.iter_mut().for_each(strip),
            other => strip(other),
        }
    }
}

/// For `#[schemars(transform = undescribed)]`: a type whose doc comment is for Rust readers,
/// not a description the model is given.
pub fn undescribed(schema: &mut Schema) {
    schema.remove("description");
}

/// For `#[schemars(transform = |s: &mut Schema| require(s, &[..]))]`: fields the schema requires
/// though they are read with a default (so a call without one gets the tool's own answer about
/// it rather than a schema error), and that default not advertised.
pub fn require(schema: &mut Schema, fields: &[&str]) {
    let Some(object) = schema.as_object_mut() else { return };
    let mut order = Vec::new();
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if fields.contains(&name.as_str())
                && let Value::Object(property) = property
            {
                property.remove("default");
            }
            order.push(name.clone());
        }
    }
    let mut required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    for field in fields {
        if !required.iter().any(|r| r == field) {
            required.push((*field).to_owned());
        }
    }
    // In the order of the properties, as the reference lists them.
    required.sort_by_key(|name| order.iter().position(|o| o == name));
    object.insert("required".into(), required.into());
}

/// Reads a call's arguments as `T`. A missing required field reads as the reference says it.
pub fn parse<T: DeserializeOwned>(args: &Args) -> Result<T, ToolError> {
    T::deserialize(&Value::Object(args.clone())).map_err(|e| {
        let text = e.to_string();
        match text.strip_prefix("missing field `").and_then(|rest| rest.split('`').next()) {
            Some(field) => ToolError::new(format!("must have required property '{field}'")),
            None => ToolError::new(text),
        }
    })
}

/// Reads arguments as `T` when they hold what `T` needs (a call still streaming may not yet).
pub fn read<T: DeserializeOwned>(args: &serde_json::Map<String, Value>) -> Option<T> {
    T::deserialize(&Value::Object(args.clone())).ok()
}

/// The `(oldText, newText)` pairs of an `edit` call, in either of its forms (`edits[]`, or the
/// older single `oldText` / `newText`); none when the call does not read as an edit.
pub fn edit_pairs(args: &Args) -> Vec<(String, String)> {
    crate::edit_args::EditArgs::parse(&crate::edit_args::prepare(args.clone()))
        .map(|edit| edit.edits.into_iter().map(|r| (r.old_text, r.new_text)).collect())
        .unwrap_or_default()
}

/// A line number or count that is a whole, non-negative number (what views of a call show).
pub fn whole(n: Option<f64>) -> Option<u64> {
    n.filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n < u64::MAX as f64).map(|n| n as u64)
}

/// A finite number, else absent.
fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(Value::deserialize(d)?.as_f64().filter(|n| n.is_finite()))
}

/// A string, else absent.
fn string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

/// `true`, else absent.
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(matches!(Value::deserialize(d)?, Value::Bool(true)).then_some(true))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn derived_schemas_are_the_references_word_for_word() {
        assert_eq!(
            schema_of::<ReadParams>(),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
                    "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
                    "limit": {"type": "number", "description": "Maximum number of lines to read"}
                },
                "required": ["path"]
            })
        );
        assert_eq!(
            schema_of::<WriteParams>(),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
                    "content": {"type": "string", "description": "Content to write to the file"}
                },
                "required": ["path", "content"]
            })
        );
        assert_eq!(
            schema_of::<BashParams>(),
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "Bash command to execute"},
                    "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"}
                },
                "required": ["command"]
            })
        );
        assert_eq!(
            schema_of::<GrepParams>(),
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
                    "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
                    "glob": {"type": "string", "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},
                    "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
                    "literal": {"type": "boolean", "description": "Treat pattern as literal string instead of regex (default: false)"},
                    "context": {"type": "number", "description": "Number of lines to show before and after each match (default: 0)"},
                    "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"}
                },
                "required": ["pattern"]
            })
        );
        assert_eq!(
            schema_of::<FindParams>(),
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"},
                    "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
                    "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"}
                },
                "required": ["pattern"]
            })
        );
        assert_eq!(
            schema_of::<LsParams>(),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Directory to list (default: current directory)"},
                    "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"}
                }
            })
        );
    }

    #[test]
    fn reading_is_lenient_where_the_reference_is() {
        let args = |v: Value| v.as_object().unwrap().clone();
        let params: ReadParams = parse(&args(json!({"path": "a", "offset": "x", "limit": 5}))).unwrap();
        assert_eq!(params, ReadParams { path: "a".into(), offset: None, limit: Some(5.0) });
        let grep: GrepParams = parse(&args(json!({"pattern": "p", "ignoreCase": "yes", "literal": true}))).unwrap();
        assert_eq!((grep.ignore_case, grep.literal), (None, Some(true)));
        let missing = parse::<WriteParams>(&args(json!({"path": "a"}))).unwrap_err();
        assert_eq!(missing.to_string(), "must have required property 'content'");
        assert_eq!(read::<WriteParams>(&args(json!({"path": "a"}))), None);
    }
}
