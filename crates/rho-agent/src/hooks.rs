//! Points in the loop where the application may change what happens (pi's extension hooks): the
//! messages a request is built from (`context`), whether a validated tool call runs and with
//! which arguments (`tool_call`), a call's result (`tool_result`), and a finished message before
//! it is reported (`message_end`), whether a turn that ended asks for one more request
//! (`turn_end`, pi 1.6's actionable boundary), and where a request made with a virtual model goes
//! (`route`, asked whenever the model is virtual). A point is awaited only when
//! [`AgentHooks::wants`] says so, so a loop whose hooks listen to nothing awaits nothing and
//! copies nothing.

use futures::future::BoxFuture;
use rho_types::types::ToolCall;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::message::AgentMessage;
use rho_types::types::{AssistantMessage, ToolResultMessage};
use rho_types::{AgentToolResult, Model, ThinkingLevel};

/// A point in the loop a hook can answer at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookPoint {
    Context,
    ToolCall,
    ToolResult,
    MessageEnd,
    TurnEnd,
}

/// What a `tool_call` hook decided.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCallDecision {
    /// Run the call with these arguments (the hook may have changed them).
    Run(Map<String, Value>),
    /// Do not run it; the reason is the call's error result.
    Block(String),
}

/// A call's outcome as `tool_result` sees and may change it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    pub result: AgentToolResult,
    pub is_error: bool,
}

/// The physical model and level one request made with a virtual model goes to.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub model: Model,
    pub thinking: ThinkingLevel,
}

/// Why a request made with the virtual model `model` cannot be routed when nothing routes it.
pub fn not_registered(model: &Model) -> String {
    format!("Virtual model {} is not registered.", model.selector())
}

/// The application's hooks into the loop. Every method has a pass-through default.
pub trait AgentHooks: Send + Sync {
    /// Whether anything listens at `point`; points nobody listens to are skipped.
    fn wants(&self, point: HookPoint) -> bool;

    /// The messages the next request is built from (a copy: the conversation is not changed).
    fn context<'a>(
        &'a self,
        messages: Vec<AgentMessage>,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Vec<AgentMessage>> {
        Box::pin(async move { messages })
    }

    /// Before a validated call runs: run it (with these arguments) or block it.
    fn tool_call<'a>(
        &'a self,
        _call: &'a ToolCall,
        args: Map<String, Value>,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolCallDecision> {
        Box::pin(async move { ToolCallDecision::Run(args) })
    }

    /// After a call ran: its result, possibly changed.
    fn tool_result<'a>(
        &'a self,
        _call: &'a ToolCall,
        _args: &'a Map<String, Value>,
        outcome: ToolOutcome,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { outcome })
    }

    /// A turn ended: its reply and its tool results are recorded, `turn_end` is not reported
    /// yet. True asks for one more request even when nothing else would make one (the loop
    /// honours it only after a reply that did not fail).
    fn turn_end<'a>(
        &'a self,
        _message: &'a AssistantMessage,
        _tool_results: &'a [ToolResultMessage],
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, bool> {
        Box::pin(async { false })
    }

    /// Where a request made with the virtual model `model` at `thinking` goes, given the
    /// conversation it is made with. An error ends the request as a failed reply.
    fn route<'a>(
        &'a self,
        model: &'a Model,
        _thinking: ThinkingLevel,
        _messages: &'a [AgentMessage],
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Route, String>> {
        Box::pin(async move { Err(not_registered(model)) })
    }

    /// A message that ended, before it is reported and recorded: the same message or a
    /// replacement with the same role.
    fn message_end<'a>(&'a self, message: AgentMessage) -> BoxFuture<'a, AgentMessage> {
        Box::pin(async move { message })
    }
}
