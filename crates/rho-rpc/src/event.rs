//! Outbound events. Agent events (`agent_start` … `tool_execution_end`) are rho-agent's
//! `AgentEvent`; the session-level events below are AgentSession's own (compaction, retry,
//! todos, TTSR, sub-agents, budgets, pi 0.73's additions). [`Event`] is their union as a host
//! reads it.

use rho_types::AgentToolResult;
use rho_types::WireAssistantMessageEvent;
use rho_types::message::AgentMessage;
use rho_types::types::{AssistantMessage, ToolResultMessage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::frames::NotifyType;
use crate::types::{
    AvailableCommand, BudgetScope, BudgetSnapshot, CompactionResult, SubagentLifecycle, TodoReminderItem, TtsrRule,
    VerificationEndStatus, VerificationResult,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompactionReason {
    Manual,
    Threshold,
    Overflow,
    Idle,
}

/// Events AgentSession adds to the agent's, keys in the reference order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum SessionEvent {
    AutoCompactionStart {
        reason: CompactionReason,
        action: String,
    },
    AutoCompactionEnd {
        action: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<CompactionResult>,
        aborted: bool,
        will_retry: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        skipped: Option<bool>,
    },
    /// pi 0.73: every compaction, manual ones included.
    CompactionStart {
        reason: CompactionReason,
    },
    /// pi 0.73: `result` is `null` when there is none.
    CompactionEnd {
        reason: CompactionReason,
        result: Option<CompactionResult>,
        aborted: bool,
        will_retry: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
    AutoRetryStart {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    AutoRetryEnd {
        success: bool,
        attempt: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        final_error: Option<String>,
    },
    TtsrTriggered {
        rules: Vec<TtsrRule>,
    },
    TodoReminder {
        todos: Vec<TodoReminderItem>,
        attempt: u32,
        max_attempts: u32,
    },
    TodoAutoClear,
    /// pi 0.73: the session's name changed.
    SessionInfoChanged {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    SubagentStart {
        id: String,
        agent: String,
        isolated: bool,
    },
    SubagentEnd {
        id: String,
        agent: String,
        exit_code: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verification: Option<VerificationResult>,
    },
    SubagentVerificationStart {
        id: String,
        attempt: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<String>,
    },
    SubagentVerificationCommandStart {
        id: String,
        attempt: u32,
        command_name: String,
    },
    SubagentVerificationCommandEnd {
        id: String,
        attempt: u32,
        command_name: String,
        exit_code: i32,
        duration_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        artifact_id: Option<String>,
    },
    SubagentVerificationEnd {
        id: String,
        attempt: u32,
        status: VerificationEndStatus,
    },
    BudgetWarning {
        scope: BudgetScope,
        snapshot: BudgetSnapshot,
    },
    BudgetExceeded {
        scope: BudgetScope,
        snapshot: BudgetSnapshot,
    },
    /// omp: something the host should show (a failed session write, a setting that does
    /// nothing for this model).
    Notice {
        level: NotifyType,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<String>,
    },
    /// The effective thinking level changed: pi names it `level`, omp `thinkingLevel`; both
    /// are written.
    ThinkingLevelChanged {
        level: String,
        thinking_level: String,
    },
    /// omp: the model changed (the host reads `get_state` for it).
    ModelChanged,
    /// omp: the slash commands a prompt may start with changed.
    AvailableCommandsUpdate {
        commands: Vec<AvailableCommand>,
    },
    /// omp: a task sub-agent started or ended (written when the host subscribed).
    SubagentLifecycle {
        payload: SubagentLifecycle,
    },
    /// omp: what a built-in slash command sent as a `prompt` says (its result, usage or error).
    CommandOutput {
        text: String,
    },
    /// omp: a built-in slash command changed the session's title (or its model): the title and
    /// the session's id.
    SessionInfoUpdate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        session_id: String,
    },
    /// omp: a built-in slash command changed the model: the model and the thinking level.
    ConfigUpdate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Value>")]
        model: Option<Box<rho_types::model::Model>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<String>")]
        thinking_level: Option<rho_types::model::ThinkingLevel>,
    },
    /// omp: a `prompt` that ran no agent turn (a built-in slash command) is over; `id` is the
    /// prompt's.
    PromptResult {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
        agent_invoked: bool,
    },
    /// pi 1.6: rho will not go on by itself (no retry, compaction, queued message or reminder
    /// follows): the prompt's run is over. `aborted` when an abort ended it.
    AgentSettled {
        aborted: bool,
    },
    /// pi 1.6: output of an RPC `bash` command as it comes, with that command's `id`.
    BashExecutionUpdate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
        delta: String,
    },
    /// pi 1.6: a summary request (compaction, branch summary) failed and is tried again.
    SummarizationRetryScheduled {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    /// pi 1.6: the retried summary request starts (`source`: `compaction` or `branchSummary`).
    SummarizationRetryAttemptStart {
        source: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<CompactionReason>,
    },
    /// pi 1.6: the summary retries are over (it succeeded, failed or was cancelled).
    SummarizationRetryFinished,
    /// pi 1.6: an extension appended an entry to the session (`pi.appendEntry()`).
    EntryAppended {
        entry: Value,
    },
    /// omp: a task sub-agent's progress changed (written when the host subscribed): `{index,
    /// agent, agentSource, task, assignment?, progress, sessionFile?}`.
    SubagentProgress {
        payload: Value,
    },
    /// omp: an event of a task sub-agent's run (written when the host subscribed to `events`):
    /// `{id, index, agent, agentSource, task, assignment?, event}`.
    SubagentEvent {
        payload: Value,
    },
}

impl SessionEvent {
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::AutoCompactionStart { .. } => "auto_compaction_start",
            Self::AutoCompactionEnd { .. } => "auto_compaction_end",
            Self::CompactionStart { .. } => "compaction_start",
            Self::CompactionEnd { .. } => "compaction_end",
            Self::AutoRetryStart { .. } => "auto_retry_start",
            Self::AutoRetryEnd { .. } => "auto_retry_end",
            Self::TtsrTriggered { .. } => "ttsr_triggered",
            Self::TodoReminder { .. } => "todo_reminder",
            Self::TodoAutoClear => "todo_auto_clear",
            Self::SessionInfoChanged { .. } => "session_info_changed",
            Self::SubagentStart { .. } => "subagent_start",
            Self::SubagentEnd { .. } => "subagent_end",
            Self::SubagentVerificationStart { .. } => "subagent_verification_start",
            Self::SubagentVerificationCommandStart { .. } => "subagent_verification_command_start",
            Self::SubagentVerificationCommandEnd { .. } => "subagent_verification_command_end",
            Self::SubagentVerificationEnd { .. } => "subagent_verification_end",
            Self::BudgetWarning { .. } => "budget_warning",
            Self::BudgetExceeded { .. } => "budget_exceeded",
            Self::Notice { .. } => "notice",
            Self::ThinkingLevelChanged { .. } => "thinking_level_changed",
            Self::ModelChanged => "model_changed",
            Self::AvailableCommandsUpdate { .. } => "available_commands_update",
            Self::SubagentLifecycle { .. } => "subagent_lifecycle",
            Self::CommandOutput { .. } => "command_output",
            Self::SessionInfoUpdate { .. } => "session_info_update",
            Self::ConfigUpdate { .. } => "config_update",
            Self::PromptResult { .. } => "prompt_result",
            Self::AgentSettled { .. } => "agent_settled",
            Self::BashExecutionUpdate { .. } => "bash_execution_update",
            Self::SummarizationRetryScheduled { .. } => "summarization_retry_scheduled",
            Self::SummarizationRetryAttemptStart { .. } => "summarization_retry_attempt_start",
            Self::SummarizationRetryFinished => "summarization_retry_finished",
            Self::EntryAppended { .. } => "entry_appended",
            Self::SubagentProgress { .. } => "subagent_progress",
            Self::SubagentEvent { .. } => "subagent_event",
        }
    }
}

/// An agent event as a host reads it (the client side of rho-agent's `AgentEvent`).
// One value per frame read, moved rather than stored in bulk: boxing the message variants would
// only make hosts' pattern matching clumsier.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum AgentFrameEvent {
    AgentStart,
    AgentEnd {
        #[schemars(with = "Vec<Value>")]
        messages: Vec<AgentMessage>,
        /// pi 1.6: an automatic retry of this run's failed reply follows.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        will_retry: Option<bool>,
        /// False when the prompt goes on with another run before it settles (an automatic
        /// retry, a continuation after compaction, a todo reminder, injected rules); absent
        /// from agents that do not say (pi).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_terminal: Option<bool>,
        /// Set when the frame bound dropped older messages (docs/decisions.md D17).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_count: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        truncated: Option<bool>,
    },
    TurnStart,
    TurnEnd {
        #[schemars(with = "Value")]
        message: AgentMessage,
        #[schemars(with = "Vec<Value>")]
        tool_results: Vec<ToolResultMessage>,
    },
    MessageStart {
        #[schemars(with = "Value")]
        message: AgentMessage,
    },
    MessageUpdate {
        /// pi 1.6: the reply's usage as the provider reported it so far.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Value>")]
        usage: Option<rho_types::types::Usage>,
        #[schemars(with = "Value")]
        assistant_message_event: WireAssistantMessageEvent,
        /// Absent when the frame bound dropped the partial message (docs/decisions.md D17).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Value>")]
        message: Option<AssistantMessage>,
    },
    MessageEnd {
        #[schemars(with = "Value")]
        message: AgentMessage,
    },
    ToolExecutionStart {
        tool_call_id: String,
        tool_name: String,
        args: Map<String, Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intent: Option<String>,
    },
    ToolExecutionUpdate {
        tool_call_id: String,
        tool_name: String,
        args: Map<String, Value>,
        #[schemars(with = "Value")]
        partial_result: AgentToolResult,
    },
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        #[schemars(with = "Value")]
        result: AgentToolResult,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_warning: Option<bool>,
        /// pi 1.6: how long the tool ran, in milliseconds (absent when it did not run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
    QueueUpdate {
        steering: Vec<String>,
        follow_up: Vec<String>,
    },
}

/// Every event a host may read.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Event {
    Agent(AgentFrameEvent),
    Session(SessionEvent),
}
