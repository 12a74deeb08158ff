//! The hooks whose answers change what rho does: the loop's (`context`, `tool_call`,
//! `tool_result`, `message_end`), the request's (`before_provider_request`), the prompt's
//! (`input`, `before_agent_start`) and the session's (`session_before_*`, which may cancel).
//! Each asks the host only when some handler listens, and combines answers as pi's runner
//! does (it runs there). A failed or late answer is reported and counts as no answer, except
//! for `tool_call`, where it blocks the call.

use std::sync::Arc;

use futures::future::BoxFuture;
use rho_agent::{AgentHooks, HookPoint, Route, ToolCallDecision, ToolOutcome};
use rho_extensions::{HostError, ToHost};
use rho_types::types::{AssistantMessage, ImageContent, ToolCall, ToolResultMessage};
use rho_types::{AgentMessage, Model, ThinkingLevel};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::Extensions;

/// What the `input` handlers made of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum HookOutcome {
    /// Go on with this text and these images (changed or not).
    Continue { text: String, images: Vec<ImageContent> },
    /// A handler dealt with it: nothing is sent to the model.
    Handled,
}

/// What `before_agent_start` added to a prompt.
#[derive(Debug, Default)]
pub struct AgentStart {
    /// Custom messages to send after the user's.
    pub messages: Vec<AgentMessage>,
    /// The system prompt for this prompt's run, when a handler changed it.
    pub system_prompt: Option<String>,
}

impl Extensions {
    /// Runs the handlers of a hook, bounded by the hook timeout; `None` when nobody listens or
    /// the answer failed (which is reported).
    pub(crate) async fn hook(self: &Arc<Self>, kind: &str, event: Value) -> Option<Value> {
        let event_type = event.get("type").and_then(Value::as_str).unwrap_or(kind).to_owned();
        // pi 1.6 runs `context_with_system` handlers in the same pass as `context`'s.
        let listened = self.listens(&event_type) || (event_type == "context" && self.listens("context_with_system"));
        if !listened {
            return None;
        }
        match self.call(ToHost::Event { kind: kind.to_owned(), event }, true).await {
            Ok(value) => Some(value),
            Err(e) => {
                self.report_failure(&event_type, &e);
                None
            }
        }
    }

    /// Waits until the handlers of every event sent before are done (what they asked of the
    /// session is handled by then). A host that fails is reported by the next hook; a dialog
    /// they opened counts as still running, as in a hook.
    pub(crate) async fn flush(self: &Arc<Self>) {
        let Some(host) = self.host.lock().clone().filter(rho_extensions::ExtensionHost::is_alive) else {
            return;
        };
        let (_, answer) = host.request(&ToHost::Flush);
        let _ = self.wait(answer, true).await;
    }

    fn report_failure(&self, event: &str, error: &HostError) {
        self.report("<extension host>", event, &error.to_string());
    }

    /// `input`: handlers may transform the prompt or handle it. `behavior`: how it is queued when
    /// a run is streaming (pi 1.6's `streamingBehavior`).
    pub(crate) async fn input(
        self: &Arc<Self>,
        text: &str,
        images: &[ImageContent],
        source: &str,
        behavior: Option<rho_rpc::StreamingBehavior>,
    ) -> HookOutcome {
        let unchanged = || HookOutcome::Continue { text: text.to_owned(), images: images.to_vec() };
        let event = json!({
            "type": "input",
            "text": text,
            "images": images_or_undefined(images),
            "source": source,
            "streamingBehavior": behavior,
        });
        let Some(answer) = self.hook("input", event).await else {
            return unchanged();
        };
        match answer.get("action").and_then(Value::as_str) {
            Some("handled") => HookOutcome::Handled,
            Some("transform") => {
                let text = answer.get("text").and_then(Value::as_str).unwrap_or(text).to_owned();
                let images = answer
                    .get("images")
                    .filter(|v| !v.is_null())
                    .and_then(|v| serde_json::from_value(v.clone()).ok())
                    .unwrap_or_else(|| images.to_vec());
                HookOutcome::Continue { text, images }
            }
            _ => unchanged(),
        }
    }

    /// `before_agent_start`: custom messages to add and the system prompt for this run.
    pub(crate) async fn before_agent_start(
        self: &Arc<Self>,
        prompt: &str,
        images: &[ImageContent],
        system_prompt: &str,
        options: Value,
    ) -> AgentStart {
        let event = json!({
            "type": "before_agent_start",
            "messageType": "user",
            "prompt": prompt,
            "images": images_or_undefined(images),
            "systemPrompt": system_prompt,
            "systemPromptOptions": options,
        });
        self.agent_start(event).await
    }

    /// `before_agent_start` for a run an extension's custom message starts.
    pub(crate) async fn before_custom_start(
        self: &Arc<Self>,
        message: &AgentMessage,
        system_prompt: &str,
        options: Value,
    ) -> AgentStart {
        let event = json!({
            "type": "before_agent_start",
            "messageType": "custom",
            "message": message,
            "systemPrompt": system_prompt,
            "systemPromptOptions": options,
        });
        self.agent_start(event).await
    }

    async fn agent_start(self: &Arc<Self>, event: Value) -> AgentStart {
        let Some(answer) = self.hook("before_agent_start", event).await else {
            return AgentStart::default();
        };
        let messages = answer
            .get("messages")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(custom_message).collect())
            .unwrap_or_default();
        let system_prompt = answer.get("systemPrompt").and_then(Value::as_str).map(str::to_owned);
        AgentStart { messages, system_prompt }
    }

    /// A `session_before_*` event: `Some(answer)` when a handler answered (and maybe cancelled).
    pub(crate) async fn before(self: &Arc<Self>, event: Value) -> Option<Value> {
        self.hook("emit", event).await.filter(|v| !v.is_null())
    }

    /// A notification that is awaited (pi awaits its handlers before going on): session
    /// events, `agent_end` before a mode exits, and the like.
    pub(crate) async fn emit(self: &Arc<Self>, event: Value) {
        let _ = self.hook("emit", event).await;
    }

    /// `before_provider_headers`: the request's headers, as the handlers left them (a header
    /// set to null or removed is not sent).
    async fn provider_headers(self: Arc<Self>, headers: Vec<(String, String)>) -> Vec<(String, String)> {
        let map: Map<String, Value> = headers.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        let event = json!({"type": "before_provider_headers", "headers": map});
        match self.hook("before_provider_headers", event).await {
            Some(Value::Object(changed)) => changed
                .into_iter()
                .filter_map(|(name, value)| match value {
                    Value::String(value) => Some((name, value)),
                    Value::Null => None,
                    other => Some((name, other.to_string())),
                })
                .collect(),
            _ => headers,
        }
    }

    /// `before_provider_request`: the request body, possibly replaced.
    async fn provider_request(self: Arc<Self>, payload: Value) -> Value {
        // The handlers always answer with the payload (changed or not); the copy is kept for
        // when they fail.
        let event = json!({"type": "before_provider_request", "payload": payload.clone()});
        match self.hook("before_provider_request", event).await {
            Some(replaced) if !replaced.is_null() => replaced,
            _ => payload,
        }
    }
}

/// `images` as pi passes it: absent when there are none.
fn images_or_undefined(images: &[ImageContent]) -> Value {
    if images.is_empty() { Value::Null } else { serde_json::to_value(images).unwrap_or(Value::Null) }
}

/// A `before_agent_start` message (`{customType, content, display, details}`) as a custom
/// message of the conversation.
fn custom_message(value: &Value) -> Option<AgentMessage> {
    let mut message = value.as_object()?.clone();
    message.insert("role".into(), json!("custom"));
    message.entry("display").or_insert(json!(true));
    message.insert("timestamp".into(), json!(rho_types::types::now_ms()));
    serde_json::from_value(Value::Object(message)).ok()
}

/// The run's events that are only told to the handlers (not awaited): a recorded message waits
/// for their handlers.
const RUN_EVENTS: &[&str] = &[
    "agent_start",
    "turn_start",
    "message_start",
    "message_update",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
];

/// The loop's hooks, answered by the host.
pub(crate) struct LoopHooks(pub Arc<Extensions>);

impl AgentHooks for LoopHooks {
    fn wants(&self, point: HookPoint) -> bool {
        let event = match point {
            HookPoint::Context => return self.0.listens("context") || self.0.listens("context_with_system"),
            HookPoint::ToolCall => "tool_call",
            HookPoint::ToolResult => "tool_result",
            // Also a barrier: the message is recorded once the handlers of the events before
            // it are done, so what they append lands before it (pi handles an agent event's
            // handlers, then records it, one event after the other).
            HookPoint::MessageEnd => {
                return self.0.listens("message_end") || RUN_EVENTS.iter().any(|e| self.0.listens(e));
            }
            HookPoint::TurnEnd => "turn_end",
        };
        self.0.listens(event)
    }

    fn context<'a>(
        &'a self,
        messages: Vec<AgentMessage>,
        _: &'a CancellationToken,
    ) -> BoxFuture<'a, Vec<AgentMessage>> {
        Box::pin(async move {
            let event = json!({"type": "context", "messages": messages});
            let Some(answer) = self.0.hook("context", event).await else {
                return messages;
            };
            match serde_json::from_value::<Vec<AgentMessage>>(answer) {
                Ok(changed) => changed,
                Err(e) => {
                    self.0.report("<extension host>", "context", &format!("unusable messages from context: {e}"));
                    messages
                }
            }
        })
    }

    fn tool_call<'a>(
        &'a self,
        call: &'a ToolCall,
        args: Map<String, Value>,
        _: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolCallDecision> {
        Box::pin(async move {
            let event = json!({"type": "tool_call", "toolName": call.name, "toolCallId": call.id, "input": args});
            let answer = match self.0.call(ToHost::Event { kind: "tool_call".into(), event }, true).await {
                Ok(answer) => answer,
                Err(e) => {
                    self.0.report_failure("tool_call", &e);
                    return ToolCallDecision::Block(format!("Extension failed, blocking execution: {e}"));
                }
            };
            if answer.get("block").and_then(Value::as_bool) == Some(true) {
                let reason = answer.get("reason").and_then(Value::as_str).unwrap_or("Tool execution was blocked");
                return ToolCallDecision::Block(reason.to_owned());
            }
            match answer.get("input").and_then(Value::as_object) {
                Some(input) => ToolCallDecision::Run(input.clone()),
                None => ToolCallDecision::Run(args),
            }
        })
    }

    fn tool_result<'a>(
        &'a self,
        call: &'a ToolCall,
        args: &'a Map<String, Value>,
        outcome: ToolOutcome,
        _: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let event = json!({
                "type": "tool_result",
                "toolName": call.name,
                "toolCallId": call.id,
                "input": args,
                "content": outcome.result.content,
                "details": outcome.result.details,
                "structuredContent": outcome.result.structured_content,
                "isError": outcome.is_error,
            });
            let Some(answer) = self.0.hook("tool_result", event).await.filter(|v| !v.is_null()) else {
                return outcome;
            };
            let mut changed = outcome;
            if let Some(content) = answer.get("content").and_then(|c| serde_json::from_value(c.clone()).ok()) {
                changed.result.content = content;
                // Structured content not replaced along with the content may no longer match it.
                changed.result.structured_content = None;
            }
            if let Some(structured) = answer.get("structuredContent").filter(|s| !s.is_null()) {
                changed.result.structured_content = Some(structured.clone());
            }
            if let Some(details) = answer.get("details").filter(|d| !d.is_null()) {
                changed.result.details = Some(details.clone());
            }
            if let Some(is_error) = answer.get("isError").and_then(Value::as_bool) {
                changed.is_error = is_error;
            }
            changed
        })
    }

    fn turn_end<'a>(
        &'a self,
        message: &'a AssistantMessage,
        tool_results: &'a [ToolResultMessage],
        _: &'a CancellationToken,
    ) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            match self.0.session() {
                Some(session) => session.turn_end_boundary(message, tool_results).await,
                None => false,
            }
        })
    }

    fn route<'a>(
        &'a self,
        model: &'a Model,
        thinking: ThinkingLevel,
        messages: &'a [AgentMessage],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Route, String>> {
        Box::pin(async move {
            let session = self.0.session().ok_or_else(|| "the session is gone".to_owned())?;
            session.route_request(model, thinking, messages, cancel).await
        })
    }

    fn message_end<'a>(&'a self, message: AgentMessage) -> BoxFuture<'a, AgentMessage> {
        Box::pin(async move {
            if !self.0.listens("message_end") {
                self.0.flush().await;
                return message;
            }
            let event = json!({"type": "message_end", "message": message});
            let Some(answer) = self.0.hook("message_end", event).await.filter(|v| !v.is_null()) else {
                return message;
            };
            serde_json::from_value(answer).unwrap_or(message)
        })
    }
}

/// The request hooks for a request to `model` in a session with extensions, each only when some
/// handler listens: the payload hook (`before_provider_request`), the headers hook
/// (`before_provider_headers`), the response hook (`after_provider_response`) and the stream
/// event hook (`provider_stream_event`, each event's data parsed, told without waiting).
pub(crate) fn request_hooks(extensions: &Arc<Extensions>, model: &rho_types::Model) -> rho_ai::RequestHooks {
    let payload = extensions.listens("before_provider_request").then(|| {
        let extensions = extensions.clone();
        let hook: rho_ai::PayloadHook = Arc::new(move |payload| Box::pin(extensions.clone().provider_request(payload)));
        hook
    });
    let response = extensions.listens("after_provider_response").then(|| {
        let extensions = extensions.clone();
        let hook: rho_ai::ResponseHook = Arc::new(move |status, headers| {
            let headers: Map<String, Value> =
                headers.into_iter().map(|(name, value)| (name, Value::String(value))).collect();
            let event = json!({"type": "after_provider_response", "status": status, "headers": headers});
            extensions.notify(&ToHost::Event { kind: "emit".into(), event }, false);
        });
        hook
    });
    let headers = extensions.listens("before_provider_headers").then(|| {
        let extensions = extensions.clone();
        let hook: rho_ai::HeadersHook = Arc::new(move |headers| Box::pin(extensions.clone().provider_headers(headers)));
        hook
    });
    let stream_event = extensions.listens("provider_stream_event").then(|| {
        let extensions = extensions.clone();
        let (provider, api, id) = (model.provider.clone(), model.api.clone(), model.id.clone());
        let hook: rho_ai::StreamEventHook = Arc::new(move |data: &str| {
            // The API's own events, as pi parses them: not a stream's end marker (`[DONE]`) or
            // Anthropic's keep-alive `ping`.
            let Ok(data) = serde_json::from_str::<Value>(data) else { return };
            if data.get("type").and_then(Value::as_str) == Some("ping") {
                return;
            }
            let event =
                json!({"type": "provider_stream_event", "provider": provider, "api": api, "model": id, "data": data});
            extensions.notify(&ToHost::Event { kind: "emit".into(), event }, false);
        });
        hook
    });
    rho_ai::RequestHooks { payload, headers, response, stream_event }
}
