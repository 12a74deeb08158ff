//! Builders for the messages and session entries the compaction tests work on.

use rho_session::{
    BranchSummaryEntry, CompactionEntry, CustomMessageEntry, EntryId, LabelEntry, MessageEntry, ModelChangeEntry,
    SessionEntry,
};
use rho_types::types::{
    AssistantContent, AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserContent, UserMessage,
    UserMessageContent,
};
use rho_types::{AgentMessage, BashExecutionMessage};
use serde_json::{Map, Value};

pub(crate) fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: UserMessageContent::Blocks(vec![UserContent::text(text)]),
        synthetic: None,
        attribution: None,
        timestamp: 1,
    })
}

pub(crate) fn assistant(content: Vec<AssistantContent>) -> AssistantMessage {
    let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "m");
    a.content = content;
    a.timestamp = 2;
    a
}

pub(crate) fn assistant_text(text: &str) -> AgentMessage {
    AgentMessage::Assistant(assistant(vec![AssistantContent::Text(TextContent::new(text))]))
}

pub(crate) fn assistant_calls(calls: Vec<AssistantContent>) -> AgentMessage {
    AgentMessage::Assistant(assistant(calls))
}

pub(crate) fn tool_call(name: &str, args: Value) -> AssistantContent {
    let arguments: Map<String, Value> = match args {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    AssistantContent::ToolCall(ToolCall {
        id: format!("call_{name}"),
        name: name.into(),
        arguments,
        thought_signature: None,
        intent: None,
    })
}

pub(crate) fn tool_result(text: &str) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: "call".into(),
        tool_name: "read".into(),
        content: vec![UserContent::text(text)],
        details: None,
        is_error: false,
        is_warning: None,
        timestamp: 3,
    })
}

pub(crate) fn bash(command: &str, output: &str) -> AgentMessage {
    AgentMessage::BashExecution(BashExecutionMessage {
        command: command.into(),
        output: output.into(),
        exit_code: Some(0),
        cancelled: false,
        truncated: false,
        full_output_path: None,
        timestamp: 4,
        exclude_from_context: None,
    })
}

const TS: &str = "2026-03-15T10:00:00.000Z";

pub(crate) fn message(id: &str, message: AgentMessage) -> SessionEntry {
    SessionEntry::Message(MessageEntry { id: EntryId::new(id), parent_id: None, timestamp: TS.into(), message })
}

pub(crate) fn model_change(id: &str) -> SessionEntry {
    SessionEntry::ModelChange(ModelChangeEntry {
        id: EntryId::new(id),
        parent_id: None,
        timestamp: TS.into(),
        provider: "anthropic".into(),
        model_id: "m".into(),
    })
}

pub(crate) fn label(id: &str, target: &str) -> SessionEntry {
    SessionEntry::Label(LabelEntry {
        id: EntryId::new(id),
        parent_id: None,
        timestamp: TS.into(),
        target_id: EntryId::new(target),
        label: Some("mark".into()),
    })
}

pub(crate) fn compaction(id: &str, summary: &str, first_kept: &str, details: Option<Value>) -> SessionEntry {
    SessionEntry::Compaction(CompactionEntry {
        id: EntryId::new(id),
        parent_id: None,
        timestamp: TS.into(),
        summary: summary.into(),
        first_kept_entry_id: Some(EntryId::new(first_kept)),
        tokens_before: 1234,
        system_message: None,
        details,
        from_hook: None,
        short_summary: None,
        preserve_data: None,
    })
}

pub(crate) fn custom_message(id: &str, text: &str) -> SessionEntry {
    SessionEntry::CustomMessage(CustomMessageEntry {
        custom_type: "note".into(),
        content: UserMessageContent::Text(text.into()),
        display: true,
        details: None,
        attribution: None,
        id: EntryId::new(id),
        parent_id: None,
        timestamp: TS.into(),
    })
}

pub(crate) fn branch_summary(id: &str, summary: &str, details: Option<Value>) -> SessionEntry {
    SessionEntry::BranchSummary(BranchSummaryEntry {
        id: EntryId::new(id),
        parent_id: None,
        timestamp: TS.into(),
        from_id: "root".into(),
        summary: summary.into(),
        details,
        from_hook: None,
    })
}

/// `n` characters of filler: `n / 4` estimated tokens.
pub(crate) fn filler(n: usize) -> String {
    "x".repeat(n)
}

pub(crate) fn refs(entries: &[SessionEntry]) -> Vec<&SessionEntry> {
    entries.iter().collect()
}
