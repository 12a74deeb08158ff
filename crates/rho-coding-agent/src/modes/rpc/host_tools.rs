//! The host tool sub-protocol (docs/protocol.md, "Host tool sub-protocol"): tools the host
//! registers with `set_host_tools` and runs itself. A model call to one becomes a `host_tool_call`
//! frame; `host_tool_update` frames become `tool_execution_update` events; `host_tool_result`
//! completes the call. An abort (or a steering interrupt) writes `host_tool_cancel` and fails the
//! call at once; frames for unknown or finished ids are ignored; when stdin closes, every pending
//! call fails.

use parking_lot::{Mutex, MutexGuard};
use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_rpc::{HostToolCall, HostToolCancel, HostToolResult, HostToolUpdate, RpcHostToolDefinition};
use rho_types::AgentToolResult;
use rho_types::types::UserContent;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::ids::new_id;
use crate::agent_session::AgentSessionEvent;
use crate::agent_session::HostToolEntry;
use crate::modes::out_queue::OutQueue;

/// The failure text when stdin closes with a host call pending.
pub const DISCONNECTED: &str = "RPC client disconnected before host tool execution completed";

enum Outcome {
    Result(HostToolResult),
    Disconnected,
}

struct Pending {
    ctx: ToolContext,
    done: oneshot::Sender<Outcome>,
}

/// The calls waiting for the host.
pub struct HostToolBridge {
    out: Arc<OutQueue>,
    pending: Mutex<HashMap<String, Pending>>,
}

impl HostToolBridge {
    pub fn new(out: Arc<OutQueue>) -> Arc<Self> {
        Arc::new(Self { out, pending: Mutex::new(HashMap::new()) })
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock()
    }

    /// `host_tool_result`: completes the call (unknown ids are ignored).
    pub fn complete(&self, result: HostToolResult) {
        if let Some(pending) = self.pending().remove(&result.id) {
            let _ = pending.done.send(Outcome::Result(result));
        }
    }

    /// `host_tool_update`: progress of a pending call (unknown ids are ignored).
    pub fn update(&self, update: HostToolUpdate) {
        let pending = self.pending();
        if let Some(call) = pending.get(&update.id) {
            call.ctx.update(tool_result_of(&update.partial_result));
        }
    }

    /// Fails every pending call (stdin closed).
    pub fn disconnect(&self) {
        for (_, pending) in self.pending().drain() {
            let _ = pending.done.send(Outcome::Disconnected);
        }
    }

    /// Validates a `set_host_tools` request (the reference's texts) and builds the tools.
    /// `taken` says whether a name belongs to a built-in or rho tool.
    pub fn build_tools(
        self: &Arc<Self>,
        tools: &Value,
        taken: impl Fn(&str) -> bool,
    ) -> Result<(Vec<String>, Vec<HostToolEntry>), String> {
        let Some(items) = tools.as_array() else {
            return Err("Host tools must be an array".into());
        };
        let mut names = Vec::with_capacity(items.len());
        let mut entries = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let name = item.get("name").and_then(Value::as_str).map(str::trim).unwrap_or_default();
            if name.is_empty() {
                return Err(format!("Host tool at index {index} must provide a non-empty name"));
            }
            let description = item.get("description").and_then(Value::as_str).map(str::trim).unwrap_or_default();
            if description.is_empty() {
                return Err(format!("Host tool \"{name}\" must provide a non-empty description"));
            }
            let parameters = match item.get("parameters") {
                Some(p @ Value::Object(_)) => p.clone(),
                _ => return Err(format!("Host tool \"{name}\" must provide a JSON Schema object")),
            };
            if jsonschema::validator_for(&parameters).is_err() {
                return Err(format!("Host tool \"{name}\" must provide a JSON Schema object"));
            }
            if names.iter().any(|n: &String| n == name) {
                return Err("RPC host tool names must be unique".into());
            }
            if taken(name) {
                return Err(format!("RPC host tool \"{name}\" conflicts with an existing tool"));
            }
            let label = item.get("label").and_then(Value::as_str).map(str::trim).filter(|l| !l.is_empty());
            let definition = RpcHostToolDefinition {
                name: name.to_owned(),
                label: Some(label.unwrap_or(name).to_owned()),
                description: description.to_owned(),
                parameters,
                hidden: item.get("hidden").and_then(Value::as_bool),
            };
            names.push(name.to_owned());
            entries.push(HostToolEntry {
                hidden: definition.hidden == Some(true),
                tool: Arc::new(HostTool { definition, bridge: self.clone() }),
            });
        }
        Ok((names, entries))
    }
}

/// A tool the host runs.
pub struct HostTool {
    definition: RpcHostToolDefinition,
    bridge: Arc<HostToolBridge>,
}

impl Tool for HostTool {
    fn name(&self) -> &str {
        &self.definition.name
    }

    fn label(&self) -> &str {
        self.definition.label.as_deref().unwrap_or(&self.definition.name)
    }

    fn description(&self) -> &str {
        &self.definition.description
    }

    fn parameters(&self) -> &Value {
        &self.definition.parameters
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let id = new_id();
            let (done, outcome) = oneshot::channel();
            let cancel = ctx.cancel.clone();
            let tool_call_id = ctx.tool_call_id.clone();
            self.bridge.pending().insert(id.clone(), Pending { ctx, done });
            self.bridge.out.push_event(AgentSessionEvent::HostToolCall(HostToolCall {
                id: id.clone(),
                tool_call_id,
                tool_name: self.definition.name.clone(),
                arguments: args,
            }));
            tokio::select! {
                outcome = outcome => match outcome {
                    Ok(Outcome::Result(result)) => finish(result),
                    Ok(Outcome::Disconnected) | Err(_) => Err(ToolError::new(DISCONNECTED)),
                },
                () = cancel.cancelled() => {
                    self.bridge.pending().remove(&id);
                    self.bridge.out.push_event(AgentSessionEvent::HostToolCancel(HostToolCancel {
                        id: new_id(),
                        target_id: id,
                    }));
                    Err(ToolError::new(format!("Host tool \"{}\" was aborted", self.definition.name)))
                }
            }
        })
    }
}

/// The call's result: the host's object as it is, or (with `isError`) an error made of its text.
fn finish(result: HostToolResult) -> Result<AgentToolResult, ToolError> {
    if result.is_error == Some(true) {
        let text = result
            .result
            .get("content")
            .and_then(Value::as_array)
            .map(|blocks| {
                blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        let text = text.trim();
        return Err(ToolError::new(if text.is_empty() { "Host tool execution failed" } else { text }));
    }
    Ok(tool_result_of(&result.result))
}

/// An `AgentToolResult` from the host's object; blocks rho cannot read become text.
fn tool_result_of(object: &Map<String, Value>) -> AgentToolResult {
    let content = object
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .map(|b| {
                    serde_json::from_value::<UserContent>(b.clone())
                        .unwrap_or_else(|_| UserContent::text(b.to_string()))
                })
                .collect()
        })
        .unwrap_or_default();
    let details = object.get("details").cloned().or_else(|| Some(json!({})));
    AgentToolResult { content, details, ..AgentToolResult::default() }
}
