//! Tool schemas as Gemini's `parameters` accept them: an OpenAPI-style subset of JSON Schema.
//! Keywords outside it (`$schema`, `additionalProperties`, `$ref`, …) make the request fail, so
//! they are dropped; `const` becomes a one-value `enum`, `oneOf` becomes `anyOf`, and a type
//! list with `"null"` becomes the other type plus `nullable`.

use serde_json::{Map, Value, json};

/// Keywords the API rejects.
const REJECTED: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "$comment",
    "$anchor",
    "definitions",
    "additionalProperties",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentRequired",
    "dependentSchemas",
    "propertyNames",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "if",
    "then",
    "else",
    "not",
    "allOf",
    "examples",
    "contentEncoding",
    "contentMediaType",
    "readOnly",
    "writeOnly",
    "deprecated",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

/// The `format` values the API knows.
const FORMATS: &[&str] = &["date-time", "enum", "int32", "int64", "float", "double"];

/// `schema` with everything Gemini rejects removed or rewritten.
pub(crate) fn clean(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            k if REJECTED.contains(&k) => {}
            "const" => {
                out.insert("enum".into(), json!([value]));
            }
            "format" if !value.as_str().is_some_and(|f| FORMATS.contains(&f)) => {}
            "type" => match value {
                Value::Array(types) => {
                    let nullable = types.iter().any(|t| t == "null");
                    if let Some(first) = types.iter().find(|t| *t != "null") {
                        out.insert("type".into(), first.clone());
                    }
                    if nullable {
                        out.insert("nullable".into(), json!(true));
                    }
                }
                other => {
                    out.insert("type".into(), other.clone());
                }
            },
            "properties" => {
                let properties = match value {
                    Value::Object(props) => props.iter().map(|(name, s)| (name.clone(), clean(s))).collect(),
                    _ => Map::new(),
                };
                out.insert("properties".into(), Value::Object(properties));
            }
            "items" => {
                let items = match value {
                    Value::Array(list) => list.first().map(clean).unwrap_or_else(|| json!({})),
                    other => clean(other),
                };
                out.insert("items".into(), items);
            }
            "anyOf" | "oneOf" => {
                let list = value.as_array().map(|l| l.iter().map(clean).collect()).unwrap_or_default();
                out.insert("anyOf".into(), Value::Array(list));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejected_keywords_go_and_the_rest_is_rewritten() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "mode": {"const": "fast", "description": "Speed"},
                "limit": {"type": ["integer", "null"], "exclusiveMinimum": 0},
                "url": {"type": "string", "format": "uri"},
                "when": {"type": "string", "format": "date-time"},
                "tags": {"type": "array", "items": {"type": "string", "minLength": 1}},
                "either": {"oneOf": [{"type": "string"}, {"type": "object", "additionalProperties": true}]}
            },
            "required": ["mode"]
        });
        assert_eq!(
            clean(&schema),
            json!({
                "type": "object",
                "properties": {
                    "mode": {"enum": ["fast"], "description": "Speed"},
                    "limit": {"type": "integer", "nullable": true},
                    "url": {"type": "string"},
                    "when": {"type": "string", "format": "date-time"},
                    "tags": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "either": {"anyOf": [{"type": "string"}, {"type": "object"}]}
                },
                "required": ["mode"]
            })
        );
    }

    #[test]
    fn a_property_named_like_a_keyword_survives() {
        let schema = json!({"type": "object", "properties": {"not": {"type": "boolean"}}});
        assert_eq!(clean(&schema), schema);
    }
}
