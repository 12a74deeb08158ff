//! The `edit` tool's arguments, taken the way pi 0.73 takes them.
//!
//! The model is shown one form, `{path, edits:[{oldText, newText}]}` ([`advertised_schema`]).
//! Two more are accepted: `edits` sent as a JSON string holding the array, and the older single
//! form with top-level `oldText`/`newText`, which is appended to `edits` when both are strings
//! ([`prepare`], the tool's `prepare_arguments`). The agent validates what `prepare` made against
//! the advertised schema, so its error text shows the prepared arguments, as the reference's does.

use rho_agent::ToolError;
use serde_json::{Value, json};

use crate::args::{self, Args};
use crate::edit_apply::{EditError, Replacement};

const PATH: &str = "Path to the file to edit (relative or absolute)";
const EDITS: &str = "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.";
const OLD_TEXT: &str = "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.";
const NEW_TEXT: &str = "Replacement text for this targeted edit.";

/// The schema the model is shown: pi 0.73's multi-edit form.
pub fn advertised_schema() -> Value {
    json!({
        "type": "object",
        "required": ["path", "edits"],
        "additionalProperties": false,
        "properties": {
            "path": {"type": "string", "description": PATH},
            "edits": {
                "type": "array",
                "description": EDITS,
                "items": {
                    "type": "object",
                    "required": ["oldText", "newText"],
                    "additionalProperties": false,
                    "properties": {
                        "oldText": {"type": "string", "description": OLD_TEXT},
                        "newText": {"type": "string", "description": NEW_TEXT}
                    }
                }
            }
        }
    })
}

/// pi's `prepareEditArguments`: `edits` given as a JSON string holding an array is parsed, and
/// when `oldText` and `newText` are both strings they move into a new last entry of `edits`.
pub fn prepare(mut args: Args) -> Args {
    if let Some(Value::String(text)) = args.get("edits")
        && let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(text)
    {
        args.insert("edits".to_owned(), parsed);
    }
    if !matches!((args.get("oldText"), args.get("newText")), (Some(Value::String(_)), Some(Value::String(_)))) {
        return args;
    }
    let old_text = args.shift_remove("oldText").unwrap_or_default();
    let new_text = args.shift_remove("newText").unwrap_or_default();
    let mut edits = match args.get_mut("edits").map(Value::take) {
        Some(Value::Array(edits)) => edits,
        _ => Vec::new(),
    };
    edits.push(json!({"oldText": old_text, "newText": new_text}));
    args.insert("edits".to_owned(), Value::Array(edits));
    args
}

/// A call's arguments, prepared and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditArgs {
    pub path: String,
    pub edits: Vec<Replacement>,
}

impl EditArgs {
    /// Reads validated arguments, requiring at least one edit.
    pub fn parse(args: &Args) -> Result<Self, ToolError> {
        let path = args::string(args, "path")?;
        let edits = match args.get("edits") {
            Some(Value::Array(edits)) => edits.iter().map(replacement).collect::<Result<Vec<_>, _>>()?,
            _ => Vec::new(),
        };
        if edits.is_empty() {
            return Err(EditError::NoEdits.into());
        }
        Ok(Self { path, edits })
    }
}

fn replacement(edit: &Value) -> Result<Replacement, ToolError> {
    let field = |key: &str| match edit.get(key) {
        Some(Value::String(text)) => Ok(text.clone()),
        _ => Err(ToolError::new(format!("edits[].{key} must be a string"))),
    };
    Ok(Replacement { old_text: field("oldText")?, new_text: field("newText")? })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn obj(value: Value) -> Args {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn legacy_fields_become_the_last_edit() {
        let out = prepare(obj(json!({"path": "a", "oldText": "x", "newText": "y"})));
        assert_eq!(Value::Object(out), json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}));
        let out = prepare(obj(
            json!({"edits": [{"oldText": "1", "newText": "2"}], "oldText": "x", "newText": "y", "path": "a"}),
        ));
        let keys: Vec<&str> = out.keys().map(String::as_str).collect();
        assert_eq!(keys, ["edits", "path"]);
        assert_eq!(out["edits"], json!([{"oldText": "1", "newText": "2"}, {"oldText": "x", "newText": "y"}]));
    }

    #[test]
    fn legacy_fields_need_both_strings() {
        let args = json!({"path": "a", "oldText": "x", "newText": null});
        assert_eq!(Value::Object(prepare(obj(args.clone()))), args);
        let args = json!({"path": "a", "oldText": "x"});
        assert_eq!(Value::Object(prepare(obj(args.clone()))), args);
    }

    #[test]
    fn edits_as_a_json_string_are_parsed() {
        let out = prepare(obj(json!({"path": "a", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]"})));
        assert_eq!(out["edits"], json!([{"oldText": "x", "newText": "y"}]));
        let out = prepare(obj(json!({"path": "a", "edits": "{\"oldText\":\"x\"}"})));
        assert_eq!(out["edits"], json!("{\"oldText\":\"x\"}"));
        let out = prepare(obj(json!({"path": "a", "edits": "not json", "oldText": "x", "newText": "y"})));
        assert_eq!(out["edits"], json!([{"oldText": "x", "newText": "y"}]));
    }

    #[test]
    fn parse_requires_an_edit() {
        let parsed = EditArgs::parse(&obj(json!({"path": "a", "edits": [{"oldText": "x", "newText": "5"}]}))).unwrap();
        assert_eq!(parsed.edits, [Replacement { old_text: "x".into(), new_text: "5".into() }]);
        let err = EditArgs::parse(&obj(json!({"path": "a", "edits": []}))).unwrap_err();
        assert_eq!(err.0, "Edit tool input is invalid. edits must contain at least one replacement.");
    }
}
