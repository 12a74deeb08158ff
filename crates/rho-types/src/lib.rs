//! The types every layer of rho shares, with serde only: the conversation (messages, content
//! blocks, usage and cost), models and thinking levels, the agent's message roles and queue
//! modes, tool results and the wire form of streaming events, serialized exactly as the
//! pi-family protocol writes them. The session store and the RPC protocol depend on this crate,
//! not on the agent loop or the providers.
#![deny(clippy::print_stdout)]

pub mod json;
pub mod message;
pub mod model;
pub mod model_limits;
pub mod queue;
pub mod system;
pub mod text;
pub mod tool_result;
pub mod types;
pub mod wire_event;

pub use message::{
    AgentMessage, BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage, convert_to_llm,
};
pub use model::{InputKind, Model, ThinkingLevel};
pub use queue::{InterruptMode, MessageQueue, QueueMode};
pub use system::{SystemMessage, SystemPrompt, ToolDeclaration, current_system_message, declare_changes};
pub use text::Text;
pub use tool_result::AgentToolResult;
pub use wire_event::{WireAssistantMessageEvent, WireToolCall};
