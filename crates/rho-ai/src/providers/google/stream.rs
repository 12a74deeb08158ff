//! Gemini's streamed `GenerateContentResponse` chunks to [`Emitter`] calls.
//!
//! Parts carry text (`thought: true` for thinking) or whole function calls; a `thoughtSignature`
//! on any part is kept on the block it belongs to (a call's is on it from its `toolcall_end`
//! on). Gemini sends no end marker: the chunk with a `finishReason` is the last, and a body that
//! ends before one was cut short.
//!
//! A prompt Gemini refuses comes back as a chunk with `promptFeedback.blockReason` and no
//! candidate: it fails the message with that reason, and retrying would be refused the same
//! way. An error chunk carries the HTTP status it stands for (`code: 429`,
//! `RESOURCE_EXHAUSTED`), so it is classified as that status would be; Gemini writes one
//! without SSE framing when it aborts a stream, which the SSE layer passes on as data.

use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::providers::generated_tool_call_id;
use crate::sse::{Interrupted, SseStream, parse_data};
use crate::stream::Emitter;
use crate::types::{AssistantContent, StopReason, Usage};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk {
    #[serde(default)]
    candidates: Vec<Candidate>,
    #[serde(default)]
    usage_metadata: Option<UsageMetadata>,
    #[serde(default)]
    response_id: Option<String>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    prompt_feedback: Option<PromptFeedback>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
    #[serde(default)]
    block_reason_message: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(default)]
    thought_signature: Option<String>,
    #[serde(default)]
    function_call: Option<FunctionCall>,
}

#[derive(Debug, Deserialize)]
struct FunctionCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    args: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
    #[serde(default)]
    thoughts_token_count: Option<u64>,
    #[serde(default)]
    cached_content_token_count: Option<u64>,
}

/// Reads Gemini chunks from `sse` into `emitter` until the body ends.
pub(crate) async fn consume(
    mut sse: SseStream,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
) -> Result<StopReason, Interrupted> {
    let mut finish: Option<Result<StopReason, ProviderError>> = None;
    let mut started = false;
    while let Some(event) = sse.next(cancel).await? {
        if event.data.trim().is_empty() {
            continue;
        }
        let chunk: Chunk = parse_data(&event)?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error).into());
        }
        if !started {
            started = true;
            if let Some(id) = chunk.response_id {
                emitter.set_response_id(id);
            }
            emitter.start().await;
        }
        if let Some(usage) = &chunk.usage_metadata {
            apply_usage(emitter.usage_mut(), usage);
        }
        let Some(candidate) = chunk.candidates.into_iter().next() else {
            if let Some(blocked) = chunk.prompt_feedback.and_then(blocked_prompt) {
                return Err(blocked.into());
            }
            continue;
        };
        for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
            apply_part(emitter, part).await;
        }
        if let Some(reason) = candidate.finish_reason {
            finish = Some(map_finish_reason(&reason));
            emitter.set_raw_stop_reason(reason);
        }
    }
    match finish {
        Some(Ok(stop)) => Ok(stop),
        Some(Err(refused)) => {
            // The blocks streamed so far end as they would on success (`text_end` before the
            // error, as pi sends it): they are complete, only the reply was stopped.
            emitter.close_all().await;
            Err(refused.into())
        }
        None => Err(ProviderError::StreamEnded(String::new()).into()),
    }
}

async fn apply_part(emitter: &mut Emitter, part: Part) {
    let signature = part.thought_signature.filter(|s| !s.is_empty());
    if let Some(call) = part.function_call {
        let name = call.name.unwrap_or_default();
        let duplicate = |id: &str| emitter.message().tool_calls().any(|c| c.id == id);
        let id = match call.id.filter(|id| !id.is_empty()) {
            Some(id) if !duplicate(&id) => id,
            _ => generated_tool_call_id(&name),
        };
        let arguments = match call.args {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        // A whole call: start, its signature, one delta, end (so `toolcall_end` carries it).
        emitter.close_all().await;
        let index = emitter.open_tool_call(id, name).await;
        if let Some(signature) = signature {
            emitter.set_thought_signature(index, signature);
        }
        let raw = Value::Object(arguments).to_string();
        emitter.tool_call_delta(index, &raw).await;
        emitter.close(index).await;
        return;
    }
    let Some(text) = part.text else {
        return;
    };
    let thought = part.thought == Some(true);
    if thought {
        emitter.thinking(&text).await;
    } else {
        emitter.text(&text).await;
    }
    let Some(signature) = signature else {
        return;
    };
    // The block the text went to is the last one; an empty part signs the block before it.
    let last = emitter.message().content.len().checked_sub(1);
    match (last, last.and_then(|i| emitter.message().content.get(i))) {
        (Some(i), Some(AssistantContent::Thinking(_))) if thought => {
            emitter.replace_thinking_signature(i, signature);
        }
        (Some(i), Some(AssistantContent::Text(_))) if !thought => {
            emitter.set_text_signature(i, signature).await;
        }
        _ => {}
    }
}

fn apply_usage(usage: &mut Usage, wire: &UsageMetadata) {
    let cached = wire.cached_content_token_count.unwrap_or(0);
    usage.input = wire.prompt_token_count.unwrap_or(0).saturating_sub(cached);
    usage.cache_read = cached;
    usage.cache_write = 0;
    usage.output = wire.candidates_token_count.unwrap_or(0) + wire.thoughts_token_count.unwrap_or(0);
    usage.reasoning = wire.thoughts_token_count;
}

/// `STOP` ends normally and `MAX_TOKENS` is `length`; every other reason (safety, recitation,
/// a malformed function call, …) fails the message.
fn map_finish_reason(reason: &str) -> Result<StopReason, ProviderError> {
    match reason {
        "STOP" => Ok(StopReason::Stop),
        "MAX_TOKENS" => Ok(StopReason::Length),
        other => Err(ProviderError::Stream {
            error_type: other.to_owned(),
            message: format!("Provider finishReason: {other}"),
        }),
    }
}

/// An `error` object in the stream (`{code, message, status}`). Its `code` is the HTTP status
/// the error stands for, so it fails the message as that status would (a 429 is retried, a 400
/// may be a context overflow); the text keeps the status name first, as the reference shows it.
fn stream_error(error: &Value) -> ProviderError {
    let message = error.get("message").and_then(Value::as_str).unwrap_or("Unknown error");
    let status_name = error.get("status").and_then(Value::as_str).filter(|s| !s.is_empty());
    let code = error.get("code").and_then(|c| c.as_u64().or_else(|| c.as_str()?.parse().ok()));
    let text = match status_name {
        Some(name) => format!("{name}: {message}"),
        None => message.to_owned(),
    };
    match code.and_then(|c| u16::try_from(c).ok()).filter(|c| (400..600).contains(c)) {
        Some(status) => ProviderError::Http { status, message: text, retry_after: None, code: None },
        None => ProviderError::Stream {
            error_type: status_name.map(str::to_owned).or_else(|| code.map(|c| c.to_string())).unwrap_or_default(),
            message: text,
        },
    }
}

/// The failure for a prompt Gemini refused (`promptFeedback.blockReason`); `None` when it was
/// not refused.
fn blocked_prompt(feedback: PromptFeedback) -> Option<ProviderError> {
    let reason = feedback.block_reason.filter(|r| !r.is_empty())?;
    let mut message = format!("Prompt blocked by the provider: {reason}");
    if let Some(detail) = feedback.block_reason_message.filter(|m| !m.is_empty()) {
        message.push_str(" (");
        message.push_str(&detail);
        message.push(')');
    }
    Some(ProviderError::Stream { error_type: format!("blocked_{}", reason.to_ascii_lowercase()), message })
}
