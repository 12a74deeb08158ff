//! What a run reports, in the order the protocol gives: agent, turn, message and tool-execution
//! events. The mode layer forwards them (with session events of its own) to hosts.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rho_ai::event::AssistantMessageEvent;
use rho_types::types::ToolResultMessage;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::Notify;

use crate::message::AgentMessage;
use rho_types::AgentToolResult;

/// One event of a run. `MessageUpdate` carries only the step; the partial message it applies to
/// is rebuilt by whoever writes frames (see `rho_ai::event::PartialMessage`), so it has no
/// serde form of its own. Its steps include the stream's `start` (the response id and input
/// usage known up front), which a frame writer applies but does not forward: only the nine block
/// steps reach the wire (docs/protocol.md, "Streaming updates"). `done` and `error` become
/// `MessageEnd`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    AgentStart,
    AgentEnd {
        messages: Vec<AgentMessage>,
        /// pi 1.6: the application retries this run's failed reply next; the agent's own runs
        /// end false.
        #[serde(rename = "willRetry")]
        will_retry: bool,
        /// False when the application runs the agent again before the prompt settles (a
        /// retry, a continuation after compaction, a reminder); the agent's own runs end true.
        #[serde(rename = "isTerminal")]
        is_terminal: bool,
    },
    TurnStart,
    #[serde(rename_all = "camelCase")]
    TurnEnd {
        message: AgentMessage,
        #[serde(serialize_with = "tool_results_with_role")]
        tool_results: Vec<ToolResultMessage>,
    },
    MessageStart {
        message: AgentMessage,
    },
    #[serde(skip_serializing)]
    MessageUpdate {
        event: AssistantMessageEvent,
    },
    MessageEnd {
        message: AgentMessage,
    },
    #[serde(rename_all = "camelCase")]
    ToolExecutionStart {
        tool_call_id: String,
        tool_name: String,
        args: Map<String, Value>,
    },
    #[serde(rename_all = "camelCase")]
    ToolExecutionUpdate {
        tool_call_id: String,
        tool_name: String,
        args: Map<String, Value>,
        partial_result: AgentToolResult,
    },
    #[serde(rename_all = "camelCase")]
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        result: AgentToolResult,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        is_warning: Option<bool>,
        /// How long the tool ran (absent when it did not run).
        #[serde(skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
    /// Either queue changed (pi 0.73's `queue_update`): the queued messages' texts.
    #[serde(rename_all = "camelCase")]
    QueueUpdate {
        steering: Vec<String>,
        follow_up: Vec<String>,
    },
}

/// Tool results as messages of the conversation (`{"role":"toolResult",…}`).
fn tool_results_with_role<S: serde::Serializer>(results: &[ToolResultMessage], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    #[serde(tag = "role", rename = "toolResult")]
    struct Tagged<'a> {
        #[serde(flatten)]
        message: &'a ToolResultMessage,
    }
    s.collect_seq(results.iter().map(|message| Tagged { message }))
}

impl AgentEvent {
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::AgentStart => "agent_start",
            Self::AgentEnd { .. } => "agent_end",
            Self::TurnStart => "turn_start",
            Self::TurnEnd { .. } => "turn_end",
            Self::MessageStart { .. } => "message_start",
            Self::MessageUpdate { .. } => "message_update",
            Self::MessageEnd { .. } => "message_end",
            Self::ToolExecutionStart { .. } => "tool_execution_start",
            Self::ToolExecutionUpdate { .. } => "tool_execution_update",
            Self::ToolExecutionEnd { .. } => "tool_execution_end",
            Self::QueueUpdate { .. } => "queue_update",
        }
    }
}

/// Receives a run's events, in order, on the run's task. Implementations must not block.
pub trait AgentEventSink: Send + Sync {
    fn emit(&self, event: AgentEvent);

    /// The consumer's back-pressure signal, when it has one: while it is congested the run
    /// takes nothing more from the model (the provider's stream waits in its socket), so a
    /// consumer that stops reading never makes memory grow with the reply.
    fn backpressure(&self) -> Option<Arc<Backpressure>> {
        None
    }

    /// Asked when the run would end (the model stopped, nothing is queued, no abort): true when
    /// the application added to the conversation and the run should take another turn (a
    /// reminder of open tasks), so the run ends once, with one `agent_end`. The default ends it.
    fn carries_on(&self) -> bool {
        false
    }
}

/// Raised by a consumer that has fallen behind, lowered once it has caught up.
#[derive(Debug, Default)]
pub struct Backpressure {
    congested: AtomicBool,
    relieved: Notify,
}

impl Backpressure {
    pub fn set(&self, congested: bool) {
        if self.congested.swap(congested, Ordering::AcqRel) && !congested {
            self.relieved.notify_waiters();
        }
    }

    pub fn is_congested(&self) -> bool {
        self.congested.load(Ordering::Acquire)
    }

    /// Resolves once the consumer is not congested.
    pub async fn relieved(&self) {
        loop {
            let notified = self.relieved.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !self.is_congested() {
                return;
            }
            notified.await;
        }
    }
}

impl<F: Fn(AgentEvent) + Send + Sync> AgentEventSink for F {
    fn emit(&self, event: AgentEvent) {
        self(event)
    }
}
