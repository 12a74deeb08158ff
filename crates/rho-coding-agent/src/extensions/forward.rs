//! The agent's events as extensions see them (pi's `agent_start`, `turn_start` with its index,
//! `message_update` with the partial message, `tool_execution_*`, …), sent as they happen and
//! not awaited: the run never waits for a handler that only listens. An event nobody listens
//! to costs one set lookup; the partial message for `message_update` is only kept while some
//! handler listens to it.

use rho_agent::AgentEvent;
use rho_ai::event::{EventWithPartial, apply_event};
use rho_extensions::ToHost;
use rho_types::AgentMessage;
use rho_types::types::AssistantMessage;
use serde_json::{Value, json};

use super::Extensions;

#[derive(Default)]
pub(super) struct Forwarding {
    turn_index: u64,
    /// The streamed reply so far (only while `message_update` is listened to).
    partial: Option<AssistantMessage>,
}

impl Extensions {
    /// An agent event as it goes out: to the host when some handler listens to it.
    pub(crate) fn observe(&self, event: &AgentEvent) {
        let name = event.type_name();
        // Components drawn in a terminal show the session: they get it as each message ends
        // (the host renders its footers and widgets again on every sync).
        if self.config.terminal.is_some()
            && matches!(event, AgentEvent::MessageEnd { .. } | AgentEvent::AgentEnd { .. })
            && let Some(session) = self.session()
        {
            self.sync_now(&session);
        }
        let counts_turns = matches!(event, AgentEvent::AgentStart | AgentEvent::TurnEnd { .. });
        let keeps_partial = matches!(event, AgentEvent::MessageStart { .. } | AgentEvent::MessageUpdate { .. });
        if !(self.listens(name) || counts_turns || (keeps_partial && self.listens("message_update"))) {
            return;
        }
        let Some(event) = self.extension_event(event) else {
            return;
        };
        // Streaming events carry no state: it cannot have changed in between.
        let with_state = !matches!(name, "message_update" | "tool_execution_update");
        self.notify(&ToHost::Event { kind: "emit".into(), event }, with_state);
    }

    /// The index of the turn in progress (pi's `turnIndex`), counted from the run's start.
    pub(crate) fn turn_index(&self) -> u64 {
        self.forwarding.lock().turn_index
    }

    /// A session event for the handlers that listen to it, not awaited.
    pub(crate) fn tell(&self, event: Value) {
        let listened = event.get("type").and_then(Value::as_str).is_some_and(|name| self.listens(name));
        if listened {
            self.notify(&ToHost::Event { kind: "emit".into(), event }, true);
        }
    }

    /// pi's extension event for an agent event; `None` when it is not one, or nobody listens.
    fn extension_event(&self, event: &AgentEvent) -> Option<Value> {
        let mut forwarding = self.forwarding.lock();
        let value = match event {
            AgentEvent::AgentStart => {
                forwarding.turn_index = 0;
                json!({"type": "agent_start"})
            }
            AgentEvent::AgentEnd { messages, .. } => json!({"type": "agent_end", "messages": messages}),
            AgentEvent::TurnStart => json!({
                "type": "turn_start",
                "turnIndex": forwarding.turn_index,
                "timestamp": rho_types::types::now_ms(),
            }),
            // `turn_end` is an actionable boundary: its handlers ran before the event (see
            // `agent_session/boundaries.rs`); here the turns are only counted.
            AgentEvent::TurnEnd { .. } => {
                forwarding.turn_index += 1;
                return None;
            }
            AgentEvent::MessageStart { message } => {
                forwarding.partial = match message {
                    AgentMessage::Assistant(a) if self.listens("message_update") => Some(a.clone()),
                    _ => None,
                };
                json!({"type": "message_start", "message": message})
            }
            AgentEvent::MessageUpdate { event } => {
                let partial = forwarding.partial.as_mut()?;
                apply_event(partial, event);
                let wire = EventWithPartial { event, partial };
                json!({"type": "message_update", "message": partial, "assistantMessageEvent": wire})
            }
            AgentEvent::ToolExecutionStart { tool_call_id, tool_name, args } => json!({
                "type": "tool_execution_start", "toolCallId": tool_call_id, "toolName": tool_name, "args": args,
            }),
            AgentEvent::ToolExecutionUpdate { tool_call_id, tool_name, args, partial_result } => json!({
                "type": "tool_execution_update",
                "toolCallId": tool_call_id,
                "toolName": tool_name,
                "args": args,
                "partialResult": partial_result,
            }),
            AgentEvent::ToolExecutionEnd { tool_call_id, tool_name, result, is_error, .. } => json!({
                "type": "tool_execution_end",
                "toolCallId": tool_call_id,
                "toolName": tool_name,
                "result": result,
                "isError": is_error,
            }),
            // message_end is a hook (it may replace the message); queue updates are not
            // extension events.
            AgentEvent::MessageEnd { .. } | AgentEvent::QueueUpdate { .. } => return None,
        };
        let name = value.get("type").and_then(Value::as_str).unwrap_or_default();
        self.listens(name).then_some(value)
    }
}
