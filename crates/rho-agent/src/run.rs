//! The turn loop of one run: prompt messages, then turns of (queued messages → model reply →
//! tool calls) until the model stops calling tools and no steering or follow-up message is
//! waiting. Events follow the protocol's order (docs/protocol.md, "Event order"); the run always
//! ends with `agent_end`, also when it fails or is aborted.

use std::sync::Arc;

use rho_ai::event::AssistantMessageEvent;
use rho_types::ThinkingLevel;
use rho_types::types::{AssistantMessage, Context, StopReason, ToolCall, ToolResultMessage, UserContent};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, queue_event};
use crate::event::{AgentEvent, AgentEventSink};
use crate::hooks::HookPoint;
use crate::message::{AgentMessage, convert_to_llm};
use crate::tool::Tool;
use crate::tool_exec;
use rho_types::AgentToolResult;

pub(crate) async fn run(
    agent: &Agent,
    prompts: Vec<AgentMessage>,
    continuing: bool,
    cancel: CancellationToken,
    sink: Arc<dyn AgentEventSink>,
) {
    let mut new_messages = Vec::new();
    sink.emit(AgentEvent::AgentStart);
    sink.emit(AgentEvent::TurnStart);
    let had_prompts = !prompts.is_empty();
    if had_prompts {
        declare_system(agent, &*sink, &mut new_messages).await;
    }
    for message in prompts {
        add_message(agent, &*sink, message, &mut new_messages).await;
    }
    let mut pending = if continuing && had_prompts { Delivery::default() } else { poll_steering(agent) };
    let mut first_turn = true;
    let mut first_request = true;

    'run: loop {
        let mut more_tool_calls = true;
        while more_tool_calls || !pending.messages.is_empty() {
            if !first_turn {
                sink.emit(AgentEvent::TurnStart);
            }
            first_turn = false;
            let delivery = std::mem::take(&mut pending);
            if let Some(update) = delivery.update {
                sink.emit(update);
            }
            declare_system(agent, &*sink, &mut new_messages).await;
            for message in delivery.messages {
                add_message(agent, &*sink, message, &mut new_messages).await;
            }

            let (assistant, tools) = stream_assistant(agent, !first_request, &cancel, &*sink).await;
            first_request = false;
            new_messages.push(AgentMessage::Assistant(assistant.clone()));
            let calls: Vec<ToolCall> = assistant.tool_calls().cloned().collect();

            if assistant.is_failed() {
                let results = settle_failed_calls(agent, &*sink, &assistant, &calls, &mut new_messages).await;
                // A failed reply ends the run whatever the hook asks.
                turn_end(agent, &assistant, &results, &cancel).await;
                sink.emit(AgentEvent::TurnEnd { message: AgentMessage::Assistant(assistant), tool_results: results });
                break 'run;
            }

            more_tool_calls = !calls.is_empty();
            let mut steering = None;
            let mut results = Vec::new();
            if more_tool_calls {
                let outcome = tool_exec::execute(agent, &tools, &calls, &cancel, &sink).await;
                for result in &outcome.results {
                    new_messages.push(AgentMessage::ToolResult(result.clone()));
                }
                results = outcome.results;
                steering = outcome.steering;
                // Every result asked to end the batch: no request follows it (pi's `terminate`).
                if outcome.terminate {
                    more_tool_calls = false;
                }
            }
            // Asked for one more request: made even when no tool call or queued message would.
            if turn_end(agent, &assistant, &results, &cancel).await && !cancel.is_cancelled() {
                more_tool_calls = true;
            }
            sink.emit(AgentEvent::TurnEnd { message: AgentMessage::Assistant(assistant), tool_results: results });
            pending = match steering {
                Some(taken) => taken,
                // An aborted run takes nothing more from the queue: what waits there is for the
                // next run (docs/protocol.md, "Queues").
                None if cancel.is_cancelled() => Delivery::default(),
                None => poll_steering(agent),
            };
        }

        if cancel.is_cancelled() {
            break;
        }
        let follow_ups = {
            let mut s = agent.state();
            let mode = s.follow_up_mode;
            let taken = s.follow_up.take(mode);
            (!taken.is_empty()).then(|| (taken, queue_event(&s)))
        };
        match follow_ups {
            Some((messages, update)) => pending = Delivery { messages, update: Some(update) },
            // Nothing pending: the next turn answers what the application added.
            None if sink.carries_on() => {}
            None => break,
        }
    }
    sink.emit(AgentEvent::AgentEnd { messages: new_messages, will_retry: false, is_terminal: true });
}

/// The `turn_end` hook, when something listens there: whether it asks for one more request.
async fn turn_end(
    agent: &Agent,
    message: &AssistantMessage,
    results: &[ToolResultMessage],
    cancel: &CancellationToken,
) -> bool {
    let hooks = agent.state().hooks.clone();
    match hooks {
        Some(hooks) if hooks.wants(HookPoint::TurnEnd) => hooks.turn_end(message, results, cancel).await,
        _ => false,
    }
}

/// Emits a message's start and end and appends it to the conversation.
async fn add_message(
    agent: &Agent,
    sink: &dyn AgentEventSink,
    message: AgentMessage,
    new_messages: &mut Vec<AgentMessage>,
) {
    sink.emit(AgentEvent::MessageStart { message: message.clone() });
    let message = end_message(agent, message).await;
    agent.state().messages.push(message.clone());
    sink.emit(AgentEvent::MessageEnd { message: message.clone() });
    new_messages.push(message);
}

/// Records what changed in the declared prompt or tools since the transcript last said, as a
/// `system` message before the messages of the turn (pi 1.6's declarations); nothing when the
/// agent declares no prompt or nothing changed.
async fn declare_system(agent: &Agent, sink: &dyn AgentEventSink, new_messages: &mut Vec<AgentMessage>) {
    let declaration = {
        let s = agent.state();
        let Some(prompt) = &s.declared_prompt else { return };
        let tools: Vec<_> = s.tools.iter().map(|t| t.spec()).collect();
        rho_types::declare_changes(&s.messages, prompt, &tools, rho_types::types::now_ms())
    };
    if let Some(system) = declaration {
        add_message(agent, sink, AgentMessage::System(system), new_messages).await;
    }
}

/// A message that ended, as the `message_end` hook leaves it: a replacement of another role is
/// ignored (pi's rule).
pub(crate) async fn end_message(agent: &Agent, message: AgentMessage) -> AgentMessage {
    let hooks = agent.state().hooks.clone();
    match hooks {
        Some(hooks) if hooks.wants(HookPoint::MessageEnd) => {
            let role = std::mem::discriminant(&message);
            let original = message.clone();
            let replaced = hooks.message_end(message).await;
            if std::mem::discriminant(&replaced) == role { replaced } else { original }
        }
        _ => message,
    }
}

/// Messages taken from a queue, and the `queue_update` that says so: sent once the turn that
/// delivers them has started, before their `message_start` (pi's order).
#[derive(Default)]
pub(crate) struct Delivery {
    pub messages: Vec<AgentMessage>,
    pub update: Option<AgentEvent>,
}

/// Takes what one steering poll delivers.
pub(crate) fn poll_steering(agent: &Agent) -> Delivery {
    let mut s = agent.state();
    let mode = s.steering_mode;
    let messages = s.steering.take(mode);
    let update = (!messages.is_empty()).then(|| queue_event(&s));
    Delivery { messages, update }
}

/// Streams one model reply: `message_start`, the block events, `message_end`. Returns the reply
/// and the tools its request offered: the turn runs its calls with exactly those, so a tool set
/// replaced meanwhile ([`Agent::set_tools`]) takes effect from the next request, never mid-turn.
/// `next_turn`: a request after the run's first (the application may compact before it).
async fn stream_assistant(
    agent: &Agent,
    next_turn: bool,
    cancel: &CancellationToken,
    sink: &dyn AgentEventSink,
) -> (AssistantMessage, Vec<Arc<dyn Tool>>) {
    let (selected, mut context, thinking, tools, mut hooked, routing, before_request) = {
        let s = agent.state();
        // With a `context` hook the messages are copied and converted after it answers.
        let hooked = s.hooks.clone().filter(|h| h.wants(HookPoint::Context)).map(|h| (h, s.messages.clone()));
        let context = Context {
            system_prompt: Some(s.system_prompt.clone()).filter(|p| !p.is_empty()),
            messages: if hooked.is_some() { Vec::new() } else { convert_to_llm(&s.messages) },
            tools: s.tools.iter().map(|t| t.spec()).collect(),
        };
        // A virtual model is routed first, on the conversation as it stands.
        let routing = s.model.is_virtual().then(|| (s.hooks.clone(), s.messages.clone()));
        let before_request = s.before_request.clone().filter(|_| next_turn || routing.is_some());
        (s.model.clone(), context, s.thinking_level, s.tools.clone(), hooked, routing, before_request)
    };
    let (model, thinking) = match routing {
        None => (selected, thinking),
        Some((hooks, messages)) => {
            let routed = match hooks {
                Some(hooks) => hooks.route(&selected, thinking, &messages, cancel).await,
                None => Err(crate::hooks::not_registered(&selected)),
            };
            match routed {
                Ok(route) => (route.model, route.thinking),
                Err(error) => {
                    let stop = if cancel.is_cancelled() { StopReason::Aborted } else { StopReason::Error };
                    return (unrouted(agent, sink, &selected, thinking, stop, error).await, tools);
                }
            }
        }
    };
    // The conversation may be compacted for this model first; the route stands.
    if let Some(before) = before_request
        && before(model.clone()).await
    {
        let s = agent.state();
        match hooked.as_mut() {
            Some((_, messages)) => messages.clone_from(&s.messages),
            None => context.messages = convert_to_llm(&s.messages),
        }
    }
    if let Some((hooks, messages)) = hooked {
        context.messages = convert_to_llm(&hooks.context(messages, cancel).await);
    }
    let mut options = crate::agent::resolve_request_options(&agent.shared.request_options, &model, cancel).await;
    options.thinking = if model.reasoning { model.clamp_thinking(thinking) } else { ThinkingLevel::Off };
    options.cancel = cancel.child_token();

    let started = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    let thinking_level = Some(options.thinking);
    sink.emit(AgentEvent::MessageStart { message: AgentMessage::Assistant(started.clone()) });

    // The context is the stream's from here: the conversation is not held twice more.
    let mut stream = rho_ai::stream(&model, context, options);
    let backpressure = sink.backpressure();
    let mut last = None;
    let mut failure = None;
    while let Some(event) = stream.next().await {
        match event {
            AssistantMessageEvent::Done { message, .. } => last = Some(message),
            AssistantMessageEvent::Error { error, failure: f, .. } => {
                last = Some(error);
                failure = f;
            }
            other => {
                sink.emit(AgentEvent::MessageUpdate { event: other });
                if let Some(backpressure) = &backpressure
                    && backpressure.is_congested()
                {
                    tokio::select! {
                        () = backpressure.relieved() => {}
                        () = cancel.cancelled() => {}
                    }
                }
            }
        }
    }
    let mut message = last.unwrap_or_else(|| {
        let mut m = started.clone();
        m.stop_reason = StopReason::Error;
        m.error_message = Some("The model stream ended without a result".into());
        m
    });
    message.timestamp = started.timestamp;
    // The finished message says which level it was asked with (pi 1.6 sets it at the end too).
    message.thinking_level = thinking_level;
    (end_reply(agent, sink, message, failure).await, tools)
}

/// A request whose virtual model could not be routed (or whose routing was aborted): a failed
/// reply that names the virtual model, as pi 1.6 records it.
async fn unrouted(
    agent: &Agent,
    sink: &dyn AgentEventSink,
    model: &rho_types::Model,
    thinking: ThinkingLevel,
    stop: StopReason,
    error: String,
) -> AssistantMessage {
    let mut message = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    sink.emit(AgentEvent::MessageStart { message: AgentMessage::Assistant(message.clone()) });
    message.stop_reason = stop;
    message.error_message = Some(error);
    message.thinking_level = Some(thinking);
    end_reply(agent, sink, message, None).await
}

/// A reply that ended: through the `message_end` hook, into the conversation, then reported.
async fn end_reply(
    agent: &Agent,
    sink: &dyn AgentEventSink,
    message: AssistantMessage,
    failure: Option<Arc<rho_ai::ProviderError>>,
) -> AssistantMessage {
    let message = match end_message(agent, AgentMessage::Assistant(message)).await {
        AgentMessage::Assistant(ended) => ended,
        // end_message keeps the role; nothing else can come back.
        _ => unreachable!("message_end changed an assistant message's role"),
    };
    {
        let mut s = agent.state();
        s.messages.push(AgentMessage::Assistant(message.clone()));
        s.last_failure = failure;
    }
    sink.emit(AgentEvent::MessageEnd { message: AgentMessage::Assistant(message.clone()) });
    message
}

/// Gives every tool call of an aborted or failed reply a synthesized error result, with the
/// full tool events, so the history never holds a call without a result.
async fn settle_failed_calls(
    agent: &Agent,
    sink: &dyn AgentEventSink,
    assistant: &AssistantMessage,
    calls: &[ToolCall],
    new_messages: &mut Vec<AgentMessage>,
) -> Vec<ToolResultMessage> {
    let text = match (assistant.stop_reason, assistant.error_message.as_deref()) {
        (StopReason::Aborted, Some(m)) => format!("Tool execution was aborted: {m}"),
        (StopReason::Aborted, None) => "Tool execution was aborted.".to_owned(),
        (_, Some(m)) => format!("Tool execution failed due to an error: {m}"),
        (_, None) => "Tool execution failed due to an error.".to_owned(),
    };
    let mut results = Vec::with_capacity(calls.len());
    for call in calls {
        sink.emit(AgentEvent::ToolExecutionStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
        });
        let result = AgentToolResult {
            content: vec![UserContent::text(text.clone())],
            details: Some(json!({})),
            ..AgentToolResult::default()
        };
        let message = tool_exec::result_message(call, &result, true, None);
        sink.emit(AgentEvent::ToolExecutionEnd {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            result,
            is_error: true,
            is_warning: None,
            duration_ms: None,
        });
        add_message(agent, sink, AgentMessage::ToolResult(message.clone()), new_messages).await;
        results.push(message);
    }
    results
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
