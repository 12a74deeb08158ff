//! Random input through the real binary's reader and dispatcher: thousands of lines mixing
//! every command type with random field values (wrong types, nulls, huge and odd strings, nested
//! junk), bare garbage and sub-protocol frames for unknown ids. Every line that carries a string
//! id is answered with it, nothing panics, and the process still answers afterwards.
//!
//! The generator is a fixed-seed xorshift, so a failure reproduces; `RHO_FUZZ_SEED` and
//! `RHO_FUZZ_LINES` vary it. Commands with side effects outside the test's scratch directory
//! (`bash`, `export_html`) are left out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::HashSet;

use common::{Env, Rho};
use serde_json::{Map, Value, json};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Every command except those that reach outside the scratch directory, and one unknown name.
fn commands() -> Vec<&'static str> {
    let mut all: Vec<&str> =
        rho_rpc::command::COMMAND_NAMES.iter().copied().filter(|c| !matches!(*c, "bash" | "export_html")).collect();
    all.push("no_such_command");
    all
}

const FIELDS: &[&str] = &[
    "message",
    "images",
    "streamingBehavior",
    "parentSession",
    "phases",
    "tools",
    "provider",
    "modelId",
    "level",
    "mode",
    "customInstructions",
    "enabled",
    "sessionPath",
    "entryId",
    "name",
    "locale",
    "result",
    "value",
];

fn random_string(rng: &mut Rng) -> String {
    let pieces = [
        "",
        "x",
        "all",
        "wait",
        "immediate",
        "steer",
        "followUp",
        "high",
        "mock",
        "mock-model",
        "\u{2028}",
        "\u{0}",
        "é",
        "🙂",
        "\"",
        "\\",
        "/tmp/nope.jsonl",
        "one-at-a-time",
        "{",
        "\n",
    ];
    (0..rng.below(6)).map(|_| *rng.pick(&pieces)).collect()
}

fn random_value(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth > 2 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.next() as i64),
        3 => json!((rng.next() % 1000) as f64 / 7.0),
        4 | 5 => json!(random_string(rng)),
        6 => Value::Array((0..rng.below(4)).map(|_| random_value(rng, depth + 1)).collect()),
        _ => {
            let mut map = Map::new();
            for _ in 0..rng.below(4) {
                map.insert(rng.pick(FIELDS).to_string(), random_value(rng, depth + 1));
            }
            if rng.below(2) == 0 {
                map.insert("type".into(), json!("text"));
                map.insert("text".into(), json!(random_string(rng)));
            }
            Value::Object(map)
        }
    }
}

fn random_line(rng: &mut Rng, commands: &[&str], n: usize) -> (String, Option<String>) {
    match rng.below(10) {
        0 => (random_string(rng).replace('\n', " "), None),
        1 => {
            let kind = rng.pick(&["extension_ui_response", "host_tool_result", "host_tool_update"]);
            (
                json!({"type": kind, "id": format!("ghost{n}"), "value": "x", "result": {"content": []}}).to_string(),
                None,
            )
        }
        _ => {
            let mut map = Map::new();
            let id = format!("f{n}");
            map.insert("id".into(), json!(id));
            map.insert("type".into(), json!(rng.pick(commands)));
            for _ in 0..rng.below(4) {
                map.insert(rng.pick(FIELDS).to_string(), random_value(rng, 0));
            }
            (Value::Object(map).to_string(), Some(id))
        }
    }
}

#[tokio::test]
async fn random_commands_are_all_answered_and_nothing_breaks() {
    let env = Env::new(vec![]).await;
    let seed = std::env::var("RHO_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x9E37_79B9_7F4A_7C15u64);
    let lines = std::env::var("RHO_FUZZ_LINES").ok().and_then(|s| s.parse().ok()).unwrap_or(3000usize);
    let mut rng = Rng(seed);
    let mut rho = Rho::start(&env, &["--no-session", "--setting", "retry.enabled=false"]).await;
    let mut expected = HashSet::new();
    let mut batch = String::new();
    let commands = commands();
    for n in 0..lines {
        let (line, id) = random_line(&mut rng, &commands, n);
        batch.push_str(&line);
        batch.push('\n');
        expected.extend(id);
    }
    if let Ok(path) = std::env::var("RHO_FUZZ_DUMP") {
        std::fs::write(path, &batch).unwrap();
    }
    rho.send_raw(batch.as_bytes()).await;
    rho.send(json!({"id": "last", "type": "get_state"})).await;
    let frames = rho.until(|f| f["id"] == "last").await;
    let answered: HashSet<String> =
        frames.iter().filter(|f| f["type"] == "response").filter_map(|f| f["id"].as_str().map(str::to_owned)).collect();
    let missing: Vec<&String> = expected.iter().filter(|id| !answered.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "seed {seed}: {} lines never answered, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    assert!(rho.child.try_wait().unwrap().is_none(), "rho is still running");
    rho.close_stdin();
    assert!(rho.wait().await.success());
}
