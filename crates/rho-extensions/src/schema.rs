//! The channel's messages as one JSON Schema, generated from the types in [`crate::protocol`]:
//! the one description of the channel both sides keep to. The checked-in copy
//! (`host/channel.schema.json`) is compared with a fresh generation by a test, and the host's
//! JavaScript is checked against it there too: every message rho sends has a case in the host,
//! every message and action the host sends is one rho reads, and the host's copy of the state
//! has the fields rho sends (`tests/channel_drift.rs`).
//!
//! Deterministic as rho-rpc's protocol schema is: definitions sorted by name, maps in insertion
//! order.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::protocol::{FromHost, HostState, ToHost};

/// `ToHost`: a line rho writes (a request also carries `id`); `FromHost`: a line the host
/// writes; `HostState`: what `init` and `state` carry.
pub fn channel_schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let to_host = sub::<ToHost>(&mut generator);
    let from_host = sub::<FromHost>(&mut generator);
    let state = sub::<HostState>(&mut generator);
    let mut defs: Vec<(String, Value)> = generator.take_definitions(true).into_iter().collect();
    defs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut all = Map::new();
    all.insert("ToHost".into(), to_host);
    all.insert("FromHost".into(), from_host);
    all.insert("HostState".into(), state);
    all.extend(defs);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "rho's extension host channel",
        "description": "One JSON object per line over a Unix socket. ToHost: rho to the host (requests carry `id`); FromHost: the host to rho.",
        "anyOf": [{ "$ref": "#/$defs/ToHost" }, { "$ref": "#/$defs/FromHost" }],
        "$defs": all,
    })
}

fn sub<T: JsonSchema>(generator: &mut SchemaGenerator) -> Value {
    generator.subschema_for::<T>().to_value()
}

/// The schema as it is checked in: pretty JSON with a trailing newline.
pub fn channel_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&channel_schema()).unwrap_or_default();
    text.push('\n');
    text
}
