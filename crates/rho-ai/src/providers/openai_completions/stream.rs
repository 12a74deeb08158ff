//! Chat Completions chunks to [`Emitter`] calls.
//!
//! Blocks are implicit, and built as pi 0.73 builds them: one thinking block, one text block and
//! the tool calls keyed by their `index`, all open side by side until the stream ends (or is
//! aborted), then closed in content order.
//! A reply ends at `data: [DONE]`; a body that ends before it and before any `finish_reason`
//! was cut short.

use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::format::REASONING_FIELDS;
use crate::error::ProviderError;
use crate::providers::generated_tool_call_id;
use crate::sse::{Interrupted, SseStream, parse_data};
use crate::stream::Emitter;
use crate::types::{StopReason, Usage};

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<Value>,
    #[serde(default)]
    reasoning: Option<Value>,
    #[serde(default)]
    reasoning_text: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
    /// DeepSeek's cache hits.
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
    /// Kimi's cache hits, on the final usage chunk.
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
    /// Written to the cache (OpenRouter-compatible servers), apart from the hits.
    #[serde(default)]
    cache_write_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// A tool call seen in the stream: its `index` in the stream and its content index.
#[derive(Debug)]
struct Call {
    key: u64,
    index: usize,
}

/// The reply's blocks as pi 0.73 builds them from Chat Completions: one thinking block, one
/// text block (text arriving after a tool call joins it) and the tool calls by their stream
/// index, all open until the stream ends, then closed in content order (also when the request
/// is aborted).
#[derive(Debug, Default)]
struct State {
    thinking: Option<usize>,
    text: Option<usize>,
    calls: Vec<Call>,
    finish: Option<Result<StopReason, ProviderError>>,
    started: bool,
}

/// Reads Chat Completions chunks from `sse` into `emitter` until `[DONE]`.
pub(crate) async fn consume(
    mut sse: SseStream,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
) -> Result<StopReason, Interrupted> {
    let mut state = State::default();
    loop {
        let event = match sse.next(cancel).await {
            Ok(Some(event)) => event,
            Ok(None) => break,
            // An aborted reply still ends its blocks first, as pi's does.
            Err(Interrupted::Cancelled) => {
                emitter.close_all().await;
                return Err(Interrupted::Cancelled);
            }
            Err(e) => return Err(e),
        };
        let data = event.data.trim();
        if data.is_empty() {
            continue;
        }
        if data == "[DONE]" {
            return finish(state.finish);
        }
        let chunk: Chunk = parse_data(&event)?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error).into());
        }
        if !state.started {
            state.started = true;
            if let Some(id) = chunk.id.filter(|id| !id.is_empty()) {
                emitter.set_response_id(id);
            }
            emitter.start().await;
        }
        if let Some(usage) = &chunk.usage {
            apply_usage(emitter.usage_mut(), usage);
        }
        let Some(choice) = chunk.choices.into_iter().next() else {
            continue;
        };
        if let Some(delta) = choice.delta {
            apply_delta(&mut state, emitter, delta).await;
        }
        if let Some(reason) = choice.finish_reason {
            state.finish = Some(map_finish_reason(&reason));
            emitter.set_raw_stop_reason(reason);
        }
    }
    // Some servers close the body after the finish reason without `[DONE]`.
    match state.finish {
        Some(_) => finish(state.finish),
        None => Err(ProviderError::StreamEnded(String::new()).into()),
    }
}

fn finish(reason: Option<Result<StopReason, ProviderError>>) -> Result<StopReason, Interrupted> {
    reason.unwrap_or(Ok(StopReason::Stop)).map_err(Interrupted::from)
}

async fn apply_delta(state: &mut State, emitter: &mut Emitter, delta: Delta) {
    let reasoning = [&delta.reasoning_content, &delta.reasoning, &delta.reasoning_text];
    for (field, value) in REASONING_FIELDS.iter().zip(reasoning) {
        let Some(text) = value.as_ref().and_then(Value::as_str) else {
            continue;
        };
        if text.is_empty() {
            continue;
        }
        let index = match state.thinking {
            Some(index) => index,
            None => {
                let index = emitter.open_thinking().await;
                // The field it came in is its signature (how it goes back).
                emitter.replace_thinking_signature(index, (*field).to_owned());
                *state.thinking.insert(index)
            }
        };
        emitter.thinking_delta(index, text).await;
        break;
    }
    if let Some(text) = delta.content.as_deref().filter(|t| !t.is_empty()) {
        let index = match state.text {
            Some(index) => index,
            None => *state.text.insert(emitter.open_text().await),
        };
        emitter.text_delta(index, text).await;
    }
    for call in delta.tool_calls.unwrap_or_default() {
        apply_tool_call(state, emitter, call).await;
    }
}

async fn apply_tool_call(state: &mut State, emitter: &mut Emitter, delta: ToolCallDelta) {
    let id = delta.id.filter(|id| !id.is_empty());
    let function = delta.function.unwrap_or_default();
    let name = function.name.filter(|n| !n.is_empty());
    // Without an index, a new id starts a new call and anything else continues the last one.
    let key = match delta.index {
        Some(key) => key,
        None => match (&id, state.calls.last()) {
            (None, Some(last)) => last.key,
            _ => state.calls.iter().map(|c| c.key + 1).max().unwrap_or(0),
        },
    };
    let index = match state.calls.iter().find(|c| c.key == key) {
        Some(call) => {
            emitter.update_tool_call(call.index, id.as_deref(), name.as_deref());
            call.index
        }
        None => {
            let name = name.unwrap_or_default();
            let id = id.unwrap_or_else(|| generated_tool_call_id(&name));
            let index = emitter.open_tool_call(id, name).await;
            state.calls.push(Call { key, index });
            index
        }
    };
    if let Some(arguments) = function.arguments.as_deref() {
        emitter.tool_call_delta(index, arguments).await;
    }
}

/// The usage as pi 1.6 reads it: cache hits wherever the server puts them (OpenAI's
/// `prompt_tokens_details`, DeepSeek's `prompt_cache_hit_tokens`, Kimi's `cached_tokens`), cache
/// writes apart from the hits, and `completion_tokens` as the output, which already counts the
/// reasoning tokens.
fn apply_usage(usage: &mut Usage, wire: &WireUsage) {
    let details = wire.prompt_tokens_details.as_ref();
    let cached =
        details.and_then(|d| d.cached_tokens).or(wire.prompt_cache_hit_tokens).or(wire.cached_tokens).unwrap_or(0);
    let written = details.and_then(|d| d.cache_write_tokens).unwrap_or(0);
    usage.input = wire.prompt_tokens.unwrap_or(0).saturating_sub(cached).saturating_sub(written);
    usage.cache_read = cached;
    usage.cache_write = written;
    usage.output = wire.completion_tokens.unwrap_or(0);
    usage.reasoning =
        wire.completion_tokens_details.as_ref().and_then(|d| d.reasoning_tokens).or(wire.reasoning_tokens);
}

fn map_finish_reason(reason: &str) -> Result<StopReason, ProviderError> {
    match reason {
        "length" => Ok(StopReason::Length),
        "tool_calls" | "function_call" => Ok(StopReason::ToolUse),
        "content_filter" | "network_error" => Err(ProviderError::Stream {
            error_type: reason.to_owned(),
            message: format!("Provider finish_reason: {reason}"),
        }),
        _ => Ok(StopReason::Stop),
    }
}

/// An `error` object inside a chunk (OpenRouter and others report mid-stream failures so, and
/// servers that write their error JSON without SSE framing). OpenRouter's upstream details
/// (`metadata.raw`) follow the message on a line of their own, as the reference shows them.
fn stream_error(error: &Value) -> ProviderError {
    let mut message =
        error.get("message").and_then(Value::as_str).or_else(|| error.as_str()).unwrap_or("Unknown error").to_owned();
    if let Some(raw) = error.pointer("/metadata/raw").and_then(Value::as_str).filter(|r| !r.is_empty()) {
        message.push('\n');
        message.push_str(raw);
    }
    let error_type = ["type", "code"]
        .iter()
        .find_map(|k| match error.get(*k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        })
        .unwrap_or_default();
    ProviderError::Stream { error_type, message }
}
