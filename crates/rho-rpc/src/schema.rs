//! The protocol's JSON Schema, generated from the types. The checked-in copy
//! (`schema/rpc-protocol.schema.json`) is compared with a fresh generation by a test, so a
//! change to a wire type that is not reflected in the schema (or the reverse) fails the build.
//!
//! One generator produces every definition, so each `$ref` resolves inside the one document
//! (`#/$defs/<Name>`). The output is deterministic: definitions are sorted by name and every
//! map keeps its insertion order (`preserve_order`), so the text only changes when a type does.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::command::{HostToolResult, HostToolUpdate, HostUriResult, RpcCommand, UiResponse};
use crate::frames::{OutFrame, RpcHostToolDefinition};

/// The whole protocol: `$defs` holds every type; `Inbound` is any line a host may write (a
/// command, shown without its optional `id`, or a sub-protocol reply), `Outbound` any line rho
/// writes; the document itself accepts either.
pub fn protocol_schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut entry = |f: fn(&mut SchemaGenerator) -> Value| f(&mut generator);
    let command = entry(sub::<RpcCommand>);
    let ui_response = entry(sub::<UiResponse>);
    let host_tool_result = entry(sub::<HostToolResult>);
    let host_tool_update = entry(sub::<HostToolUpdate>);
    let host_uri_result = entry(sub::<HostUriResult>);
    let host_tool_definition = entry(sub::<RpcHostToolDefinition>);
    let outbound = entry(sub::<OutFrame>);

    let mut defs: Vec<(String, Value)> = generator.take_definitions(true).into_iter().collect();
    defs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut all = Map::new();
    // The reply structs do not hold their `type`: the tag is added here.
    let tagged = |schema: Value, ty: &str| json!({ "allOf": [schema, { "properties": { "type": { "const": ty } }, "required": ["type"] }] });
    all.insert(
        "Inbound".into(),
        json!({ "anyOf": [
            command,
            tagged(ui_response, "extension_ui_response"),
            tagged(host_tool_result, "host_tool_result"),
            tagged(host_tool_update, "host_tool_update"),
            tagged(host_uri_result, "host_uri_result"),
        ] }),
    );
    all.insert("Outbound".into(), outbound);
    all.insert("HostToolDefinition".into(), host_tool_definition);
    all.extend(defs);

    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "pi-family RPC protocol (rho)",
        "description": "One JSON object per line. Inbound: host to rho (stdin); Outbound: rho to host (stdout).",
        "anyOf": [{ "$ref": "#/$defs/Inbound" }, { "$ref": "#/$defs/Outbound" }],
        "$defs": all,
    })
}

fn sub<T: JsonSchema>(generator: &mut SchemaGenerator) -> Value {
    generator.subschema_for::<T>().to_value()
}

/// The schema as it is checked in: pretty JSON with a trailing newline.
pub fn protocol_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&protocol_schema()).unwrap_or_default();
    text.push('\n');
    text
}
