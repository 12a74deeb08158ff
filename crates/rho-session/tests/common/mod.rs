//! Builders shared by the integration tests.
#![allow(dead_code)]

use rho_agent::{AgentMessage, BashExecutionMessage, CustomMessage};
use rho_ai::types::{
    AssistantContent, AssistantMessage, Cost, StopReason, TextContent, ToolCall,
    ToolResultMessage, Usage, UserContent, UserMessage, UserMessageContent,
};
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
        cost: Cost {
            input: 0.0,
            output: 0.0,
            cache_read: 0.0,
            cache_write: 0.0,
            total: cost_total,
        },
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
        response_id: None,
        error_message: None,
        duration: None,
        ttft: None,
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
        response_id: None,
        error_message: None,
        duration: None,
        ttft: None,
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
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A parsed line of a file.
pub fn line_json(path: &std::path::Path, index: usize) -> Value {
    serde_json::from_str(&lines(path)[index]).unwrap()
}
