//! The wire form of a streaming event (`message_update.assistantMessageEvent`), as a host reads
//! it.

use serde::{Deserialize, Serialize};

use crate::types::{AssistantMessage, StopReason, ToolCall};

/// The wire form of an event, as a host reads it: every block step, with its `partial` in the
/// cumulative shape (absent in pi 1.6's delta shape, or when a frame bound dropped it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum WireAssistantMessageEvent {
    #[serde(rename = "start")]
    Start {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<AssistantMessage>,
    },
    #[serde(rename = "text_start", rename_all = "camelCase")]
    TextStart {
        content_index: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<AssistantMessage>,
    },
    #[serde(rename = "text_delta", rename_all = "camelCase")]
    TextDelta {
        content_index: usize,
        delta: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<AssistantMessage>,
    },
    #[serde(rename = "text_end", rename_all = "camelCase")]
    TextEnd {
        content_index: usize,
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<AssistantMessage>,
    },
    #[serde(rename = "thinking_start", rename_all = "camelCase")]
    ThinkingStart {
        content_index: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<AssistantMessage>,
    },
    #[serde(rename = "thinking_delta", rename_all = "camelCase")]
    ThinkingDelta {
        content_index: usize,
        delta: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<AssistantMessage>,
    },
    #[serde(rename = "thinking_end", rename_all = "camelCase")]
    ThinkingEnd {
        content_index: usize,
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<AssistantMessage>,
    },
    #[serde(rename = "toolcall_start", rename_all = "camelCase")]
    ToolCallStart {
        content_index: usize,
        /// pi 1.6: the call's id and tool name (absent from older agents).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<AssistantMessage>,
    },
    #[serde(rename = "toolcall_delta", rename_all = "camelCase")]
    ToolCallDelta {
        content_index: usize,
        delta: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<AssistantMessage>,
    },
    #[serde(rename = "toolcall_end", rename_all = "camelCase")]
    ToolCallEnd {
        content_index: usize,
        tool_call: WireToolCall,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<AssistantMessage>,
    },
    #[serde(rename = "done")]
    Done { reason: StopReason, message: AssistantMessage },
    #[serde(rename = "error")]
    Error { reason: StopReason, error: AssistantMessage },
}

/// `toolcall_end.toolCall`: a tool-call content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "toolCall")]
pub struct WireToolCall {
    #[serde(flatten)]
    pub call: ToolCall,
}
