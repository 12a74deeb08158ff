//! The protocol's JSON Schema, generated from the types. The checked-in copy
//! (`schema/rpc-protocol.schema.json`) is compared with a fresh generation by a test, so a
//! change to a wire type that is not reflected in the schema (or the reverse) fails the build.

use schemars::{Schema, schema_for};
use serde_json::{Value, json};

use crate::command::{HostToolResult, HostToolUpdate, RpcCommand, UiResponse};
use crate::frames::{OutFrame, RpcHostToolDefinition};

/// The whole protocol: inbound commands and replies, outbound frames.
pub fn protocol_schema() -> Value {
    let part = |s: Schema| s.to_value();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "pi-family RPC protocol (rho)",
        "inbound": {
            "command": part(schema_for!(RpcCommand)),
            "extension_ui_response": part(schema_for!(UiResponse)),
            "host_tool_result": part(schema_for!(HostToolResult)),
            "host_tool_update": part(schema_for!(HostToolUpdate)),
            "host_tool_definition": part(schema_for!(RpcHostToolDefinition)),
        },
        "outbound": part(schema_for!(OutFrame)),
    })
}

/// The schema as it is checked in: pretty JSON with a trailing newline.
pub fn protocol_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&protocol_schema()).unwrap_or_default();
    text.push('\n');
    text
}
