//! OpenAI Responses events to [`Emitter`] calls.
//!
//! Each output item (message, reasoning, function call) is one content block, opened by
//! `response.output_item.added` and closed by `response.output_item.done`, whose final item is
//! kept: a reasoning item whole (with `encrypted_content`) as the thinking block's signature, a
//! message's id and `phase` as the text block's signature, in the reference's versioned form
//! `{"v":1,"id":…,"phase":…}`. Reasoning streams as summary text (OpenAI) or as raw
//! `reasoning_text` (gpt-oss servers); both are thinking. A reply ends at `response.completed`
//! or `response.incomplete`; a body that ends before either was cut short.
//!
//! Failures read as the reference shows them, the server's code first: `server_error: …` for
//! `response.failed`, `Error Code …: …` for an `error` event.

use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::sse::{EventSource, Interrupted, parse_json};
use crate::stream::Emitter;
use crate::types::{StopReason, Usage};

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "response.created")]
    Created { response: Response },
    #[serde(rename = "response.output_item.added")]
    ItemAdded { item: Value },
    #[serde(rename = "response.output_item.done")]
    ItemDone { item: Value },
    #[serde(rename = "response.output_text.delta", alias = "response.refusal.delta")]
    TextDelta {
        #[serde(default)]
        item_id: Option<String>,
        delta: String,
    },
    #[serde(rename = "response.reasoning_summary_part.added")]
    SummaryPartAdded {
        #[serde(default)]
        item_id: Option<String>,
    },
    #[serde(rename = "response.reasoning_summary_text.delta", alias = "response.reasoning_text.delta")]
    ReasoningDelta {
        #[serde(default)]
        item_id: Option<String>,
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgumentsDelta {
        #[serde(default)]
        item_id: Option<String>,
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    ArgumentsDone {
        #[serde(default)]
        item_id: Option<String>,
        #[serde(default)]
        arguments: Option<String>,
    },
    /// `response.done` is how ChatGPT's Codex backend may end a reply.
    #[serde(rename = "response.completed", alias = "response.done")]
    Completed { response: Response },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: Response },
    #[serde(rename = "response.failed")]
    Failed { response: Response },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<Value>,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        error: Option<Value>,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct Response {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    incomplete_details: Option<Value>,
    #[serde(default)]
    status: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Debug, Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Message,
    Reasoning,
    FunctionCall,
}

/// An output item being streamed.
#[derive(Debug)]
struct Item {
    id: String,
    index: usize,
    kind: Kind,
    /// Whether any text, summary or argument delta arrived for it.
    streamed: bool,
    summary_parts: usize,
}

/// Reads Responses events from `source` (an SSE body, or a websocket's messages) into `emitter`
/// until the response completes.
pub(crate) async fn consume(
    mut source: impl EventSource,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
) -> Result<StopReason, Interrupted> {
    let mut items: Vec<Item> = Vec::new();
    while let Some(payload) = source.next_payload(cancel).await? {
        if payload.trim().is_empty() {
            continue;
        }
        let parsed = match parse_json::<Event>(&payload) {
            Ok(parsed) => parsed,
            Err(e) => return Err(crate::providers::raw_error(&payload).unwrap_or(e).into()),
        };
        match parsed {
            Event::Created { response } => {
                if let Some(id) = response.id {
                    emitter.set_response_id(id);
                }
                emitter.start().await;
            }
            Event::ItemAdded { item } => {
                if let Some(opened) = open_item(emitter, &item).await {
                    items.push(opened);
                }
            }
            Event::TextDelta { item_id, delta } => {
                if let Some(item) = find(&mut items, item_id.as_deref(), Kind::Message) {
                    item.streamed = true;
                    emitter.text_delta(item.index, delta).await;
                }
            }
            Event::SummaryPartAdded { item_id } => {
                if let Some(item) = find(&mut items, item_id.as_deref(), Kind::Reasoning) {
                    if item.summary_parts > 0 {
                        emitter.thinking_delta(item.index, "\n\n").await;
                    }
                    item.summary_parts += 1;
                }
            }
            Event::ReasoningDelta { item_id, delta } => {
                if let Some(item) = find(&mut items, item_id.as_deref(), Kind::Reasoning) {
                    item.streamed = true;
                    emitter.thinking_delta(item.index, delta).await;
                }
            }
            Event::ArgumentsDelta { item_id, delta } => {
                if let Some(item) = find(&mut items, item_id.as_deref(), Kind::FunctionCall) {
                    item.streamed |= !delta.is_empty();
                    emitter.tool_call_delta(item.index, &delta).await;
                }
            }
            Event::ArgumentsDone { item_id, arguments } => {
                if let Some(item) = find(&mut items, item_id.as_deref(), Kind::FunctionCall)
                    && let (false, Some(arguments)) = (item.streamed, arguments)
                {
                    item.streamed = !arguments.is_empty();
                    emitter.tool_call_delta(item.index, &arguments).await;
                }
            }
            Event::ItemDone { item } => {
                let id = item.get("id").and_then(Value::as_str);
                let kind = item.get("type").and_then(Value::as_str).and_then(kind_of);
                let pos = kind.and_then(|kind| {
                    items.iter().position(|i| i.kind == kind && (id.is_none() || Some(i.id.as_str()) == id))
                });
                if let Some(pos) = pos {
                    let open = items.remove(pos);
                    finish_item(emitter, &open, item).await;
                }
            }
            Event::Completed { response } => {
                apply_usage(emitter, response.usage.as_ref());
                emitter.set_raw_stop_reason(response.status.unwrap_or_else(|| "completed".into()));
                return Ok(StopReason::Stop);
            }
            Event::Incomplete { response } => {
                apply_usage(emitter, response.usage.as_ref());
                let reason = response
                    .incomplete_details
                    .as_ref()
                    .and_then(|d| d.get("reason")?.as_str())
                    .unwrap_or("max_output_tokens");
                let status = response.status.as_deref().unwrap_or("incomplete");
                emitter.set_raw_stop_reason(format!("{status}.{reason}"));
                if reason == "content_filter" {
                    return Err(ProviderError::Stream {
                        error_type: reason.into(),
                        message: format!("Response incomplete: {reason}"),
                    }
                    .into());
                }
                return Ok(StopReason::Length);
            }
            Event::Failed { response } => {
                apply_usage(emitter, response.usage.as_ref());
                return Err(failed_error(&response).into());
            }
            Event::Error { code, message, error } => {
                return Err(event_error(code.as_ref(), message, error.as_ref()).into());
            }
            Event::Other => {}
        }
    }
    Err(ProviderError::StreamEnded(String::new()).into())
}

fn kind_of(ty: &str) -> Option<Kind> {
    match ty {
        "message" => Some(Kind::Message),
        "reasoning" => Some(Kind::Reasoning),
        "function_call" => Some(Kind::FunctionCall),
        _ => None,
    }
}

/// The item an event names, or the newest item of its kind when it names none.
fn find<'a>(items: &'a mut [Item], id: Option<&str>, kind: Kind) -> Option<&'a mut Item> {
    items.iter_mut().rev().find(|i| i.kind == kind && id.is_none_or(|id| i.id == id))
}

async fn open_item(emitter: &mut Emitter, item: &Value) -> Option<Item> {
    let kind = kind_of(item.get("type")?.as_str()?)?;
    let str_of = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
    let id = str_of("id").to_owned();
    let (index, streamed) = match kind {
        Kind::Message => (emitter.open_text().await, false),
        Kind::Reasoning => (emitter.open_thinking().await, false),
        Kind::FunctionCall => {
            let call_id = str_of("call_id");
            let full_id = if id.is_empty() { call_id.to_owned() } else { format!("{call_id}|{id}") };
            let index = emitter.open_tool_call(full_id, str_of("name").to_owned()).await;
            let arguments = str_of("arguments");
            emitter.tool_call_delta(index, arguments).await;
            (index, !arguments.is_empty())
        }
    };
    Some(Item { id, index, kind, streamed, summary_parts: 0 })
}

/// Completes a block from its final item: text or arguments that never streamed are taken from
/// it, and the replay data is kept.
async fn finish_item(emitter: &mut Emitter, open: &Item, item: Value) {
    match open.kind {
        Kind::Message => {
            if !open.streamed {
                let text: String = item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|part| part.get("text").or_else(|| part.get("refusal")))
                    .filter_map(Value::as_str)
                    .collect();
                emitter.text_delta(open.index, &text).await;
            }
            if !open.id.is_empty() {
                let phase = item.get("phase").and_then(Value::as_str).filter(|p| !p.is_empty());
                emitter.set_text_signature(open.index, text_signature(&open.id, phase)).await;
            }
        }
        Kind::Reasoning => {
            if !open.streamed {
                // The summary, else the raw reasoning text (gpt-oss servers).
                let texts = |key: &str| -> String {
                    let parts: Vec<&str> = item
                        .get(key)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|part| part.get("text")?.as_str())
                        .collect();
                    parts.join("\n\n")
                };
                let summary = texts("summary");
                let thinking = if summary.is_empty() { texts("content") } else { summary };
                emitter.thinking_delta(open.index, &thinking).await;
            }
            emitter.replace_thinking_signature(open.index, item.to_string());
        }
        Kind::FunctionCall => {
            if !open.streamed
                && let Some(arguments) = item.get("arguments").and_then(Value::as_str)
            {
                emitter.tool_call_delta(open.index, arguments).await;
            }
        }
    }
    emitter.close(open.index).await;
}

fn apply_usage(emitter: &mut Emitter, wire: Option<&WireUsage>) {
    let Some(wire) = wire else {
        return;
    };
    let cached = wire.input_tokens_details.as_ref().and_then(|d| d.cached_tokens).unwrap_or(0);
    let usage: &mut Usage = emitter.usage_mut();
    usage.input = wire.input_tokens.unwrap_or(0).saturating_sub(cached);
    usage.cache_read = cached;
    usage.cache_write = 0;
    usage.output = wire.output_tokens.unwrap_or(0);
    usage.reasoning = wire.output_tokens_details.as_ref().and_then(|d| d.reasoning_tokens);
}

/// A text block's signature: the output message's id and phase, in the reference's
/// versioned form.
fn text_signature(id: &str, phase: Option<&str>) -> String {
    let mut signature = serde_json::Map::new();
    signature.insert("v".into(), Value::from(1));
    signature.insert("id".into(), Value::from(id));
    if let Some(phase) = phase {
        signature.insert("phase".into(), Value::from(phase));
    }
    Value::Object(signature).to_string()
}

/// A string or number field as text.
fn text_of(value: Option<&Value>) -> Option<String> {
    match value {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// `response.failed`: `code: message` from `response.error`, else the reason it is incomplete.
fn failed_error(response: &Response) -> ProviderError {
    if let Some(error) = response.error.as_ref().filter(|e| e.is_object()) {
        let code = text_of(error.get("code")).or_else(|| text_of(error.get("type")));
        let message = text_of(error.get("message")).unwrap_or_else(|| "no message".into());
        let error_type = code.clone().unwrap_or_default();
        let code = code.unwrap_or_else(|| "unknown".into());
        return ProviderError::Stream { error_type, message: format!("{code}: {message}") };
    }
    match text_of(response.incomplete_details.as_ref().and_then(|d| d.get("reason"))) {
        Some(reason) => ProviderError::Stream { message: format!("incomplete: {reason}"), error_type: reason },
        None => ProviderError::Stream {
            error_type: String::new(),
            message: "Unknown error (no error details in response)".into(),
        },
    }
}

/// An `error` event: `Error Code <code>: <message>` when its fields are at the top; an error
/// nested under `error` reads as its message alone, as the reference's client reports it.
fn event_error(code: Option<&Value>, message: Option<String>, nested: Option<&Value>) -> ProviderError {
    let code = text_of(code);
    if let (Some(nested), None) = (nested.filter(|e| e.is_object()), &message) {
        let error_type = text_of(nested.get("code")).or_else(|| text_of(nested.get("type"))).unwrap_or_default();
        let message = text_of(nested.get("message")).unwrap_or_else(|| nested.to_string());
        return ProviderError::Stream { error_type, message };
    }
    let message = message.filter(|m| !m.is_empty()).unwrap_or_else(|| "Unknown error".into());
    match code {
        Some(code) => ProviderError::Stream { message: format!("Error Code {code}: {message}"), error_type: code },
        None => ProviderError::Stream { error_type: String::new(), message },
    }
}
