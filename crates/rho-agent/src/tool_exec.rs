//! Running the tool calls of one assistant message.
//!
//! All calls start concurrently, except that calls writing the same file (per
//! [`Tool::write_target`]) run one after another in call order, so parallel edits of one file
//! are never lost. `tool_execution_start` is emitted for every call first, in call order;
//! results are reported (`tool_execution_end`, then the tool-result message) in call order too,
//! each as soon as it and every call before it are done. In `immediate` interrupt mode the
//! steering queue is polled whenever a call finishes; a queued message cancels the calls still
//! running or waiting, which are reported as skipped. A [`ToolGate`], when the agent has one, is
//! asked before each validated call runs (after the calls writing the same file before it);
//! a refusal is the call's error result.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::stream::{FuturesUnordered, StreamExt};
use rho_ai::types::{ToolCall, ToolResultMessage, UserContent, now_ms};
use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::event::{AgentEvent, AgentEventSink};
use crate::message::AgentMessage;
use crate::queue::InterruptMode;
use crate::run::poll_steering;
use crate::tool::{AgentToolResult, Tool, ToolContext, ToolError, ToolGate};

/// The result text of a call skipped because a steering message interrupted the batch.
pub const SKIPPED: &str = "Skipped due to queued user message.";

pub(crate) struct BatchOutcome {
    pub results: Vec<ToolResultMessage>,
    /// Steering messages taken while the batch ran (immediate mode).
    pub steering: Option<Vec<AgentMessage>>,
}

enum Slot {
    Running,
    Finished { result: AgentToolResult, is_error: bool, executed: bool },
}

/// Runs `calls` with `tools`, the tools the turn's request offered (not the agent's current set,
/// which may have been replaced since).
pub(crate) async fn execute(
    agent: &Agent,
    tools: &[Arc<dyn Tool>],
    calls: &[ToolCall],
    run_cancel: &CancellationToken,
    sink: &Arc<dyn AgentEventSink>,
) -> BatchOutcome {
    let batch_cancel = run_cancel.child_token();
    for call in calls {
        sink.emit(AgentEvent::ToolExecutionStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
        });
    }
    let (interrupt_mode, gate) = {
        let state = agent.state();
        (state.interrupt_mode, state.tool_gate.clone())
    };

    let mut slots: Vec<Slot> = Vec::with_capacity(calls.len());
    let mut running = FuturesUnordered::new();
    let mut write_chain: HashMap<PathBuf, oneshot::Receiver<()>> = HashMap::new();
    for (index, call) in calls.iter().enumerate() {
        let Some(tool) = tools.iter().find(|t| t.name() == call.name).cloned() else {
            slots.push(error_slot(format!("Tool {} not found", call.name)));
            continue;
        };
        let prepared = tool.prepare_arguments(call.arguments.clone());
        let args = match agent.shared.validators.check(tool.name(), tool.parameters(), &prepared) {
            Ok(args) => args,
            Err(text) => {
                slots.push(error_slot(text));
                continue;
            }
        };
        let predecessor = tool.write_target(&args).map(|path| {
            let (done_tx, done_rx) = oneshot::channel();
            let previous = write_chain.insert(path, done_rx);
            (previous, done_tx)
        });
        let on_update = {
            let sink = sink.clone();
            let id = call.id.clone();
            let name = call.name.clone();
            let args = call.arguments.clone();
            Arc::new(move |partial: AgentToolResult| {
                sink.emit(AgentEvent::ToolExecutionUpdate {
                    tool_call_id: id.clone(),
                    tool_name: name.clone(),
                    args: args.clone(),
                    partial_result: partial,
                });
            })
        };
        let ctx = ToolContext::new(call.id.clone(), batch_cancel.child_token(), Some(on_update));
        let handle = tokio::spawn(run_tool(tool, args, ctx, predecessor, gate.clone()));
        running.push(async move {
            let result = match handle.await {
                Ok(r) => r,
                Err(e) => Err(ToolError::new(format!("Tool execution failed: {e}"))),
            };
            (index, result)
        });
        slots.push(Slot::Running);
    }

    let mut steering = None;
    let mut results = Vec::with_capacity(calls.len());
    let mut next_to_report = 0;
    report_ready(agent, &**sink, calls, &mut slots, &mut next_to_report, &mut results);
    while let Some((index, outcome)) = running.next().await {
        if let Some(slot) = slots.get_mut(index)
            && matches!(slot, Slot::Running)
        {
            *slot = match outcome {
                Ok(result) => Slot::Finished { result, is_error: false, executed: true },
                Err(e) => Slot::Finished {
                    result: AgentToolResult { content: vec![UserContent::text(e.0)], details: Some(json!({})) },
                    is_error: true,
                    executed: true,
                },
            };
        }
        let unfinished = slots.iter().any(|s| matches!(s, Slot::Running));
        if interrupt_mode == InterruptMode::Immediate && steering.is_none() && unfinished {
            let taken = poll_steering(agent, &**sink);
            if !taken.is_empty() {
                steering = Some(taken);
                batch_cancel.cancel();
                for slot in slots.iter_mut().filter(|s| matches!(s, Slot::Running)) {
                    *slot = Slot::Finished {
                        result: AgentToolResult { content: vec![UserContent::text(SKIPPED)], details: Some(json!({})) },
                        is_error: true,
                        executed: false,
                    };
                }
            }
        }
        report_ready(agent, &**sink, calls, &mut slots, &mut next_to_report, &mut results);
    }
    BatchOutcome { results, steering }
}

async fn run_tool(
    tool: Arc<dyn Tool>,
    args: serde_json::Map<String, serde_json::Value>,
    ctx: ToolContext,
    predecessor: Option<(Option<oneshot::Receiver<()>>, oneshot::Sender<()>)>,
    gate: Option<Arc<dyn ToolGate>>,
) -> Result<AgentToolResult, ToolError> {
    let (previous, done) = match predecessor {
        Some((previous, done)) => (previous, Some(done)),
        None => (None, None),
    };
    if let Some(previous) = previous {
        // An error only means the previous writer is gone; either way it no longer writes.
        let _ = previous.await;
    }
    let result = if ctx.cancel.is_cancelled() {
        Err(ToolError::new(crate::tool::OPERATION_ABORTED))
    } else {
        match &gate {
            Some(gate) => match gate.check(tool.name(), &args, &ctx).await {
                Ok(()) => tool.execute(args, ctx).await,
                Err(refused) => Err(refused),
            },
            None => tool.execute(args, ctx).await,
        }
    };
    if let Some(done) = done {
        let _ = done.send(());
    }
    result
}

fn error_slot(text: String) -> Slot {
    Slot::Finished {
        result: AgentToolResult { content: vec![UserContent::text(text)], details: Some(json!({})) },
        is_error: true,
        executed: false,
    }
}

/// Reports, in call order, every finished call not yet reported whose predecessors are all
/// reported.
fn report_ready(
    agent: &Agent,
    sink: &dyn AgentEventSink,
    calls: &[ToolCall],
    slots: &mut [Slot],
    next: &mut usize,
    results: &mut Vec<ToolResultMessage>,
) {
    while let Some(Slot::Finished { result, is_error, executed }) = slots.get(*next) {
        let call = &calls[*next];
        let is_warning = executed.then_some(false);
        let message = result_message(call, result, *is_error, is_warning);
        sink.emit(AgentEvent::ToolExecutionEnd {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            result: result.clone(),
            is_error: *is_error,
            is_warning,
        });
        let agent_message = AgentMessage::ToolResult(message.clone());
        sink.emit(AgentEvent::MessageStart { message: agent_message.clone() });
        agent.state().messages.push(agent_message.clone());
        sink.emit(AgentEvent::MessageEnd { message: agent_message });
        results.push(message);
        *next += 1;
    }
}

/// The tool-result message for a call's result.
pub(crate) fn result_message(
    call: &ToolCall,
    result: &AgentToolResult,
    is_error: bool,
    is_warning: Option<bool>,
) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: result.content.clone(),
        details: result.details.clone(),
        is_error,
        is_warning,
        timestamp: now_ms(),
    }
}
