//! Bedrock's `ConverseStream` answer, AWS's binary event stream, to [`Emitter`] calls.
//!
//! Frames are cut from the body by `aws-smithy-eventstream` (prelude, headers, payload and both
//! CRCs checked). An `event` frame is named by its `:event-type` header and carries JSON:
//! `messageStart`, then per block `contentBlockStart` (tool calls only: text and reasoning
//! blocks begin with their first delta), `contentBlockDelta`*, `contentBlockStop`; then
//! `messageStop` with the stop reason and `metadata` with the usage. An `exception` frame
//! (`:exception-type`) fails the reply with pi's prefix for it ("Throttling error: …"), which
//! is what retry and overflow detection read. A body that ends before `messageStop` was cut
//! short.

use std::pin::Pin;
use std::time::Duration;

use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use aws_smithy_types::event_stream::{HeaderValue, Message};
use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::sse::Interrupted;
use crate::stream::Emitter;
use crate::types::{StopReason, Usage};

/// The longest frame accepted: AWS's event stream caps a payload at 16 MiB and its headers at
/// 128 KiB; a longer length is a corrupt stream, not something to wait for.
const MAX_FRAME: usize = 24 * 1024 * 1024;

type Body = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

/// A response body read as event-stream frames.
pub(crate) struct Frames {
    body: Body,
    buffer: BytesMut,
    decoder: MessageFrameDecoder,
    idle: Duration,
}

impl Frames {
    pub(crate) fn new<S>(body: S, idle: Duration) -> Self
    where
        S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
    {
        Self { body: Box::pin(body), buffer: BytesMut::new(), decoder: MessageFrameDecoder::new(), idle }
    }

    /// The next whole frame; `Ok(None)` when the body ended between frames.
    pub(crate) async fn next(&mut self, cancel: &CancellationToken) -> Result<Option<Message>, Interrupted> {
        loop {
            // A frame is handed to the decoder only once all of it is here (its first four
            // bytes give its length), so nothing of it is held outside the buffer.
            let declared =
                self.buffer.get(..4).map(|len| u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize);
            if declared.is_some_and(|len| len > MAX_FRAME) {
                return Err(ProviderError::Decode("bad event-stream frame: longer than 24 MiB".into()).into());
            }
            let whole = declared.is_some_and(|len| self.buffer.len() >= len);
            if whole {
                return match self.decoder.decode_frame(&mut self.buffer) {
                    Ok(DecodedFrame::Complete(message)) => Ok(Some(message)),
                    Ok(DecodedFrame::Incomplete) => {
                        Err(ProviderError::Decode("bad event-stream frame: length too short".into()).into())
                    }
                    Err(e) => Err(ProviderError::Decode(format!("bad event-stream frame: {e}")).into()),
                };
            }
            let read = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Interrupted::Cancelled),
                r = tokio::time::timeout(self.idle, self.body.next()) => r,
            };
            match read {
                Err(_) => return Err(ProviderError::Idle(self.idle.as_millis() as u64).into()),
                Ok(Some(Ok(chunk))) => self.buffer.extend_from_slice(&chunk),
                Ok(Some(Err(e))) => {
                    return Err(ProviderError::StreamEnded(format!(": {}", crate::redact::reqwest_error(&e))).into());
                }
                Ok(None) if self.buffer.is_empty() => return Ok(None),
                Ok(None) => return Err(ProviderError::StreamEnded(String::new()).into()),
            }
        }
    }
}

fn header<'a>(message: &'a Message, name: &str) -> Option<&'a str> {
    message.headers().iter().find(|h| h.name().as_str() == name).and_then(|h| match h.value() {
        HeaderValue::String(s) => Some(s.as_str()),
        _ => None,
    })
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStart {
    content_block_index: u64,
    #[serde(default)]
    start: Option<StartKind>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StartKind {
    #[serde(default)]
    tool_use: Option<ToolUseStart>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUseStart {
    #[serde(default)]
    tool_use_id: String,
    #[serde(default)]
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockDelta {
    content_block_index: u64,
    #[serde(default)]
    delta: Delta,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delta {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_use: Option<ToolUseDelta>,
    #[serde(default)]
    reasoning_content: Option<ReasoningDelta>,
}

#[derive(Debug, Deserialize)]
struct ToolUseDelta {
    #[serde(default)]
    input: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReasoningDelta {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    signature: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStop {
    content_block_index: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageStop {
    #[serde(default)]
    stop_reason: String,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    #[serde(default)]
    usage: Option<MetadataUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetadataUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_write_input_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
}

fn payload<T: serde::de::DeserializeOwned>(message: &Message, event: &str) -> Result<T, ProviderError> {
    serde_json::from_slice(message.payload()).map_err(|e| ProviderError::Decode(format!("bad {event} event: {e}")))
}

/// Which of our content blocks each Bedrock block index streams into.
#[derive(Default)]
struct Blocks(Vec<(u64, usize)>);

impl Blocks {
    fn get(&self, bedrock: u64) -> Option<usize> {
        self.0.iter().find(|(b, _)| *b == bedrock).map(|(_, ours)| *ours)
    }

    fn insert(&mut self, bedrock: u64, ours: usize) {
        self.0.push((bedrock, ours));
    }

    fn remove(&mut self, bedrock: u64) -> Option<usize> {
        let pos = self.0.iter().position(|(b, _)| *b == bedrock)?;
        Some(self.0.remove(pos).1)
    }
}

pub(crate) async fn consume(
    mut frames: Frames,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
) -> Result<StopReason, Interrupted> {
    let mut blocks = Blocks::default();
    let mut stop: Option<Result<StopReason, ProviderError>> = None;
    while let Some(message) = frames.next(cancel).await? {
        match header(&message, ":message-type") {
            Some("event") => {}
            Some("exception") => return Err(exception(&message).into()),
            Some("error") => {
                let code = header(&message, ":error-code").unwrap_or("error");
                let text = header(&message, ":error-message").unwrap_or("");
                return Err(ProviderError::Stream { error_type: code.to_owned(), message: text.to_owned() }.into());
            }
            other => {
                return Err(ProviderError::Decode(format!("unknown event-stream message type {other:?}")).into());
            }
        }
        let event = header(&message, ":event-type").unwrap_or_default();
        match event {
            "messageStart" => emitter.start().await,
            "contentBlockStart" => {
                let start: BlockStart = payload(&message, event)?;
                if let Some(tool) = start.start.and_then(|s| s.tool_use) {
                    let index = emitter.open_tool_call(tool.tool_use_id, tool.name).await;
                    blocks.insert(start.content_block_index, index);
                }
            }
            "contentBlockDelta" => {
                let delta: BlockDelta = payload(&message, event)?;
                apply_delta(emitter, &mut blocks, delta).await;
            }
            "contentBlockStop" => {
                let block: BlockStop = payload(&message, event)?;
                if let Some(index) = blocks.remove(block.content_block_index) {
                    emitter.close(index).await;
                }
            }
            "messageStop" => {
                let end: MessageStop = payload(&message, event)?;
                stop = Some(map_stop_reason(&end.stop_reason));
                emitter.set_raw_stop_reason(end.stop_reason);
            }
            "metadata" => {
                let metadata: Metadata = payload(&message, event)?;
                if let Some(usage) = metadata.usage {
                    apply_usage(emitter.usage_mut(), &usage);
                }
            }
            // Events added to the API later carry nothing this reply needs.
            _ => {}
        }
    }
    match stop {
        Some(Ok(stop)) => Ok(stop),
        Some(Err(e)) => {
            emitter.close_all().await;
            Err(e.into())
        }
        None => Err(ProviderError::StreamEnded(String::new()).into()),
    }
}

async fn apply_delta(emitter: &mut Emitter, blocks: &mut Blocks, delta: BlockDelta) {
    let bedrock = delta.content_block_index;
    let delta = delta.delta;
    if let Some(text) = delta.text {
        let index = match blocks.get(bedrock) {
            Some(index) => index,
            None => {
                let index = emitter.open_text().await;
                blocks.insert(bedrock, index);
                index
            }
        };
        emitter.text_delta(index, text).await;
    } else if let Some(tool) = delta.tool_use {
        if let Some(index) = blocks.get(bedrock) {
            emitter.tool_call_delta(index, &tool.input).await;
        }
    } else if let Some(reasoning) = delta.reasoning_content {
        let index = match blocks.get(bedrock) {
            Some(index) => index,
            None => {
                let index = emitter.open_thinking().await;
                blocks.insert(bedrock, index);
                index
            }
        };
        if let Some(text) = reasoning.text {
            emitter.thinking_delta(index, text).await;
        }
        if let Some(signature) = reasoning.signature.filter(|s| !s.is_empty()) {
            emitter.set_thinking_signature(index, signature);
        }
    }
}

fn apply_usage(usage: &mut Usage, from: &MetadataUsage) {
    usage.input = from.input_tokens;
    usage.output = from.output_tokens;
    usage.cache_read = from.cache_read_input_tokens;
    usage.cache_write = from.cache_write_input_tokens;
    usage.total_tokens = if from.total_tokens > 0 { from.total_tokens } else { from.input_tokens + from.output_tokens };
}

/// pi's mapping; a reply stopped for any other reason (a guardrail, a content filter) fails
/// naming the reason, as a Gemini reply stopped for safety does.
fn map_stop_reason(reason: &str) -> Result<StopReason, ProviderError> {
    match reason {
        "end_turn" | "stop_sequence" => Ok(StopReason::Stop),
        "max_tokens" | "model_context_window_exceeded" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        other => Err(ProviderError::Stream {
            error_type: other.to_owned(),
            message: format!("Provider stopReason: {other}"),
        }),
    }
}

/// An exception frame as pi reports it: the exception's message after a readable prefix.
fn exception(message: &Message) -> ProviderError {
    let kind = header(message, ":exception-type").unwrap_or("exception");
    let text = serde_json::from_slice::<Value>(message.payload())
        .ok()
        .and_then(|v| v.get("message").or_else(|| v.get("Message")).and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(message.payload()).into_owned());
    ProviderError::Stream { error_type: kind.to_owned(), message: format!("{}: {text}", error_prefix(kind)) }
}

/// The readable name pi gives an AWS exception (its retry and overflow patterns read these);
/// other exceptions keep their own name.
pub(crate) fn error_prefix(kind: &str) -> String {
    // Event-stream exception types are lower camel case (`throttlingException`), HTTP ones upper.
    let mut name = kind.to_owned();
    if let Some(first) = name.get(..1) {
        name.replace_range(..1, &first.to_uppercase());
    }
    match name.as_str() {
        "InternalServerException" => "Internal server error".to_owned(),
        "ModelStreamErrorException" => "Model stream error".to_owned(),
        "ValidationException" => "Validation error".to_owned(),
        "ThrottlingException" => "Throttling error".to_owned(),
        "ServiceUnavailableException" => "Service unavailable".to_owned(),
        _ => name,
    }
}
