//! The properties every inbound line must have, shared by the proptest suite
//! (`tests/parse_props.rs`) and the libFuzzer target (`fuzz/fuzz_targets/parse_line.rs`):
//! `parse_line` reads it as exactly one well-formed [`Inbound`]; an error answer is one line a
//! host reads back unchanged; an id sent is an id echoed (docs/decisions.md D3); an accepted
//! command survives a write/read round trip. Each check panics with the offending line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rho_rpc::{Inbound, OutFrame, RpcCommand, parse_line};
use serde_json::{Map, Value};

/// The JSON text of a value as rho writes it, for comparisons that must not depend on how a
/// number was spelled (`-0.0` and `0` print the same, as in JavaScript).
pub fn text<T: serde::Serialize>(value: &T) -> String {
    rho_types::json::to_string(value).unwrap()
}

/// Every property a single line must have.
pub fn check_line(line: &[u8]) {
    let inbound = parse_line(line);
    let body = line.strip_suffix(b"\r").unwrap_or(line);
    let parsed = serde_json::from_slice::<Value>(body).ok();
    check_inbound(&inbound, body, parsed.as_ref());
}

pub fn check_inbound(inbound: &Inbound, body: &[u8], parsed: Option<&Value>) {
    let blank = body.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    let ty = parsed.and_then(|v| v.get("type")).and_then(Value::as_str);
    match inbound {
        Inbound::Blank => assert!(blank || ty == Some("extension_ui_response"), "{:?} read as blank", lossy(body)),
        Inbound::UiResponse(r) => assert_eq!(ty, Some("extension_ui_response"), "{r:?}"),
        Inbound::HostToolResult(r) => assert_eq!(
            (ty, parsed.and_then(|v| v.get("id")).and_then(Value::as_str)),
            (Some("host_tool_result"), Some(r.id.as_str()))
        ),
        Inbound::HostToolUpdate(r) => assert_eq!(
            (ty, parsed.and_then(|v| v.get("id")).and_then(Value::as_str)),
            (Some("host_tool_update"), Some(r.id.as_str()))
        ),
        Inbound::HostUriResult(r) => assert_eq!(
            (ty, parsed.and_then(|v| v.get("id")).and_then(Value::as_str)),
            (Some("host_uri_result"), Some(r.id.as_str()))
        ),
        Inbound::Invalid(response) => {
            assert!(!blank);
            assert!(!response.success);
            assert!(response.error.as_deref().is_some_and(|e| !e.is_empty()));
            // The answer is one line, and a host reads it back as the same response.
            let written = text(response);
            assert!(!written.contains('\n'));
            match OutFrame::parse(&written) {
                Ok(OutFrame::Response(back)) => assert_eq!(text(&back), written),
                other => panic!("{written} reads back as {other:?}"),
            }
        }
        Inbound::Command { id, command } => {
            assert_eq!(ty, Some(command.name()));
            round_trip(id.as_ref(), command);
        }
    }
    // docs/decisions.md D3: a JSON object with an id gets that id back on any answer.
    if let Some(Value::Object(map)) = parsed
        && let Some(sent) = map.get("id").filter(|v| !v.is_null())
    {
        let echoed = match inbound {
            Inbound::Invalid(r) => r.id.as_ref(),
            Inbound::Command { id, .. } => id.as_ref(),
            _ => return,
        };
        assert_eq!(echoed.map(text), Some(text(sent)), "id not echoed for {}", lossy(body));
    }
}

/// A command that was accepted is written and read back unchanged.
fn round_trip(id: Option<&Value>, command: &RpcCommand) {
    let mut map = Map::new();
    if let Some(id) = id {
        map.insert("id".into(), id.clone());
    }
    let Value::Object(fields) = serde_json::to_value(command).unwrap() else { panic!("{command:?} is not an object") };
    map.extend(fields);
    let line = text(&map);
    match parse_line(line.as_bytes()) {
        Inbound::Command { id: id2, command: command2 } => {
            assert_eq!(id2.as_ref().map(text), id.map(text));
            assert_eq!(text(&command2), text(command));
        }
        other => panic!("{line} did not read back as a command: {other:?}"),
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
