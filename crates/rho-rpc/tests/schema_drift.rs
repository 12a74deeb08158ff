//! The checked-in JSON Schema (`schema/rpc-protocol.schema.json`) must equal the one generated
//! from the wire types. Run with `UPDATE_SCHEMA=1` to rewrite the file after changing a type.

use std::path::PathBuf;

use rho_rpc::schema::{protocol_schema, protocol_schema_text};
use serde_json::{Value, json};

fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema").join("rpc-protocol.schema.json")
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(protocol_schema_text(), protocol_schema_text());
}

#[test]
fn checked_in_schema_matches_the_types() {
    let fresh = protocol_schema_text();
    let path = schema_path();
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| !v.is_empty() && v != "0") {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    if checked_in != fresh {
        let diff = first_difference(&checked_in, &fresh);
        panic!(
            "{} is out of date with the rho-rpc types ({diff}).\n\
             Regenerate it with:\n    UPDATE_SCHEMA=1 cargo nextest run -p rho-rpc --test schema_drift\n\
             and commit the result.",
            path.display()
        );
    }
}

#[test]
fn every_ref_resolves_inside_the_document() {
    let schema = protocol_schema();
    let mut refs = Vec::new();
    collect_refs(&schema, &mut refs);
    assert!(!refs.is_empty());
    for r in refs {
        let pointer = r.strip_prefix('#').unwrap_or_else(|| panic!("external $ref {r}"));
        assert!(schema.pointer(pointer).is_some(), "dangling $ref {r}");
    }
}

#[test]
fn schema_accepts_real_frames_and_rejects_others() {
    let validator = jsonschema::validator_for(&protocol_schema()).unwrap();
    let good = [
        json!({"type":"ready","version":"0.1.0"}),
        json!({"type":"prompt","message":"hi","streamingBehavior":"steer"}),
        json!({"type":"extension_ui_response","id":"u1","confirmed":true}),
        json!({"type":"host_tool_result","id":"h1","result":{"content":[]}}),
        json!({"id":"req_1","type":"response","command":"prompt","success":true}),
        json!({"type":"response","command":"parse","success":false,"error":"Failed to parse command: x"}),
        json!({"type":"agent_start"}),
        json!({"type":"host_tool_call","id":"h1","toolCallId":"t1","toolName":"echo","arguments":{}}),
        json!({"type":"extension_ui_request","id":"u1","method":"confirm","title":"T","message":"M"}),
        json!({"type":"auto_retry_end","success":true,"attempt":1}),
    ];
    for frame in good {
        let errors: Vec<String> = validator.iter_errors(&frame).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{frame} should validate: {errors:?}");
    }
    for frame in [json!({"type":"prompt"}), json!({"type":"host_tool_call","id":"h1"}), json!(42)] {
        assert!(!validator.is_valid(&frame), "{frame} should not validate");
    }
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                out.push(r.clone());
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// The first line where the two texts differ, for the failure message.
fn first_difference(old: &str, new: &str) -> String {
    let mut old_lines = old.lines();
    let mut new_lines = new.lines();
    let mut n = 1;
    loop {
        match (old_lines.next(), new_lines.next()) {
            (None, None) => return "only line endings differ".into(),
            (a, b) if a == b => n += 1,
            (a, b) => {
                return format!(
                    "first difference at line {n}: checked in {:?}, generated {:?}",
                    a.unwrap_or("<end of file>"),
                    b.unwrap_or("<end of file>")
                );
            }
        }
    }
}
