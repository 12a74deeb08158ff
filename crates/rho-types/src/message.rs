//! The messages of a conversation as the agent keeps them: what the model sees (user,
//! assistant, tool results) plus the application roles (bash executions run by the user,
//! custom and developer messages, branch and compaction summaries, the declared system prompt),
//! and their conversion to what a provider is sent.

use crate::system::SystemMessage;
use crate::types::{
    AssistantMessage, Attribution, Message, ToolResultMessage, UserContent, UserMessage, UserMessageContent,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A command the user ran with the RPC `bash` command (or `!cmd`), kept in the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    pub command: String,
    pub output: String,
    /// Absent when the command was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    pub timestamp: i64,
    /// `!!cmd`: recorded but never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_from_context: Option<bool>,
}

/// A message injected by rho or an extension; part of the model's context as user text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    pub custom_type: String,
    pub content: UserMessageContent,
    /// Whether a UI shows it; the model always sees it.
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    pub timestamp: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    pub summary: String,
    pub from_id: String,
    pub timestamp: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_summary: Option<String>,
    pub tokens_before: u64,
    pub timestamp: i64,
}

/// Any message of the conversation, discriminated by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role")]
pub enum AgentMessage {
    #[serde(rename = "user")]
    User(UserMessage),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
    #[serde(rename = "bashExecution")]
    BashExecution(BashExecutionMessage),
    #[serde(rename = "custom")]
    Custom(CustomMessage),
    /// The legacy name of `custom` in old session files.
    #[serde(rename = "hookMessage")]
    HookMessage(CustomMessage),
    #[serde(rename = "branchSummary")]
    BranchSummary(BranchSummaryMessage),
    #[serde(rename = "compactionSummary")]
    CompactionSummary(CompactionSummaryMessage),
    /// A system-injected instruction (e.g. a todo reminder), sent to the model as user text.
    #[serde(rename = "developer")]
    Developer(UserMessage),
    /// The prompt and tools declared to the model (pi 1.6); never sent as a message.
    #[serde(rename = "system")]
    System(SystemMessage),
}

impl AgentMessage {
    pub fn role(&self) -> &'static str {
        match self {
            Self::User(_) => "user",
            Self::Assistant(_) => "assistant",
            Self::ToolResult(_) => "toolResult",
            Self::BashExecution(_) => "bashExecution",
            Self::Custom(_) => "custom",
            Self::HookMessage(_) => "hookMessage",
            Self::BranchSummary(_) => "branchSummary",
            Self::CompactionSummary(_) => "compactionSummary",
            Self::Developer(_) => "developer",
            Self::System(_) => "system",
        }
    }

    pub fn timestamp(&self) -> i64 {
        match self {
            Self::User(m) | Self::Developer(m) => m.timestamp,
            Self::Assistant(m) => m.timestamp,
            Self::ToolResult(m) => m.timestamp,
            Self::BashExecution(m) => m.timestamp,
            Self::Custom(m) | Self::HookMessage(m) => m.timestamp,
            Self::BranchSummary(m) => m.timestamp,
            Self::CompactionSummary(m) => m.timestamp,
            Self::System(m) => m.timestamp,
        }
    }

    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Self::Assistant(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_user(&self) -> Option<&UserMessage> {
        match self {
            Self::User(u) => Some(u),
            _ => None,
        }
    }

    /// What the model is sent for this message, if anything.
    pub fn to_llm(&self) -> Option<Message> {
        let user = |text: String, timestamp: i64| {
            Message::User(UserMessage {
                content: UserMessageContent::Blocks(vec![UserContent::text(text)]),
                synthetic: None,
                attribution: None,
                timestamp,
            })
        };
        match self {
            Self::User(m) => Some(Message::User(m.clone())),
            Self::Assistant(m) => Some(Message::Assistant(m.clone())),
            Self::ToolResult(m) => Some(Message::ToolResult(m.clone())),
            Self::BashExecution(b) => {
                if b.exclude_from_context == Some(true) {
                    None
                } else {
                    Some(user(bash_execution_text(b), b.timestamp))
                }
            }
            Self::Custom(c) | Self::HookMessage(c) => Some(Message::User(UserMessage {
                content: UserMessageContent::Blocks(c.content.clone().into_blocks()),
                synthetic: None,
                attribution: None,
                timestamp: c.timestamp,
            })),
            Self::BranchSummary(s) => Some(user(
                format!(
                    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n{}</summary>",
                    s.summary
                ),
                s.timestamp,
            )),
            Self::CompactionSummary(s) => Some(user(
                format!(
                    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n{}\n</summary>",
                    s.summary
                ),
                s.timestamp,
            )),
            Self::Developer(m) => Some(Message::User(UserMessage {
                content: m.content.clone(),
                synthetic: None,
                attribution: None,
                timestamp: m.timestamp,
            })),
            Self::System(_) => None,
        }
    }
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        match m {
            Message::User(u) => Self::User(u),
            Message::Assistant(a) => Self::Assistant(a),
            Message::ToolResult(t) => Self::ToolResult(t),
        }
    }
}

/// How a user bash execution reads to the model.
pub fn bash_execution_text(b: &BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", b.command);
    if b.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str("```\n");
        text.push_str(&b.output);
        text.push_str("\n```");
    }
    if b.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = b.exit_code.filter(|c| *c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if b.truncated
        && let Some(path) = &b.full_output_path
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

/// The conversation as the model is sent it.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages.iter().filter_map(AgentMessage::to_llm).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roles_round_trip() {
        let raw = json!([
            {"role":"user","content":[{"type":"text","text":"hi"}],"attribution":"user","timestamp":1},
            {"role":"user","content":"old style","timestamp":2},
            {"role":"bashExecution","command":"ls","output":"a","exitCode":0,"cancelled":false,"truncated":false,"timestamp":3},
            {"role":"custom","customType":"ttsr-injection","content":"rule","display":false,"timestamp":4},
            {"role":"branchSummary","summary":"s","fromId":"abc","timestamp":5},
            {"role":"compactionSummary","summary":"s","tokensBefore":10,"timestamp":6},
            {"role":"developer","content":[{"type":"text","text":"remind"}],"timestamp":7}
        ]);
        let msgs: Vec<AgentMessage> = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(serde_json::to_value(&msgs).unwrap(), raw);
    }

    #[test]
    fn bash_execution_reads_as_user_text() {
        let b = BashExecutionMessage {
            command: "false".into(),
            output: "boom".into(),
            exit_code: Some(1),
            cancelled: false,
            truncated: false,
            full_output_path: None,
            timestamp: 0,
            exclude_from_context: None,
        };
        assert_eq!(bash_execution_text(&b), "Ran `false`\n```\nboom\n```\n\nCommand exited with code 1");
        let hidden = BashExecutionMessage { exclude_from_context: Some(true), ..b };
        assert!(AgentMessage::BashExecution(hidden).to_llm().is_none());
    }

    #[test]
    fn summaries_wrap_as_the_reference_does() {
        let c = AgentMessage::CompactionSummary(CompactionSummaryMessage {
            summary: "S".into(),
            short_summary: None,
            tokens_before: 1,
            timestamp: 0,
        });
        let Some(Message::User(u)) = c.to_llm() else { panic!() };
        assert!(u.text().ends_with("<summary>\nS\n</summary>"));
    }
}
