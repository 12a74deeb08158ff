//! Replies an extension streams itself (`registerProvider` with `streamSimple`): rho sends the
//! model, the context and the options to the host, which runs the extension's stream function
//! and sends back pi-ai's stream events; here they drive rho-ai's emitter, so the reply reaches
//! the agent as any provider's does (blocks, usage and cost, `done` or `error`). Aborting the
//! request fires the stream's signal in the host.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use futures::future::BoxFuture;
use rho_ai::sse::Interrupted;
use rho_ai::{CustomProvider, Emitter, ProviderError, StreamOptions};
use rho_extensions::{ToHost, UpdateSink};
use rho_types::types::{Context, StopReason};
use rho_types::{Model, ThinkingLevel};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::Extensions;

/// The provider that streams through the extensions' `streamSimple`s.
pub(crate) fn provider_stream(extensions: &Arc<Extensions>) -> Arc<dyn CustomProvider> {
    Arc::new(ExtensionStream(Arc::downgrade(extensions)))
}

struct ExtensionStream(Weak<Extensions>);

impl std::fmt::Debug for ExtensionStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExtensionStream")
    }
}

fn failed(message: impl Into<String>) -> Interrupted {
    Interrupted::Failed(ProviderError::Stream { error_type: "extension".into(), message: message.into() })
}

impl CustomProvider for ExtensionStream {
    fn run<'a>(
        &'a self,
        model: &'a Model,
        context: &'a Context,
        options: &'a StreamOptions,
        emitter: &'a mut Emitter,
    ) -> BoxFuture<'a, Result<StopReason, Interrupted>> {
        Box::pin(async move {
            let extensions = self.0.upgrade().ok_or_else(|| failed("the extensions were unloaded"))?;
            let host = extensions.host().await.map_err(|e| failed(e.to_string()))?;
            let (tx, mut events) = mpsc::unbounded_channel();
            let sink: UpdateSink = Arc::new(move |event| {
                let _ = tx.send(event);
            });
            let message = ToHost::ProviderStream {
                model: serde_json::to_value(model).unwrap_or(Value::Null),
                context: context_json(context),
                options: options_json(options),
            };
            let (id, answer) = host.request_with_updates(&message, Some(sink));
            tokio::pin!(answer);
            let mut reply = Reply::default();
            loop {
                tokio::select! {
                    biased;
                    () = options.cancel.cancelled() => {
                        host.send(&ToHost::Cancel { target: id });
                        return Err(Interrupted::Cancelled);
                    }
                    event = events.recv() => {
                        if let Some(event) = event
                            && let Some(end) = reply.apply(&event, emitter).await
                        {
                            return end;
                        }
                    }
                    answer = &mut answer => {
                        // Every event was handed over before the answer.
                        while let Ok(event) = events.try_recv() {
                            if let Some(end) = reply.apply(&event, emitter).await {
                                return end;
                            }
                        }
                        return Err(match answer {
                            Ok(Ok(_)) => ProviderError::StreamEnded(" (the extension's stream ended without done)".into()).into(),
                            Ok(Err(e)) => failed(e.to_string()),
                            Err(_) => failed("the extension host closed the channel"),
                        });
                    }
                }
            }
        })
    }
}

/// pi-ai's `Context`: the system prompt, the messages and the tools.
fn context_json(context: &Context) -> Value {
    let mut out = Map::new();
    if let Some(system) = &context.system_prompt {
        out.insert("systemPrompt".into(), json!(system));
    }
    out.insert("messages".into(), serde_json::to_value(&context.messages).unwrap_or(json!([])));
    if !context.tools.is_empty() {
        out.insert("tools".into(), serde_json::to_value(&context.tools).unwrap_or(json!([])));
    }
    Value::Object(out)
}

/// pi-ai's `SimpleStreamOptions` (the signal is the host's).
fn options_json(options: &StreamOptions) -> Value {
    let mut out = Map::new();
    if let Some(key) = &options.api_key {
        out.insert("apiKey".into(), json!(key));
    }
    if options.thinking != ThinkingLevel::Off {
        out.insert("reasoning".into(), serde_json::to_value(options.thinking).unwrap_or(Value::Null));
    }
    if let Some(max) = options.max_tokens {
        out.insert("maxTokens".into(), json!(max));
    }
    if let Some(temperature) = options.temperature {
        out.insert("temperature".into(), json!(temperature));
    }
    if let Some(session) = &options.session_id {
        out.insert("sessionId".into(), json!(session));
    }
    if !options.headers.is_empty() {
        let headers: Map<String, Value> = options.headers.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        out.insert("headers".into(), Value::Object(headers));
    }
    Value::Object(out)
}

/// The reply being rebuilt from the extension's events: its content indexes are mapped to the
/// emitter's (they agree unless the extension skips or reorders).
#[derive(Default)]
struct Reply {
    blocks: HashMap<u64, usize>,
    /// Tool calls whose arguments came in deltas.
    streamed_arguments: Vec<usize>,
}

impl Reply {
    /// Applies one event; `Some` when it ended the stream.
    async fn apply(&mut self, event: &Value, emitter: &mut Emitter) -> Option<Result<StopReason, Interrupted>> {
        let index = event.get("contentIndex").and_then(Value::as_u64).unwrap_or(0);
        let delta = event.get("delta").and_then(Value::as_str).unwrap_or_default();
        match event.get("type").and_then(Value::as_str).unwrap_or_default() {
            "start" => emitter.start().await,
            "text_start" => {
                let at = emitter.open_text().await;
                self.blocks.insert(index, at);
            }
            "text_delta" => match self.blocks.get(&index) {
                Some(&at) => emitter.text_delta(at, delta).await,
                None => emitter.text(delta).await,
            },
            "thinking_start" => {
                let at = emitter.open_thinking().await;
                self.blocks.insert(index, at);
            }
            "thinking_delta" => match self.blocks.get(&index) {
                Some(&at) => emitter.thinking_delta(at, delta).await,
                None => emitter.thinking(delta).await,
            },
            "toolcall_start" => {
                let block = event.get("block");
                let field = |name: &str| block.and_then(|b| b.get(name)).and_then(Value::as_str).unwrap_or_default();
                let at = emitter.open_tool_call(field("id").to_owned(), field("name").to_owned()).await;
                self.blocks.insert(index, at);
            }
            "toolcall_delta" => {
                if let Some(&at) = self.blocks.get(&index) {
                    emitter.tool_call_delta(at, delta).await;
                    self.streamed_arguments.push(at);
                }
            }
            "toolcall_end" => {
                let call = event.get("toolCall");
                let text = |name: &str| call.and_then(|c| c.get(name)).and_then(Value::as_str);
                let at = match self.blocks.get(&index) {
                    Some(&at) => at,
                    None => {
                        let at = emitter
                            .open_tool_call(
                                text("id").unwrap_or_default().to_owned(),
                                text("name").unwrap_or_default().to_owned(),
                            )
                            .await;
                        self.blocks.insert(index, at);
                        at
                    }
                };
                emitter.update_tool_call(at, text("id"), text("name"));
                if !self.streamed_arguments.contains(&at) {
                    let arguments = call.and_then(|c| c.get("arguments")).cloned().unwrap_or(json!({}));
                    emitter.tool_call_delta(at, &arguments.to_string()).await;
                }
                emitter.close(at).await;
            }
            "text_end" | "thinking_end" => {
                if let Some(&at) = self.blocks.get(&index) {
                    emitter.close(at).await;
                }
            }
            "done" => {
                usage(event.get("message"), emitter);
                emitter.close_all().await;
                let reason = match event.get("reason").and_then(Value::as_str) {
                    Some("length") => StopReason::Length,
                    Some("toolUse") => StopReason::ToolUse,
                    _ => StopReason::Stop,
                };
                return Some(Ok(reason));
            }
            "error" => {
                let error = event.get("error");
                usage(error, emitter);
                if event.get("reason").and_then(Value::as_str) == Some("aborted") {
                    return Some(Err(Interrupted::Cancelled));
                }
                let message = error
                    .and_then(|e| e.get("errorMessage"))
                    .and_then(Value::as_str)
                    .unwrap_or("the extension's stream failed");
                return Some(Err(failed(message)));
            }
            _ => {}
        }
        None
    }
}

/// The token counts of pi-ai's final message (rho prices them with the model's cost).
fn usage(message: Option<&Value>, emitter: &mut Emitter) {
    let Some(reported) = message.and_then(|m| m.get("usage")) else {
        return;
    };
    let count = |name: &str| reported.get(name).and_then(Value::as_u64).unwrap_or(0);
    let usage = emitter.usage_mut();
    usage.input = count("input");
    usage.output = count("output");
    usage.cache_read = count("cacheRead");
    usage.cache_write = count("cacheWrite");
}
