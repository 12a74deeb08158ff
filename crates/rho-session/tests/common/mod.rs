//! Builders and fixture helpers shared by the integration tests: messages of every role, the
//! hand-written pi fixtures under `tests/fixtures/` (copied into a scratch directory before
//! use, so a test never writes to them), and small readers of the lines a session file holds.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use rho_session::{LoadWarning, Session};
use rho_types::types::{
    AssistantContent, AssistantMessage, Cost, StopReason, TextContent, ToolCall, ToolResultMessage, Usage, UserContent,
    UserMessage, UserMessageContent,
};
use rho_types::{AgentMessage, BashExecutionMessage, CustomMessage};
use serde_json::{Map, Value, json};

pub fn user(text: &str, timestamp: i64) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: UserMessageContent::Blocks(vec![UserContent::text(text)]),
        synthetic: None,
        attribution: None,
        timestamp,
    })
}

pub fn usage(input: u64, output: u64, cost_total: f64) -> Usage {
    Usage {
        input,
        output,
        cache_read: 0,
        cache_write: 0,
        total_tokens: input + output,
        premium_requests: None,
        cost: Cost { total: cost_total, ..Cost::default() },
        ..Usage::default()
    }
}

pub fn assistant(text: &str, model: &str, timestamp: i64) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![AssistantContent::Text(TextContent::new(text))],
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: model.into(),
        usage: usage(100, 10, 0.5),
        stop_reason: StopReason::Stop,
        timestamp,
        ..AssistantMessage::empty("", "", "")
    })
}

pub fn assistant_tool_call(call_id: &str, command: &str, timestamp: i64) -> AgentMessage {
    let mut args = Map::new();
    args.insert("command".into(), Value::String(command.into()));
    AgentMessage::Assistant(AssistantMessage {
        content: vec![AssistantContent::ToolCall(ToolCall {
            id: call_id.into(),
            name: "bash".into(),
            arguments: args,
            thought_signature: None,
            intent: None,
        })],
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude-opus-4-6".into(),
        usage: usage(1200, 30, 0.00675),
        stop_reason: StopReason::ToolUse,
        timestamp,
        ..AssistantMessage::empty("", "", "")
    })
}

pub fn tool_result(call_id: &str, text: &str, timestamp: i64) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: call_id.into(),
        tool_name: "bash".into(),
        content: vec![UserContent::text(text)],
        details: None,
        is_error: false,
        is_warning: None,
        timestamp,
    })
}

pub fn bash_execution(command: &str, timestamp: i64) -> AgentMessage {
    AgentMessage::BashExecution(BashExecutionMessage {
        command: command.into(),
        output: "ok".into(),
        exit_code: Some(0),
        cancelled: false,
        truncated: false,
        full_output_path: None,
        timestamp,
        exclude_from_context: None,
    })
}

pub fn custom(custom_type: &str, text: &str, timestamp: i64) -> CustomMessage {
    CustomMessage {
        custom_type: custom_type.into(),
        content: UserMessageContent::Text(text.into()),
        display: true,
        details: Some(json!({"k": 1})),
        attribution: None,
        timestamp,
    }
}

pub fn developer(text: &str, timestamp: i64) -> AgentMessage {
    AgentMessage::Developer(UserMessage {
        content: UserMessageContent::Blocks(vec![UserContent::text(text)]),
        synthetic: None,
        attribution: None,
        timestamp,
    })
}

/// The lines of a file (without their newlines).
pub fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().map(str::to_owned).collect()
}

/// A parsed line of a file.
pub fn line_json(path: &std::path::Path, index: usize) -> Value {
    serde_json::from_str(&lines(path)[index]).unwrap()
}

/// The directory of the hand-written fixtures.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures")
}

/// The lines of the fixture `name`, without their newlines.
pub fn fixture_lines(name: &str) -> Vec<String> {
    lines(&fixtures_dir().join(name))
}

/// Copies the fixture `name` into `dir` (under the same name) and returns the copy's path.
pub fn fixture_copy(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(fixtures_dir().join(name), &to).unwrap();
    to
}

/// Opens `path`, failing the test on an error.
pub fn open(path: &Path) -> (Session, Vec<LoadWarning>) {
    Session::open(path).unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()))
}

/// Opens `path` and asserts that loading it produced no warning.
pub fn open_clean(path: &Path) -> Session {
    let (session, warnings) = open(path);
    assert!(warnings.is_empty(), "unexpected warnings: {warnings:?}");
    session
}

/// A new session file `s.jsonl` in `dir` for the cwd `/home/me/proj`.
pub fn new_session(dir: &Path) -> Session {
    Session::create_at(&dir.join("s.jsonl"), Path::new("/home/me/proj"), None).unwrap()
}

/// The top-level keys of a JSON object line, in the order they appear.
pub fn keys(line: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(line).unwrap();
    value.as_object().unwrap().keys().cloned().collect()
}

/// The keys of the `message` object of a `message` entry line, in order.
pub fn message_keys(line: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(line).unwrap();
    value["message"].as_object().unwrap().keys().cloned().collect()
}

/// The raw bytes of a file.
pub fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// The names of the files in `dir`, sorted.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// The text of a user, custom or assistant message (for compact assertions on a context).
pub fn text_of(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(u) | AgentMessage::Developer(u) => u.content.text_joined(""),
        AgentMessage::Assistant(a) => a.text(),
        AgentMessage::ToolResult(t) => t.text(),
        AgentMessage::Custom(c) | AgentMessage::HookMessage(c) => c.content.text_joined(""),
        AgentMessage::BashExecution(b) => b.command.clone(),
        AgentMessage::BranchSummary(b) => b.summary.clone(),
        AgentMessage::CompactionSummary(c) => c.summary.clone(),
        AgentMessage::System(s) => s.summary(),
    }
}

/// `role:text` of every message, for comparing a rebuilt context in one assertion.
pub fn summary_of(messages: &[AgentMessage]) -> Vec<String> {
    messages.iter().map(|m| format!("{}:{}", m.role(), text_of(m))).collect()
}
