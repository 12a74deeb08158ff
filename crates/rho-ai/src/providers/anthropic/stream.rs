//! Anthropic's SSE events to [`Emitter`] calls.
//!
//! Content blocks arrive with the API's own index; each maps to the content index the emitter
//! gave it. A reply is complete only at `message_stop`: a body that ends before it was cut
//! short, which is worth retrying.

use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::sse::{Interrupted, SseStream, parse_data};
use crate::stream::Emitter;
use crate::types::{StopReason, ToolSpec, Usage};

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: u64,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u64,
        delta: Delta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop {},
    Error {
        error: WireError,
    },
    /// `ping` and anything newer than this code.
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct MessageStart {
    #[serde(default)]
    id: Option<String>,
    /// The model that answers: another than the one asked when a fallback took over.
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Default, Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    /// The cache writes by retention; the one-hour ones are priced apart.
    cache_creation: Option<CacheCreation>,
}

#[derive(Debug, Default, Deserialize)]
struct CacheCreation {
    ephemeral_1h_input_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct WireError {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    message: String,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    #[serde(other)]
    Other,
}

/// A `content_block_delta` payload, named by what it extends.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    /// `citations_delta` and anything newer.
    #[serde(other)]
    Other,
}

/// A content block still streaming: the API's index, ours, and for tool calls the input sent
/// up front (used only when no `input_json_delta` follows).
#[derive(Debug)]
struct OpenBlock {
    wire: u64,
    index: usize,
    initial_input: Option<String>,
}

/// Reads Anthropic's events from `sse` into `emitter` until `message_stop`. With
/// `claude_code_tools` (a subscription request's tools), tool names in Claude Code's casing are
/// turned back into those tools' names.
pub(crate) async fn consume(
    mut sse: SseStream,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
    claude_code_tools: Option<&[ToolSpec]>,
) -> Result<StopReason, Interrupted> {
    let mut open: Vec<OpenBlock> = Vec::new();
    let mut stop: Result<StopReason, ProviderError> = Ok(StopReason::Stop);
    while let Some(event) = sse.next(cancel).await? {
        if event.data.trim().is_empty() {
            continue;
        }
        let parsed = match parse_data::<Event>(&event) {
            Ok(parsed) => parsed,
            Err(e) => return Err(crate::providers::raw_error(&event.data).unwrap_or(e).into()),
        };
        match parsed {
            Event::MessageStart { message } => {
                if let Some(id) = message.id {
                    emitter.set_response_id(id);
                }
                if let Some(model) = message.model {
                    emitter.answered_by(&model);
                }
                if let Some(usage) = message.usage {
                    apply_usage(emitter.usage_mut(), &usage);
                }
                // One-hour cache writes are counted from the start, zero when none are reported.
                emitter.usage_mut().cache_write_1h.get_or_insert(0);
                emitter.start().await;
            }
            Event::ContentBlockStart { index: wire, content_block } => match content_block {
                Block::Text { text } => {
                    let index = emitter.open_text().await;
                    emitter.text_delta(index, &text).await;
                    open.push(OpenBlock { wire, index, initial_input: None });
                }
                Block::Thinking { thinking, signature } => {
                    let index = emitter.open_thinking().await;
                    emitter.thinking_delta(index, &thinking).await;
                    if let Some(s) = signature.filter(|s| !s.is_empty()) {
                        emitter.set_thinking_signature(index, s);
                    }
                    open.push(OpenBlock { wire, index, initial_input: None });
                }
                Block::RedactedThinking { data } => emitter.redacted_thinking(data).await,
                Block::ToolUse { id, name, input } => {
                    let name = match claude_code_tools {
                        Some(tools) => super::claude_code::to_ours(name, tools),
                        None => name,
                    };
                    let index = emitter.open_tool_call(id, name).await;
                    let initial_input =
                        input.filter(|v| v.as_object().is_some_and(|o| !o.is_empty())).map(|v| v.to_string());
                    open.push(OpenBlock { wire, index, initial_input });
                }
                Block::Other => {}
            },
            Event::ContentBlockDelta { index: wire, delta } => {
                let Some(block) = open.iter_mut().find(|b| b.wire == wire) else {
                    continue;
                };
                match delta {
                    Delta::Text { text } => emitter.text_delta(block.index, text).await,
                    Delta::Thinking { thinking } => {
                        emitter.thinking_delta(block.index, thinking).await;
                    }
                    Delta::Signature { signature } => {
                        emitter.set_thinking_signature(block.index, signature);
                    }
                    Delta::InputJson { partial_json } => {
                        if !partial_json.is_empty() {
                            block.initial_input = None;
                        }
                        emitter.tool_call_delta(block.index, &partial_json).await;
                    }
                    Delta::Other => {}
                }
            }
            Event::ContentBlockStop { index: wire } => {
                if let Some(pos) = open.iter().position(|b| b.wire == wire) {
                    let block = open.remove(pos);
                    if let Some(input) = block.initial_input {
                        emitter.tool_call_delta(block.index, &input).await;
                    }
                    emitter.close(block.index).await;
                }
            }
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    stop = map_stop_reason(&reason);
                    emitter.set_raw_stop_reason(reason);
                }
                if let Some(usage) = usage {
                    apply_usage(emitter.usage_mut(), &usage);
                }
            }
            Event::MessageStop {} => return stop.map_err(Interrupted::from),
            Event::Error { error } => {
                return Err(ProviderError::Stream { error_type: error.kind, message: error.message }.into());
            }
            Event::Other => {}
        }
    }
    Err(ProviderError::StreamEnded(String::new()).into())
}

/// Copies the counts present in `wire` (a proxy may omit some in `message_delta`).
fn apply_usage(usage: &mut Usage, wire: &WireUsage) {
    if let Some(n) = wire.input_tokens {
        usage.input = n;
    }
    if let Some(n) = wire.output_tokens {
        usage.output = n;
    }
    if let Some(n) = wire.cache_read_input_tokens {
        usage.cache_read = n;
    }
    if let Some(n) = wire.cache_creation_input_tokens {
        usage.cache_write = n;
    }
    if let Some(n) = wire.cache_creation.as_ref().and_then(|c| c.ephemeral_1h_input_tokens) {
        usage.cache_write_1h = Some(n);
    }
}

/// `end_turn`, `pause_turn`, `stop_sequence` end normally; `max_tokens` is `length`; a refusal
/// (or a safety stop) fails the message. Unknown reasons end normally.
fn map_stop_reason(reason: &str) -> Result<StopReason, ProviderError> {
    match reason {
        "max_tokens" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        "refusal" | "sensitive" | "model_context_window_exceeded" => Err(ProviderError::Stream {
            error_type: reason.to_owned(),
            message: format!("The model stopped with stop_reason {reason}"),
        }),
        _ => Ok(StopReason::Stop),
    }
}
