//! Serving host tools (docs/protocol.md, "Host tool sub-protocol"): each `host_tool_call` runs the
//! handler registered under its tool name in a task of its own, with a cancellation token that
//! fires on `host_tool_cancel` (or when the server goes away); the handler may stream
//! `host_tool_update`s, and its result becomes `host_tool_result` (`isError` for an `Err`).
//!
//! As the reference hosts do: an unknown tool is answered `Host tool "<name>" is not
//! registered`, non-object arguments `Host tool arguments must be an object`, and after a
//! cancel nothing more is sent for that call (the handler's future is dropped).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use rho_types::AgentToolResult;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::error::ClientError;
use super::shared::Shared;
use crate::command::{HostToolResult, HostToolUpdate};
use crate::frames::{HostToolCall, RpcHostToolDefinition};

/// What a host tool returns: a result, or an error message (sent with `isError: true`).
pub type HostToolOutcome = Result<AgentToolResult, String>;

/// Runs host tool calls. Implemented for every
/// `Fn(HostToolCall, HostToolContext) -> impl Future<Output = HostToolOutcome>`.
pub trait HostToolHandler: Send + Sync + 'static {
    fn call(&self, call: HostToolCall, context: HostToolContext) -> BoxFuture<'static, HostToolOutcome>;
}

impl<F, Fut> HostToolHandler for F
where
    F: Fn(HostToolCall, HostToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HostToolOutcome> + Send + 'static,
{
    fn call(&self, call: HostToolCall, context: HostToolContext) -> BoxFuture<'static, HostToolOutcome> {
        Box::pin(self(call, context))
    }
}

/// A tool the host offers the model: its definition (sent with `set_host_tools`) and the
/// handler that runs it.
#[derive(Clone)]
pub struct HostTool {
    pub definition: RpcHostToolDefinition,
    pub handler: Arc<dyn HostToolHandler>,
}

impl std::fmt::Debug for HostTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostTool").field("definition", &self.definition).finish_non_exhaustive()
    }
}

impl HostTool {
    pub fn new(definition: RpcHostToolDefinition, handler: impl HostToolHandler) -> Self {
        Self { definition, handler: Arc::new(handler) }
    }
}

/// What a running host tool call can do besides returning: watch for cancellation and send
/// progress.
#[derive(Clone)]
pub struct HostToolContext {
    id: String,
    cancel: CancellationToken,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for HostToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostToolContext").field("id", &self.id).finish_non_exhaustive()
    }
}

impl HostToolContext {
    /// The `host_tool_call` id this context answers.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Fires on `host_tool_cancel` for this call, or when the server goes away.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Sends a `host_tool_update` (shown as `tool_execution_update`). Does nothing once the
    /// call is cancelled.
    pub async fn update(&self, partial: AgentToolResult) -> Result<(), ClientError> {
        if self.cancel.is_cancelled() {
            return Ok(());
        }
        let frame = HostToolUpdate { id: self.id.clone(), partial_result: to_object(&partial)? };
        self.shared.write_frame(&Tagged { kind: "host_tool_update", frame: &frame }).await
    }
}

/// A reply frame with its `type` first (the reply structs leave the tag to the parser).
#[derive(Serialize)]
pub(crate) struct Tagged<'a, T> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    #[serde(flatten)]
    pub(crate) frame: &'a T,
}

fn to_object(result: &AgentToolResult) -> Result<Map<String, Value>, ClientError> {
    match serde_json::to_value(result)? {
        Value::Object(map) => Ok(map),
        _ => Err(ClientError::Protocol("a tool result must serialize as an object".into())),
    }
}

fn error_result(message: &str) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("content".into(), serde_json::json!([{ "type": "text", "text": message }]));
    map
}

/// Starts serving one call.
pub(crate) fn serve(shared: &Arc<Shared>, call: HostToolCall) {
    let token = shared.gone.child_token();
    shared.host_calls.lock().insert(call.id.clone(), token.clone());
    let handler = shared.host_tools.read().get(call.tool_name.as_str()).cloned();
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        let id = call.id.clone();
        let outcome = match handler {
            None => Some(Err(format!("Host tool \"{}\" is not registered", call.tool_name))),
            Some(handler) => {
                let context = HostToolContext { id: id.clone(), cancel: token.clone(), shared: Arc::clone(&shared) };
                let running = handler.call(call, context);
                tokio::select! {
                    biased;
                    () = token.cancelled() => None,
                    outcome = running => Some(outcome),
                }
            }
        };
        shared.host_calls.lock().remove(&id);
        let Some(outcome) = outcome.filter(|_| !token.is_cancelled()) else { return };
        // A failed write means the server is gone; there is nobody left to tell.
        let _ = send_result(&shared, id, outcome).await;
    });
}

/// Answers a call whose `arguments` are not an object, as the reference hosts do.
pub(crate) fn reject_arguments(shared: &Arc<Shared>, id: String) {
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        let _ = send_result(&shared, id, Err("Host tool arguments must be an object".into())).await;
    });
}

async fn send_result(shared: &Shared, id: String, outcome: HostToolOutcome) -> Result<(), ClientError> {
    let frame = match outcome {
        Ok(result) => HostToolResult { id, result: to_object(&result)?, is_error: None },
        Err(message) => HostToolResult { id, result: error_result(&message), is_error: Some(true) },
    };
    shared.write_frame(&Tagged { kind: "host_tool_result", frame: &frame }).await
}

/// `host_tool_cancel`: fires the call's token; its task then sends nothing more.
pub(crate) fn cancel(shared: &Shared, target_id: &str) {
    if let Some(token) = shared.host_calls.lock().remove(target_id) {
        token.cancel();
    }
}
