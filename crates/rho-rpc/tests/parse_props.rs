//! Property tests of the inbound parser (`parse_line` / `parse_value`): on arbitrary bytes,
//! arbitrary JSON values, command-shaped objects and mutated valid commands it never panics and
//! reads every line as exactly one well-formed [`Inbound`]; an id is always echoed on the answer
//! (docs/decisions.md D3); a command it accepts survives a write/read round trip; U+2028 / U+2029
//! inside strings are content, not line ends. The checks live in `support/line_checks.rs`, which
//! the `fuzz/` crate's libFuzzer target runs too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rho_rpc::command::COMMAND_NAMES;
use rho_rpc::{Inbound, RpcCommand, parse_line, parse_value};
use serde_json::{Map, Value, json};

mod support;
use support::line_checks::{check_inbound, check_line, text};

/// Valid command lines, one per shape, to mutate.
const VALID: &[&str] = &[
    r#"{"id":"req_1","type":"prompt","message":"hi","images":[{"type":"image","data":"aGk=","mimeType":"image/png"}],"streamingBehavior":"steer"}"#,
    r#"{"id":"req_2","type":"steer","message":"go left"}"#,
    r#"{"id":"req_3","type":"follow_up","message":"then right"}"#,
    r#"{"id":"req_4","type":"abort"}"#,
    r#"{"id":"req_5","type":"abort_and_prompt","message":"stop"}"#,
    r#"{"id":"req_6","type":"new_session","parentSession":"/tmp/s.jsonl"}"#,
    r#"{"id":"req_7","type":"set_todos","phases":[{"id":"p1","name":"P","tasks":[{"id":"t1","content":"c","status":"pending"}]}]}"#,
    r#"{"id":"req_8","type":"set_host_tools","tools":[{"name":"echo","description":"d","parameters":{"type":"object"}}]}"#,
    r#"{"id":"req_9","type":"set_model","provider":"anthropic","modelId":"claude"}"#,
    r#"{"id":"req_10","type":"set_thinking_level","level":"high"}"#,
    r#"{"id":"req_11","type":"set_steering_mode","mode":"one-at-a-time"}"#,
    r#"{"id":"req_12","type":"set_interrupt_mode","mode":"wait"}"#,
    r#"{"id":"req_13","type":"compact","customInstructions":"short"}"#,
    r#"{"id":"req_14","type":"set_auto_retry","enabled":true}"#,
    r#"{"id":"req_15","type":"bash","command":"ls"}"#,
    r#"{"id":"req_16","type":"export_html","outputPath":"/tmp/x.html"}"#,
    r#"{"id":"req_17","type":"switch_session","sessionPath":"/tmp/s.jsonl"}"#,
    r#"{"id":"req_18","type":"branch","entryId":"e1"}"#,
    r#"{"id":"req_19","type":"set_session_name","name":"n"}"#,
    r#"{"id":"req_20","type":"set_locale","locale":"de"}"#,
    r#"{"id":"req_21","type":"get_state"}"#,
    r#"{"type":"extension_ui_response","id":"u1","value":"x"}"#,
    r#"{"type":"extension_ui_response","id":"u2","cancelled":true,"timedOut":true}"#,
    r#"{"type":"host_tool_result","id":"h1","result":{"content":[{"type":"text","text":"ok"}]},"isError":false}"#,
    r#"{"type":"host_tool_update","id":"h1","partialResult":{"content":[]}}"#,
];

/// Keys the parser looks at, so that generated objects reach its deeper paths.
const KEYS: &[&str] = &[
    "type",
    "id",
    "message",
    "images",
    "streamingBehavior",
    "result",
    "partialResult",
    "content",
    "isError",
    "value",
    "confirmed",
    "cancelled",
    "tools",
    "phases",
    "mode",
    "level",
    "enabled",
    "command",
    "provider",
    "modelId",
    "name",
    "entryId",
];

fn interesting_string() -> impl Strategy<Value = String> {
    let specials = prop_oneof![
        Just('\u{2028}'),
        Just('\u{2029}'),
        Just('\u{0}'),
        Just('"'),
        Just('\\'),
        Just('\r'),
        Just('\u{feff}'),
        Just('\u{10ffff}'),
        any::<char>(),
    ];
    prop_oneof![
        prop::collection::vec(specials, 0..12).prop_map(|c| c.into_iter().collect()),
        prop::sample::select(COMMAND_NAMES).prop_map(str::to_owned),
        prop::sample::select(KEYS).prop_map(str::to_owned),
        Just("extension_ui_response".to_owned()),
        Just("host_tool_result".to_owned()),
        Just("host_tool_update".to_owned()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        interesting_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (prop_oneof![prop::sample::select(KEYS).prop_map(str::to_owned), interesting_string()], inner),
                0..6
            )
            .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// An object with a `type` the parser knows (mostly), maybe an id, and random known fields.
fn command_shaped() -> impl Strategy<Value = Value> {
    let ty = prop_oneof![
        4 => prop::sample::select(COMMAND_NAMES).prop_map(|s| json!(s)),
        1 => prop::sample::select(&["extension_ui_response", "host_tool_result", "host_tool_update"][..]).prop_map(|s| json!(s)),
        1 => json_value(),
    ];
    let id = prop_oneof![Just(None), interesting_string().prop_map(|s| Some(json!(s))), json_value().prop_map(Some)];
    let fields = prop::collection::vec((prop::sample::select(KEYS), json_value()), 0..5);
    (ty, id, fields).prop_map(|(ty, id, fields)| {
        let mut map = Map::new();
        for (k, v) in fields {
            map.insert(k.to_owned(), v);
        }
        map.insert("type".into(), ty);
        if let Some(id) = id {
            map.insert("id".into(), id);
        }
        Value::Object(map)
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Remove(prop::sample::Index, usize),
    Insert(prop::sample::Index, Vec<u8>),
    Flip(prop::sample::Index, u8),
    SetField(prop::sample::Index, Value),
    DropField(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<prop::sample::Index>(), 1..8usize).prop_map(|(i, n)| Mutation::Remove(i, n)),
        (any::<prop::sample::Index>(), prop::collection::vec(any::<u8>(), 1..6))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<prop::sample::Index>(), json_value()).prop_map(|(i, v)| Mutation::SetField(i, v)),
        any::<prop::sample::Index>().prop_map(Mutation::DropField),
    ]
}

fn mutate(line: &str, mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = line.as_bytes().to_vec();
    for m in mutations {
        match m {
            Mutation::Remove(at, n) if !bytes.is_empty() => {
                let start = at.index(bytes.len());
                let end = (start + n).min(bytes.len());
                bytes.drain(start..end);
            }
            Mutation::Insert(at, new) => {
                let at = at.index(bytes.len() + 1);
                bytes.splice(at..at, new.iter().copied());
            }
            Mutation::Flip(at, b) if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                bytes[at] ^= b | 1;
            }
            Mutation::SetField(at, value) => {
                if let Ok(Value::Object(mut map)) = serde_json::from_slice::<Value>(&bytes) {
                    let key = KEYS[at.index(KEYS.len())];
                    map.insert(key.to_owned(), value.clone());
                    bytes = serde_json::to_vec(&map).unwrap();
                }
            }
            Mutation::DropField(at) => {
                if let Ok(Value::Object(mut map)) = serde_json::from_slice::<Value>(&bytes)
                    && !map.is_empty()
                {
                    let key = map.keys().nth(at.index(map.len())).cloned().unwrap();
                    map.shift_remove(&key);
                    bytes = serde_json::to_vec(&map).unwrap();
                }
            }
            _ => {}
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        // Integration tests have no lib.rs for proptest to find; failures are kept beside
        // this file (the working directory of a test is the package root).
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("tests/parse_props.proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes(line in prop::collection::vec(any::<u8>(), 0..256)) {
        check_line(&line);
    }

    #[test]
    fn arbitrary_json_values(value in json_value(), cr in any::<bool>()) {
        let mut line = serde_json::to_vec(&value).unwrap();
        if cr {
            line.push(b'\r');
        }
        check_line(&line);
        let inbound = parse_value(value.clone());
        check_inbound(&inbound, &serde_json::to_vec(&value).unwrap(), Some(&value));
    }

    #[test]
    fn command_shaped_objects(value in command_shaped()) {
        check_line(&serde_json::to_vec(&value).unwrap());
    }

    #[test]
    fn mutated_valid_commands(
        line in prop::sample::select(VALID),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        check_line(&mutate(line, &mutations));
    }

    #[test]
    fn line_separators_inside_strings_are_content(
        message in prop::collection::vec(prop_oneof![Just('\u{2028}'), Just('\u{2029}'), any::<char>()], 0..24)
            .prop_map(|c| c.into_iter().collect::<String>()),
        escaped in any::<bool>(),
    ) {
        let command = json!({"id": "req_1", "type": "prompt", "message": message});
        let line = if escaped { text(&command) } else { serde_json::to_string(&command).unwrap() };
        match parse_line(line.as_bytes()) {
            Inbound::Command { command: RpcCommand::Prompt { message: read, .. }, .. } => prop_assert_eq!(read, message),
            other => prop_assert!(false, "{} read as {:?}", line, other),
        }
    }
}

#[test]
fn every_valid_sample_is_accepted() {
    for line in VALID {
        let inbound = parse_line(line.as_bytes());
        assert!(!matches!(inbound, Inbound::Invalid(_) | Inbound::Blank), "{line}: {inbound:?}");
        check_line(line.as_bytes());
    }
}
