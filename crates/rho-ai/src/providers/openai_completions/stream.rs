//! Chat Completions chunks to [`Emitter`] calls.
//!
//! Blocks are implicit: text and thinking deltas append to the open block of their kind (a
//! change of kind closes it), tool calls are keyed by their `index` and may stream side by side.
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
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// A tool call seen in the stream: its `index`, its content index, and whether it is still
/// open (text or thinking arriving after it closes it).
#[derive(Debug)]
struct Call {
    key: u64,
    index: usize,
    open: bool,
}

#[derive(Debug, Default)]
struct State {
    calls: Vec<Call>,
    /// The thinking block whose signature (the field name) is already set.
    signed_thinking: Option<usize>,
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
    while let Some(event) = sse.next(cancel).await? {
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
        close_calls(state);
        emitter.thinking(text).await;
        if let Some(index) = emitter.open_thinking_index()
            && state.signed_thinking != Some(index)
        {
            emitter.replace_thinking_signature(index, (*field).to_owned());
            state.signed_thinking = Some(index);
        }
        break;
    }
    if let Some(text) = delta.content.as_deref().filter(|t| !t.is_empty()) {
        close_calls(state);
        emitter.text(text).await;
    }
    for call in delta.tool_calls.unwrap_or_default() {
        apply_tool_call(state, emitter, call).await;
    }
}

/// Text and thinking close every open block, tool calls included.
fn close_calls(state: &mut State) {
    for call in &mut state.calls {
        call.open = false;
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
        Some(call) if !call.open => return,
        Some(call) => {
            emitter.update_tool_call(call.index, id.as_deref(), name.as_deref());
            call.index
        }
        None => {
            if !state.calls.iter().any(|c| c.open) {
                emitter.close_all().await;
            }
            let name = name.unwrap_or_default();
            let id = id.unwrap_or_else(|| generated_tool_call_id(&name));
            let index = emitter.open_tool_call(id, name).await;
            state.calls.push(Call { key, index, open: true });
            index
        }
    };
    if let Some(arguments) = function.arguments.as_deref() {
        emitter.tool_call_delta(index, arguments).await;
    }
}

fn apply_usage(usage: &mut Usage, wire: &WireUsage) {
    let cached = wire.prompt_tokens_details.as_ref().and_then(|d| d.cached_tokens).unwrap_or(0);
    let reasoning = wire.completion_tokens_details.as_ref().and_then(|d| d.reasoning_tokens).unwrap_or(0);
    usage.input = wire.prompt_tokens.unwrap_or(0).saturating_sub(cached);
    usage.cache_read = cached;
    usage.cache_write = 0;
    usage.output = wire.completion_tokens.unwrap_or(0) + reasoning;
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
