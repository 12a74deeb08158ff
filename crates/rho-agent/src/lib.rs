//! rho's agent loop: a conversation, a model and a set of tools, driven turn by turn. It streams
//! the model's reply, runs the tool calls (concurrently, writes to one file in order), takes
//! steering and follow-up messages from its queues and stops cleanly on abort. Pure logic over
//! rho-ai and the [`Tool`] trait: no files, no processes.
#![deny(clippy::print_stdout)]

mod agent;
pub mod event;
pub mod hooks;
mod run;
pub mod tool;
mod tool_exec;
pub mod validate;

use rho_types::{message, queue};

pub use agent::{Agent, AgentConfig, AgentError, QueueModes, RequestOptionsFn, resolve_request_options};
pub use event::{AgentEvent, AgentEventSink, Backpressure};
pub use hooks::{AgentHooks, HookPoint, Route, ToolCallDecision, ToolOutcome, not_registered};
pub use tool::{BeforeRequest, FitImages, Tool, ToolContext, ToolError, ToolGate, UpdateSink};
pub use tool_exec::SKIPPED;
