//! pi's assistant-message events, as a pi-messages backend streams them, to [`Emitter`] calls.
//!
//! Each event names its block by `contentIndex`; a `*_start` opens the next block and every other
//! event must name an open one, else the stream is refused as malformed (a backend cannot make
//! rho index past its content). An `*_end` carries the block's whole content, which wins over the
//! deltas: what the deltas left out is sent as one more delta. `done` ends the reply with its
//! stop reason, usage and response id; `error` fails it with the backend's message; a body that
//! ends before either was cut short.

use serde::Deserialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::sse::{Interrupted, SseStream, parse_data};
use crate::stream::Emitter;
use crate::types::{AssistantContent, StopReason, Usage};

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    Start,
    TextStart(Index),
    TextDelta(Delta),
    TextEnd(End),
    ThinkingStart(Index),
    ThinkingDelta(Delta),
    ThinkingEnd(End),
    #[serde(rename = "toolcall_start")]
    ToolCallStart {
        #[serde(rename = "contentIndex")]
        content_index: i64,
        id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
    },
    #[serde(rename = "toolcall_delta")]
    ToolCallDelta(Delta),
    #[serde(rename = "toolcall_end")]
    ToolCallEnd {
        #[serde(rename = "contentIndex")]
        content_index: i64,
        #[serde(rename = "toolCall")]
        tool_call: WireToolCall,
    },
    Done(Finish),
    Error(Finish),
    /// Event types a newer backend may add.
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Index {
    content_index: i64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delta {
    content_index: i64,
    delta: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct End {
    content_index: i64,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    content_signature: Option<String>,
    #[serde(default)]
    redacted: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireToolCall {
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    #[serde(default)]
    thought_signature: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Finish {
    reason: String,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error_message: Option<String>,
    #[serde(default)]
    response_id: Option<String>,
}

/// Reads pi's events from `sse` into `emitter` until `done` or `error`.
pub(crate) async fn consume(
    mut sse: SseStream,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
) -> Result<StopReason, Interrupted> {
    // What was streamed of each tool call's arguments (an end without deltas sends them whole).
    let mut streamed_arguments: Vec<(usize, bool)> = Vec::new();
    while let Some(event) = sse.next(cancel).await? {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            continue;
        }
        if let Some(error) = super::super::raw_error(data) {
            return Err(error.into());
        }
        match parse_data::<Event>(&event)? {
            Event::Start => emitter.start().await,
            Event::TextStart(Index { content_index }) => {
                next_index(emitter, content_index, "text_start")?;
                emitter.open_text().await;
            }
            Event::ThinkingStart(Index { content_index }) => {
                next_index(emitter, content_index, "thinking_start")?;
                emitter.open_thinking().await;
            }
            Event::ToolCallStart { content_index, id, tool_name } => {
                next_index(emitter, content_index, "toolcall_start")?;
                let index = emitter.open_tool_call(id, tool_name).await;
                streamed_arguments.push((index, false));
            }
            Event::TextDelta(d) => {
                let index = block(emitter, d.content_index, "text_delta", Kind::Text)?;
                emitter.text_delta(index, d.delta).await;
            }
            Event::ThinkingDelta(d) => {
                let index = block(emitter, d.content_index, "thinking_delta", Kind::Thinking)?;
                emitter.thinking_delta(index, d.delta).await;
            }
            Event::ToolCallDelta(d) => {
                let index = block(emitter, d.content_index, "toolcall_delta", Kind::ToolCall)?;
                if let Some(entry) = streamed_arguments.iter_mut().find(|(i, _)| *i == index) {
                    entry.1 |= !d.delta.is_empty();
                }
                emitter.tool_call_delta(index, &d.delta).await;
            }
            Event::TextEnd(end) => {
                let index = block(emitter, end.content_index, "text_end", Kind::Text)?;
                if let Some(rest) = unsent(emitter, index, end.content.as_deref()) {
                    emitter.text_delta(index, rest).await;
                }
                if let Some(signature) = end.content_signature {
                    emitter.set_text_signature(index, signature).await;
                }
                emitter.close(index).await;
            }
            Event::ThinkingEnd(end) => {
                let index = block(emitter, end.content_index, "thinking_end", Kind::Thinking)?;
                if let Some(rest) = unsent(emitter, index, end.content.as_deref()) {
                    emitter.thinking_delta(index, rest).await;
                }
                if let Some(signature) = end.content_signature {
                    emitter.replace_thinking_signature(index, signature);
                }
                if end.redacted == Some(true) {
                    emitter.set_thinking_redacted(index);
                }
                emitter.close(index).await;
            }
            Event::ToolCallEnd { content_index, tool_call } => {
                let index = block(emitter, content_index, "toolcall_end", Kind::ToolCall)?;
                let streamed = streamed_arguments.iter().any(|(i, s)| *i == index && *s);
                if !streamed && let Some(arguments) = tool_call.arguments {
                    emitter.tool_call_delta(index, &Value::Object(arguments).to_string()).await;
                }
                if let Some(signature) = tool_call.thought_signature {
                    emitter.set_thought_signature(index, signature);
                }
                emitter.close(index).await;
            }
            Event::Done(finish) => {
                emitter.close_all().await;
                apply_finish(emitter, &finish);
                return match finish.reason.as_str() {
                    "length" => Ok(StopReason::Length),
                    "toolUse" => Ok(StopReason::ToolUse),
                    _ => Ok(StopReason::Stop),
                };
            }
            Event::Error(finish) => {
                apply_finish(emitter, &finish);
                let message = finish.error_message.filter(|m| !m.is_empty()).unwrap_or_else(|| "Unknown error".into());
                return Err(ProviderError::Stream { error_type: finish.reason, message }.into());
            }
            Event::Other => {}
        }
    }
    Err(ProviderError::StreamEnded(" (no done or error event)".into()).into())
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

/// What an `*_end`'s whole content has beyond what the deltas of text or thinking block `index`
/// sent (`None` when nothing, or when the content does not begin with what was sent).
fn unsent(emitter: &Emitter, index: usize, whole: Option<&str>) -> Option<String> {
    let sent = match emitter.message().content.get(index)? {
        AssistantContent::Text(t) => t.text.as_str(),
        AssistantContent::Thinking(t) => t.thinking.as_str(),
        _ => return None,
    };
    whole?.strip_prefix(sent).filter(|rest| !rest.is_empty()).map(str::to_owned)
}

/// A `*_start` must open the next block.
fn next_index(emitter: &Emitter, index: i64, event: &str) -> Result<(), ProviderError> {
    let next = emitter.message().content.len();
    if usize::try_from(index).ok() == Some(next) {
        Ok(())
    } else {
        Err(ProviderError::Decode(format!("{event} for content index {index}, expected {next}")))
    }
}

/// The content index of an existing block of `kind`.
fn block(emitter: &Emitter, index: i64, event: &str, kind: Kind) -> Result<usize, ProviderError> {
    let found = usize::try_from(index).ok().filter(|i| {
        matches!(
            (kind, emitter.message().content.get(*i)),
            (Kind::Text, Some(AssistantContent::Text(_)))
                | (Kind::Thinking, Some(AssistantContent::Thinking(_)))
                | (Kind::ToolCall, Some(AssistantContent::ToolCall(_)))
        )
    });
    found.ok_or_else(|| ProviderError::Decode(format!("{event} for content index {index}, which is no such block")))
}

/// The backend's token counts and response id (rho prices the tokens with the model's prices).
fn apply_finish(emitter: &mut Emitter, finish: &Finish) {
    if let Some(id) = finish.response_id.as_deref().filter(|id| !id.is_empty()) {
        emitter.set_response_id(id);
    }
    if let Some(wire) = &finish.usage {
        let usage = emitter.usage_mut();
        usage.input = wire.input;
        usage.output = wire.output;
        usage.cache_read = wire.cache_read;
        usage.cache_write = wire.cache_write;
        usage.cache_write_1h = wire.cache_write_1h;
        usage.reasoning = wire.reasoning;
    }
    emitter.set_raw_stop_reason(finish.reason.clone());
}
