//! Response frames (`{"type":"response",...}`) and the data payloads of each command.
//!
//! Keys in order: `id`, `type`, `command`, `success`, then `data` or `error`. `data` is absent
//! for commands without a payload and an explicit `null` where docs/protocol.md says so.

use rho_types::message::AgentMessage;
use rho_types::model::{Model, ThinkingLevel};
use schemars::JsonSchema;
use serde::de::Deserializer;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::command::PARSE_ERROR_PREFIX;
use crate::types::{RpcSlashCommand, TodoPhase};

/// One response frame.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct RpcResponse {
    /// Echoed verbatim from the command, when it had one (`Some(Value::Null)` for `"id":null`).
    #[serde(default, deserialize_with = "present_or_null")]
    pub id: Option<Value>,
    /// The command's `type`; absent only for `Unknown command: undefined`.
    #[serde(default)]
    pub command: Option<String>,
    pub success: bool,
    /// `None`: no `data` key. `Some(Value::Null)`: `"data":null`.
    #[serde(default, deserialize_with = "present_or_null")]
    pub data: Option<Value>,
    #[serde(default)]
    pub error: Option<String>,
    /// omp: a machine-readable reason beside `error` (`session_busy`, `stale_cursor`).
    #[serde(default)]
    pub code: Option<String>,
}

/// Reads a present key as `Some`, `null` included (serde's `Option` would make it `None`).
pub(crate) fn present_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl Serialize for RpcResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        if let Some(id) = &self.id {
            map.serialize_entry("id", id)?;
        }
        map.serialize_entry("type", "response")?;
        if let Some(command) = &self.command {
            map.serialize_entry("command", command)?;
        }
        map.serialize_entry("success", &self.success)?;
        if self.success {
            if let Some(data) = &self.data {
                map.serialize_entry("data", data)?;
            }
        } else {
            map.serialize_entry("error", self.error.as_deref().unwrap_or(""))?;
            if let Some(code) = &self.code {
                map.serialize_entry("code", code)?;
            }
        }
        map.end()
    }
}

impl RpcResponse {
    /// Success without a payload.
    pub fn ok(id: Option<Value>, command: impl Into<String>) -> Self {
        Self { id, command: Some(command.into()), success: true, data: None, error: None, code: None }
    }

    /// Success with a payload (`Value::Null` gives `"data":null`).
    pub fn with_data(id: Option<Value>, command: impl Into<String>, data: Value) -> Self {
        Self { id, command: Some(command.into()), success: true, data: Some(data), error: None, code: None }
    }

    /// Success with a typed payload.
    pub fn with<T: Serialize>(id: Option<Value>, command: impl Into<String>, data: &T) -> Self {
        let command = command.into();
        match serde_json::to_value(data) {
            Ok(v) => Self::with_data(id, command, v),
            Err(e) => Self::error(id, command, format!("Failed to serialize response: {e}")),
        }
    }

    pub fn error(id: Option<Value>, command: impl Into<String>, error: impl Into<String>) -> Self {
        Self { id, command: Some(command.into()), success: false, data: None, error: Some(error.into()), code: None }
    }

    /// The answer to a line that is not a command: `command:"parse"`, no id.
    pub fn parse_error(message: String) -> Self {
        Self {
            id: None,
            command: Some("parse".into()),
            success: false,
            data: None,
            error: Some(format!("{PARSE_ERROR_PREFIX}{message}")),
            code: None,
        }
    }

    /// A failure with omp's machine-readable `code`.
    pub fn error_with_code(
        id: Option<Value>,
        command: impl Into<String>,
        error: impl Into<String>,
        code: impl Into<String>,
    ) -> Self {
        Self { code: Some(code.into()), ..Self::error(id, command, error) }
    }

    /// `Unknown command: <type>` (`undefined`, without `command`, when there is no type).
    pub fn unknown(id: Option<Value>, ty: Option<String>) -> Self {
        let error = format!("Unknown command: {}", ty.as_deref().unwrap_or("undefined"));
        Self { id, command: ty, success: false, data: None, error: Some(error), code: None }
    }
}

/// `get_state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RpcSessionState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Value>")]
    pub model: Option<Model>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub thinking_level: Option<ThinkingLevel>,
    pub is_streaming: bool,
    pub is_compacting: bool,
    pub steering_mode: String,
    pub follow_up_mode: String,
    pub interrupt_mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_name: Option<String>,
    pub auto_compaction_enabled: bool,
    pub message_count: usize,
    pub queued_message_count: usize,
    /// pi's name for `queuedMessageCount` (docs/decisions.md D14).
    pub pending_message_count: usize,
    pub todo_phases: Vec<TodoPhase>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dump_tools: Option<Vec<DumpTool>>,
    /// omp: the priority service tier is asked for / actually in use.
    pub fast_mode_enabled: bool,
    pub fast_mode_active: bool,
    /// omp: output tokens per second of the last reply (`null` when unknown).
    pub tokens_per_second: Option<f64>,
    /// How full the context window is (pi 0.73's shape; absent without a window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Value>")]
    pub context_usage: Option<rho_types::types::ContextUsage>,
    /// rho: the configured MCP servers and their status (absent when none is configured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<crate::types::McpServerInfo>>,
    /// rho: the sandbox the model's commands and writes are confined to (absent with full access,
    /// pi's behaviour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxState>,
}

/// `get_state.sandbox`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxState {
    /// `read-only` or `workspace-write`.
    pub mode: String,
    /// Where commands and the write/edit tools may write (empty in read-only).
    pub writable_roots: Vec<String>,
    /// Whether commands may use the network.
    pub network: bool,
}

/// An active tool as `get_state.dumpTools` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DumpTool {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CancelledData {
    pub cancelled: bool,
}

/// What happened to a submitted `prompt`, `steer` or `follow_up` (pi 1.6's `disposition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Disposition {
    /// A run started for it.
    Started,
    /// It waits on the steering or follow-up queue of the run streaming now.
    Queued,
    /// A command or an input handler took it: no run started for it.
    Handled,
}

/// `prompt`, `steer` and `follow_up`: `{disposition}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DispositionData {
    pub disposition: Disposition,
}

/// `clear_queue`: the texts that were queued.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClearedQueueData {
    pub steering: Vec<String>,
    pub follow_up: Vec<String>,
}

/// `get_available_thinking_levels`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThinkingLevelsData {
    #[schemars(with = "Vec<String>")]
    pub levels: Vec<ThinkingLevel>,
}

/// `get_entries`: session entries as the file holds them, and the current leaf (`null` for an
/// empty session).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntriesData {
    pub entries: Vec<Value>,
    pub leaf_id: Option<String>,
}

/// One node of `get_tree`: an entry, its children (oldest first) and its label, if any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionTreeNode {
    pub entry: Value,
    pub children: Vec<SessionTreeNode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_timestamp: Option<String>,
}

/// `get_tree`: the roots (orphaned entries are roots too) and the current leaf.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeData {
    pub tree: Vec<SessionTreeNode>,
    pub leaf_id: Option<String>,
}

/// `get_available_commands`' answer.
/// omp's answer to a `prompt` that a built-in slash command took: whether a run follows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentInvokedData {
    pub agent_invoked: bool,
    /// pi 1.6's name for the same fact: a built-in command is `handled`.
    pub disposition: Disposition,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AvailableCommandsData {
    pub commands: Vec<crate::types::AvailableCommand>,
}

/// A page of `get_messages_page`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessagesPageData {
    #[schemars(with = "Vec<Value>")]
    pub messages: Vec<rho_types::AgentMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    pub total_messages: usize,
}

/// `set_fast_mode`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FastModeData {
    pub enabled: bool,
    pub active: bool,
}

/// `set_subagent_subscription`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SubagentSubscriptionData {
    pub level: String,
}

/// `get_subagents`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SubagentsData {
    pub subagents: Vec<crate::types::SubagentSnapshot>,
}

/// `get_subagent_messages`' answer: the entries between `fromByte` and `nextByte`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubagentMessagesData {
    pub session_file: String,
    pub from_byte: u64,
    pub next_byte: u64,
    pub reset: bool,
    pub entries: Vec<Value>,
    pub messages: Vec<Value>,
}

/// `get_login_providers`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoginProvidersData {
    pub providers: Vec<crate::types::LoginProvider>,
}

/// `negotiate_protocol`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProtocolData {
    pub protocol_version: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TodoPhasesData {
    pub todo_phases: Vec<TodoPhase>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolNamesData {
    pub tool_names: Vec<String>,
}

/// `cycle_model` (the response data is `null` when there is nothing to cycle to).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CycleModelData {
    #[schemars(with = "Value")]
    pub model: Model,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub thinking_level: Option<ThinkingLevel>,
    pub is_scoped: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelsData {
    #[schemars(with = "Vec<Value>")]
    pub models: Vec<Model>,
}

/// `cycle_thinking_level` (`null` when the model has no reasoning).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LevelData {
    #[schemars(with = "String")]
    pub level: ThinkingLevel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PathData {
    pub path: String,
}

/// `branch` / `fork`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BranchData {
    pub text: String,
    pub cancelled: bool,
}

/// What a rewind did to the files (or, previewed, would do), by path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RewindFiles {
    /// Put back.
    pub restored: Vec<String>,
    /// Changed outside rho since rho wrote them: left as they are (unless forced).
    pub changed_outside: Vec<String>,
    /// Their earlier content was not kept.
    pub not_kept: Vec<String>,
    /// Could not be written, and why.
    pub failed: Vec<RewindFailure>,
}

/// A file a rewind could not write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RewindFailure {
    pub path: String,
    pub error: String,
}

/// `rewind`: what it did to the files, and the message's text when the conversation moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RewindData {
    #[serde(flatten)]
    pub files: RewindFiles,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BranchMessage {
    pub entry_id: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BranchMessagesData {
    pub messages: Vec<BranchMessage>,
}

/// `get_last_assistant_text`: `{}` when there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LastAssistantTextData {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MessagesData {
    #[schemars(with = "Vec<Value>")]
    pub messages: Vec<AgentMessage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandsData {
    pub commands: Vec<RpcSlashCommand>,
}

/// `get_integrations` (xcsh's health probe; rho answers without probing the network).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IntegrationsData {
    pub version: String,
    pub model: IntegrationModel,
    pub services: Vec<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IntegrationModel {
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}
