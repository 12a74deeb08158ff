//! rho's extension host channel has one description, the types of `rho_extensions::protocol`;
//! the checked-in schema (`host/channel.schema.json`) must equal the one generated from them
//! (`UPDATE_SCHEMA=1` rewrites it after a type changed), and the host's JavaScript must keep to
//! it: a case for every message rho sends, only messages and actions rho reads, and the fields of
//! the state rho sends.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rho_extensions::schema::{channel_schema, channel_schema_text};
use serde_json::{Value, json};

fn host_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("host")
}

fn host_file(name: &str) -> String {
    std::fs::read_to_string(host_dir().join(name)).unwrap()
}

/// Every `host/*.mjs`, concatenated.
fn host_sources() -> String {
    let mut names: Vec<PathBuf> = std::fs::read_dir(host_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mjs"))
        .collect();
    names.sort();
    names.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect::<Vec<_>>().join("\n")
}

/// The tags (`field`'s constant) of the variants of a tagged enum's schema.
fn tags_of(variants: &Value, field: &str) -> BTreeSet<String> {
    variants
        .as_array()
        .unwrap_or_else(|| panic!("not a oneOf: {variants}"))
        .iter()
        .map(|v| {
            let tag = &v["properties"][field];
            tag["const"].as_str().or_else(|| tag["enum"][0].as_str()).unwrap_or_else(|| panic!("{v}")).to_owned()
        })
        .collect()
}

/// The `type` tags of `$defs/<name>`.
fn tags(schema: &Value, name: &str) -> BTreeSet<String> {
    tags_of(&schema["$defs"][name]["oneOf"], "type")
}

/// The `action` tags of the host's `action` message (flattened into it).
fn action_tags(schema: &Value) -> BTreeSet<String> {
    let variants = schema["$defs"]["FromHost"]["oneOf"].as_array().unwrap();
    let action = variants.iter().find(|v| v["properties"]["type"]["const"] == "action").expect("the action message");
    tags_of(&action["oneOf"], "action")
}

fn captures(text: &str, pattern: &str) -> BTreeSet<String> {
    regex::Regex::new(pattern).unwrap().captures_iter(text).map(|c| c[1].to_owned()).collect()
}

#[test]
fn checked_in_schema_matches_the_types() {
    let fresh = channel_schema_text();
    let path = host_dir().join("channel.schema.json");
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| !v.is_empty() && v != "0") {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == fresh,
        "{} is out of date with rho_extensions::protocol. Regenerate it with:\n    \
         UPDATE_SCHEMA=1 cargo nextest run -p rho-extensions --test channel_drift\nand commit the result.",
        path.display()
    );
}

#[test]
fn the_host_has_a_case_for_every_message_rho_sends() {
    let schema = channel_schema();
    let host = host_file("host.mjs");
    let start = host.find("function handle(message) {").expect("the host's dispatch");
    let end = start + host[start..].find("default:").expect("its default case");
    let mut handled = captures(&host[start..end], r#"case "([a-z_]+)":"#);
    // Answers to the host's own requests are taken by the channel.
    let channel = host_file("channel.mjs");
    let receive = channel.find("receive(line) {").expect("the channel's reader");
    let receive = &channel[receive..receive + channel[receive..].find("\n  }\n").unwrap()];
    handled.extend(captures(receive, r#"message\.type === "([a-z_]+)""#));
    assert_eq!(handled, tags(&schema, "ToHost"));
}

#[test]
fn the_host_sends_only_messages_and_actions_rho_reads() {
    let schema = channel_schema();
    let sources = host_sources();
    let sent = captures(&sources, r#"(?:send|request)\(\{\s*type: "([a-z_]+)""#);
    let read = tags(&schema, "FromHost");
    assert!(sent.is_subset(&read), "sent but not read by rho: {:?}", sent.difference(&read).collect::<Vec<_>>());
    assert_eq!(sent, read, "rho reads messages the host never sends");

    let mut actions = captures(&sources, r#"\baction\("([A-Za-z]+)""#);
    actions.extend(captures(&sources, r#"action: "([A-Za-z]+)""#));
    let known = action_tags(&schema);
    assert_eq!(actions, known, "the host's actions and rho's Action differ");
}

#[test]
fn the_hosts_state_has_the_fields_rho_sends() {
    let schema = channel_schema();
    let host = host_file("host.mjs");
    let start = host.find("const state = {").expect("the host's state");
    let end = start + host[start..].find("};").unwrap();
    let fields = captures(&host[start..end], r"(?m)^\s+([a-zA-Z]+):");
    let sent: BTreeSet<String> =
        schema["$defs"]["HostState"]["properties"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(fields, sent);
}

#[test]
fn real_messages_validate_against_the_schema() {
    let schema = channel_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let good = [
        json!({"type": "flush", "id": "r1"}),
        json!({"type": "event", "id": "r2", "kind": "emit", "event": {"type": "agent_settled", "aborted": false}}),
        json!({"type": "result", "id": "r2", "value": null}),
        json!({"type": "action", "action": "sendMessage", "message": {"customType": "x"}}),
        json!({"type": "error", "extensionPath": "a.ts", "event": "load", "error": "boom"}),
        json!({"type": "route", "id": "r3", "provider": "router", "modelId": "auto", "reason": "user", "thinkingLevel": "low", "messages": []}),
        json!({"type": "action", "action": "registerVirtualModel", "definition": {"provider": "router", "id": "auto", "thinkingLevels": ["low"]}}),
    ];
    for message in good {
        assert!(validator.is_valid(&message), "{message}");
    }
    for message in [json!({"type": "no_such_message"}), json!({"type": "action", "action": "noSuchAction"})] {
        assert!(!validator.is_valid(&message), "{message}");
    }
}
