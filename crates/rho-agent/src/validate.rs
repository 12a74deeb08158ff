//! Tool-argument validation against the tool's JSON Schema, after the coercions the reference
//! applies (`"5"` → 5 for numbers, `"true"` → true for booleans, scalars → strings for string
//! fields), with the reference's failure text.

use parking_lot::Mutex;
use std::collections::HashMap;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{Map, Value};

/// Compiled validators, one per tool name and schema.
#[derive(Default)]
pub struct Validators {
    cache: Mutex<HashMap<String, (Value, std::sync::Arc<jsonschema::Validator>)>>,
}

impl std::fmt::Debug for Validators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validators").finish_non_exhaustive()
    }
}

impl Validators {
    /// Coerces and validates `args` for tool `name`. On failure returns the model-facing text.
    pub fn check(&self, name: &str, schema: &Value, args: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        let mut value = Value::Object(args.clone());
        coerce(schema, &mut value);
        let validator = match self.validator(name, schema) {
            Ok(v) => v,
            // A tool whose schema does not compile is the tool's bug; run it unvalidated
            // rather than failing every call.
            Err(_) => return into_object(value),
        };
        let errors: Vec<String> = validator.iter_errors(&value).map(|e| format_error(&e)).collect();
        if errors.is_empty() {
            return into_object(value);
        }
        let received = serde_json::to_string_pretty(&Value::Object(args.clone())).unwrap_or_default();
        let mut text = format!("Validation failed for tool \"{name}\":\n");
        for e in errors {
            text.push_str("  - ");
            text.push_str(&e);
            text.push('\n');
        }
        text.push_str("\nReceived arguments:\n");
        text.push_str(&received);
        Err(text)
    }

    fn validator(&self, name: &str, schema: &Value) -> Result<std::sync::Arc<jsonschema::Validator>, String> {
        let mut cache = self.cache.lock();
        if let Some((cached_schema, v)) = cache.get(name)
            && cached_schema == schema
        {
            return Ok(v.clone());
        }
        let v = std::sync::Arc::new(jsonschema::validator_for(schema).map_err(|e| e.to_string())?);
        cache.insert(name.to_owned(), (schema.clone(), v.clone()));
        Ok(v)
    }
}

fn into_object(value: Value) -> Result<Map<String, Value>, String> {
    match value {
        Value::Object(m) => Ok(m),
        _ => Ok(Map::new()),
    }
}

/// One error line in the reference's form: `<path>: <message>`.
fn format_error(e: &jsonschema::ValidationError<'_>) -> String {
    let pointer = e.instance_path().to_string();
    let mut path = pointer.trim_start_matches('/').to_owned();
    let message = match e.kind() {
        ValidationErrorKind::Required { property } => {
            let prop = property.as_str().map(str::to_owned).unwrap_or_else(|| property.to_string());
            if path.is_empty() {
                path.clone_from(&prop);
            }
            format!("must have required property '{prop}'")
        }
        ValidationErrorKind::Type { kind } => match kind {
            TypeKind::Single(t) => format!("must be {t}"),
            TypeKind::Multiple(set) => {
                let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
                format!("must be {}", names.join(","))
            }
        },
        ValidationErrorKind::Enum { .. } => "must be equal to one of the allowed values".to_owned(),
        ValidationErrorKind::Constant { .. } => "must be equal to constant".to_owned(),
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            format!("must NOT have additional properties ({})", unexpected.join(", "))
        }
        ValidationErrorKind::Minimum { limit } => format!("must be >= {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("must be <= {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("must be > {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be < {limit}"),
        ValidationErrorKind::MinLength { limit } => format!("must NOT have fewer than {limit} characters"),
        ValidationErrorKind::MaxLength { limit } => format!("must NOT have more than {limit} characters"),
        ValidationErrorKind::MinItems { limit } => format!("must NOT have fewer than {limit} items"),
        ValidationErrorKind::MaxItems { limit } => format!("must NOT have more than {limit} items"),
        ValidationErrorKind::Pattern { pattern } => format!("must match pattern \"{pattern}\""),
        _ => e.to_string(),
    };
    if path.is_empty() {
        path = "root".to_owned();
    }
    format!("{path}: {message}")
}

/// Applies the reference validator's type coercions in place, guided by `schema`.
pub fn coerce(schema: &Value, value: &mut Value) {
    let Some(schema) = schema.as_object() else { return };
    if let Some(ty) = schema.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty()
            && !types.iter().any(|t| matches_type(t, value))
            && let Some(coerced) = types.iter().find_map(|t| coerce_scalar(t, value))
        {
            *value = coerced;
        }
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (key, sub) in props {
                    if let Some(v) = map.get_mut(key) {
                        coerce(sub, v);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    coerce(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

fn matches_type(ty: &str, v: &Value) -> bool {
    match ty {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => true,
    }
}

fn coerce_scalar(ty: &str, v: &Value) -> Option<Value> {
    match (ty, v) {
        ("number" | "integer", Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() {
                return None;
            }
            let n: f64 = s.parse().ok()?;
            if ty == "integer" && n.fract() != 0.0 {
                return None;
            }
            number(n)
        }
        ("number" | "integer", Value::Bool(b)) => number(if *b { 1.0 } else { 0.0 }),
        ("number" | "integer", Value::Null) => number(0.0),
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("string", Value::Null) => Some(Value::String(String::new())),
        ("boolean", Value::String(s)) => match s.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        ("boolean", Value::Number(n)) => match n.as_f64() {
            Some(1.0) => Some(Value::Bool(true)),
            Some(0.0) => Some(Value::Bool(false)),
            _ => None,
        },
        ("boolean", Value::Null) => Some(Value::Bool(false)),
        ("null", Value::String(s)) if s.is_empty() => Some(Value::Null),
        ("array", scalar) if !scalar.is_array() && !scalar.is_object() => Some(Value::Array(vec![scalar.clone()])),
        _ => None,
    }
}

fn number(n: f64) -> Option<Value> {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Some(Value::from(n as i64))
    } else {
        serde_json::Number::from_f64(n).map(Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type":"object","required":["path"],"properties":{
            "path":{"type":"string"},"offset":{"type":"number"},"all":{"type":"boolean"}}})
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn coerces_like_the_reference() {
        let v = Validators::default();
        let out = v.check("read", &schema(), &obj(json!({"path": 5, "offset": "10", "all": "true"}))).unwrap();
        assert_eq!(Value::Object(out), json!({"path": "5", "offset": 10, "all": true}));
    }

    #[test]
    fn missing_required_property_text() {
        let v = Validators::default();
        let err = v.check("read", &schema(), &obj(json!({"offset": 1}))).unwrap_err();
        assert_eq!(
            err,
            "Validation failed for tool \"read\":\n  - path: must have required property 'path'\n\nReceived arguments:\n{\n  \"offset\": 1\n}"
        );
    }

    #[test]
    fn wrong_type_text() {
        let v = Validators::default();
        let err = v.check("read", &schema(), &obj(json!({"path": "a", "offset": "ten"}))).unwrap_err();
        assert!(err.contains("  - offset: must be number\n"), "{err}");
    }
}
