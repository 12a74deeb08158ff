//! rho's agent loop: a conversation, a model and a set of tools, driven turn by turn. It streams
//! the model's reply, runs the tool calls (concurrently, writes to one file in order), takes
//! steering and follow-up messages from its queues and stops cleanly on abort. Pure logic over
//! rho-ai and the [`Tool`] trait: no files, no processes.
#![deny(clippy::print_stdout)]

pub mod event;
pub mod message;
pub mod tool;

pub use event::{AgentEvent, AgentEventSink};
pub use message::{
    AgentMessage, BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage,
    CustomMessage,
};
pub use tool::{AgentToolResult, Tool, ToolContext, ToolError};
