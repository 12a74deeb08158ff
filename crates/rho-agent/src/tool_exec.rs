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
//! a refusal is the call's error result. The loop's hooks, when it has any, are asked around
//! each call: `tool_call` before it runs (block it, or change its arguments), `tool_result`
//! after (change its result), `message_end` for each result message.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use futures::stream::{FuturesUnordered, StreamExt};
use rho_types::types::{ToolCall, ToolResultMessage, UserContent, now_ms};
use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::event::{AgentEvent, AgentEventSink};
use crate::hooks::{AgentHooks, HookPoint, ToolCallDecision, ToolOutcome};
use crate::message::AgentMessage;
use crate::queue::InterruptMode;
use crate::run::{Delivery, end_message, poll_steering};
use crate::tool::{Tool, ToolContext, ToolGate};
use rho_types::AgentToolResult;

/// The result text of a call skipped because a steering message interrupted the batch.
pub const SKIPPED: &str = "Skipped due to queued user message.";

pub(crate) struct BatchOutcome {
    pub results: Vec<ToolResultMessage>,
    /// Steering messages taken while the batch ran (immediate mode).
    pub steering: Option<Delivery>,
    /// Every result asked for the batch to end the run's requests (pi's `terminate`).
    pub terminate: bool,
}

enum Slot {
    Running,
    /// `duration_ms` is how long the tool itself ran; `None` when it never ran (refused,
    /// blocked, skipped or aborted first).
    Finished {
        result: AgentToolResult,
        is_error: bool,
        duration_ms: Option<u64>,
    },
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
    let (interrupt_mode, gate, hooks, image_resize, fit_images) = {
        let state = agent.state();
        let fit = state.fit_images.clone();
        (state.interrupt_mode, state.tool_gate.clone(), state.hooks.clone(), state.model.image_resize(), fit)
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
        let checked = if tool.validates_arguments() {
            agent.shared.validators.check(tool.name(), tool.parameters(), &prepared)
        } else {
            Ok(prepared)
        };
        let args = match checked {
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
        let ctx = ToolContext::new(call.id.clone(), batch_cancel.child_token(), Some(on_update))
            .with_image_resize(image_resize);
        let checks = Checks { gate: gate.clone(), hooks: hooks.clone(), fit_images: fit_images.clone() };
        let spawned = Instant::now();
        let handle = tokio::spawn(run_tool(tool, call.clone(), args, ctx, predecessor, checks));
        running.push(async move {
            let ran = match handle.await {
                Ok(ran) => ran,
                Err(e) => Ran {
                    outcome: error_outcome(format!("Tool execution failed: {e}")),
                    duration_ms: Some(millis(spawned.elapsed())),
                },
            };
            (index, ran)
        });
        slots.push(Slot::Running);
    }

    let mut steering = None;
    let mut results = Vec::with_capacity(calls.len());
    let mut next_to_report = 0;
    report_ready(agent, &**sink, calls, &mut slots, &mut next_to_report, &mut results).await;
    while let Some((index, ran)) = running.next().await {
        if let Some(slot) = slots.get_mut(index)
            && matches!(slot, Slot::Running)
        {
            *slot = Slot::Finished {
                result: ran.outcome.result,
                is_error: ran.outcome.is_error,
                duration_ms: ran.duration_ms,
            };
        }
        let unfinished = slots.iter().any(|s| matches!(s, Slot::Running));
        if interrupt_mode == InterruptMode::Immediate && steering.is_none() && unfinished {
            let taken = poll_steering(agent);
            if !taken.messages.is_empty() {
                steering = Some(taken);
                batch_cancel.cancel();
                for slot in slots.iter_mut().filter(|s| matches!(s, Slot::Running)) {
                    *slot = Slot::Finished { result: error_result(SKIPPED.into()), is_error: true, duration_ms: None };
                }
            }
        }
        report_ready(agent, &**sink, calls, &mut slots, &mut next_to_report, &mut results).await;
    }
    let terminate = !slots.is_empty()
        && slots.iter().all(|s| matches!(s, Slot::Finished { result, .. } if result.terminate == Some(true)));
    BatchOutcome { results, steering, terminate }
}

/// What is asked before a call runs: the mode's gate and the loop's hooks.
struct Checks {
    gate: Option<Arc<dyn ToolGate>>,
    hooks: Option<Arc<dyn AgentHooks>>,
    fit_images: Option<crate::tool::FitImages>,
}

/// A call's outcome, and how long the tool itself ran (`None`: refused, blocked or aborted
/// first).
struct Ran {
    outcome: ToolOutcome,
    duration_ms: Option<u64>,
}

fn millis(elapsed: std::time::Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

async fn run_tool(
    tool: Arc<dyn Tool>,
    call: ToolCall,
    args: serde_json::Map<String, serde_json::Value>,
    ctx: ToolContext,
    predecessor: Option<(Option<oneshot::Receiver<()>>, oneshot::Sender<()>)>,
    checks: Checks,
) -> Ran {
    let (previous, done) = match predecessor {
        Some((previous, done)) => (previous, Some(done)),
        None => (None, None),
    };
    if let Some(previous) = previous {
        // An error only means the previous writer is gone; either way it no longer writes.
        let _ = previous.await;
    }
    let ran = checked_run(&*tool, &call, args, ctx, &checks).await;
    if let Some(done) = done {
        let _ = done.send(());
    }
    ran
}

/// The `tool_call` hook, the gate, the tool, then the `tool_result` hook.
async fn checked_run(
    tool: &dyn Tool,
    call: &ToolCall,
    mut args: serde_json::Map<String, serde_json::Value>,
    ctx: ToolContext,
    checks: &Checks,
) -> Ran {
    let refused = |text: String| Ran { outcome: error_outcome(text), duration_ms: None };
    if ctx.cancel.is_cancelled() {
        return refused(crate::tool::OPERATION_ABORTED.into());
    }
    let hooks = checks.hooks.as_ref();
    if let Some(hooks) = hooks.filter(|h| h.wants(HookPoint::ToolCall)) {
        match hooks.tool_call(call, args, &ctx.cancel).await {
            ToolCallDecision::Run(changed) => args = changed,
            ToolCallDecision::Block(reason) => return refused(reason),
        }
    }
    if let Some(gate) = &checks.gate
        && let Err(e) = gate.check(tool.name(), &args, &ctx).await
    {
        return refused(e.0);
    }
    let cancel = ctx.cancel.clone();
    let profile = ctx.image_resize;
    let started = Instant::now();
    let outcome = match tool.execute(args.clone(), ctx).await {
        // A result the tool marks as failed carries `details` as every error result does
        // (`{}` when the tool has none).
        Ok(mut result) if result.is_error => {
            result.details.get_or_insert_with(|| json!({}));
            ToolOutcome { result, is_error: true }
        }
        Ok(result) => ToolOutcome { result, is_error: false },
        Err(e) => error_outcome(e.0),
    };
    let duration_ms = Some(millis(started.elapsed()));
    let outcome = fit_result_images(outcome, checks.fit_images.as_ref(), profile).await;
    let outcome = match hooks.filter(|h| h.wants(HookPoint::ToolResult)) {
        Some(hooks) => hooks.tool_result(call, &args, outcome, &cancel).await,
        None => outcome,
    };
    Ran { outcome, duration_ms }
}

/// The result with its images fitted to the model, off the runtime's threads (decoding and
/// encoding images is long work); as it is when it has none or nothing fits images.
async fn fit_result_images(
    mut outcome: ToolOutcome,
    fit: Option<&crate::tool::FitImages>,
    profile: Option<rho_types::model::ImageResize>,
) -> ToolOutcome {
    let Some(fit) = fit.filter(|_| outcome.result.content.iter().any(|c| matches!(c, UserContent::Image(_)))) else {
        return outcome;
    };
    let (fit, content) = (fit.clone(), std::mem::take(&mut outcome.result.content));
    match tokio::task::spawn_blocking(move || fit(content, profile)).await {
        Ok(content) => outcome.result.content = content,
        Err(_) => {
            outcome.result.content = vec![UserContent::text("[Images omitted: they could not be resized.]")];
        }
    }
    outcome
}

fn error_result(text: String) -> AgentToolResult {
    AgentToolResult { content: vec![UserContent::text(text)], details: Some(json!({})), ..AgentToolResult::default() }
}

fn error_outcome(text: String) -> ToolOutcome {
    ToolOutcome { result: error_result(text), is_error: true }
}

fn error_slot(text: String) -> Slot {
    Slot::Finished { result: error_result(text), is_error: true, duration_ms: None }
}

/// Reports, in call order, every finished call not yet reported whose predecessors are all
/// reported.
async fn report_ready(
    agent: &Agent,
    sink: &dyn AgentEventSink,
    calls: &[ToolCall],
    slots: &mut [Slot],
    next: &mut usize,
    results: &mut Vec<ToolResultMessage>,
) {
    while let Some(Slot::Finished { result, is_error, duration_ms }) = slots.get(*next) {
        let call = &calls[*next];
        let is_warning = duration_ms.is_some().then_some(false);
        let message = result_message(call, result, *is_error, is_warning);
        sink.emit(AgentEvent::ToolExecutionEnd {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            result: result.clone(),
            is_error: *is_error,
            is_warning,
            duration_ms: *duration_ms,
        });
        let agent_message = AgentMessage::ToolResult(message.clone());
        sink.emit(AgentEvent::MessageStart { message: agent_message.clone() });
        *next += 1;
        let agent_message = end_message(agent, agent_message).await;
        let message = match &agent_message {
            AgentMessage::ToolResult(ended) => ended.clone(),
            _ => message,
        };
        agent.state().messages.push(agent_message.clone());
        sink.emit(AgentEvent::MessageEnd { message: agent_message });
        results.push(message);
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
