//! Our conversation as an Anthropic Messages request body.
//!
//! The system prompt goes in as one text block marked for prompt caching, and so does the last
//! block of the last user turn, so a conversation re-reads its cached prefix on every turn.
//! Consecutive tool results become one user turn of `tool_result` blocks. Thinking from this
//! model is replayed with its signature (a block whose signature was lost — an interrupted
//! stream — goes back as text, which the API accepts); redacted thinking is replayed as
//! `redacted_thinking`.

use serde_json::{Map, Value, json};

use crate::model::{Model, ThinkingLevel};
use crate::providers::{IMAGE_ONLY_RESULT, budget_thinking, object, requested_thinking};
use crate::stream::{StreamOptions, ToolChoice};
use crate::transform::{by_ref, sanitize_tool_call_id, transform_messages};
use crate::types::{AssistantContent, AssistantMessage, Context, Message, ToolResultMessage, ToolSpec, UserContent};

/// The beta that lets budget-thinking models think between tool calls.
pub(crate) const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

/// The beta of `fallbacks`: models Anthropic may answer with when this one refuses.
pub(crate) const SERVER_SIDE_FALLBACK_BETA: &str = "server-side-fallback-2026-07-01";

/// Longest tool-call id the API accepts.
const MAX_TOOL_CALL_ID: usize = 64;

/// A request body and the beta header it needs, if any.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request {
    pub body: Value,
    pub beta: Option<&'static str>,
    /// The server-side fallback's beta, when the model names fallbacks.
    pub fallback_beta: Option<&'static str>,
}

impl Request {
    /// Every beta the request needs, as `anthropic-beta` lists them.
    pub fn betas(&self) -> Option<String> {
        let betas: Vec<&str> = self.beta.iter().chain(&self.fallback_beta).copied().collect();
        (!betas.is_empty()).then(|| betas.join(","))
    }
}

/// The `fallbacks` of a model whose `compat.allowedFallbackModels` names some (pi 1.6's
/// catalogue: Anthropic may answer a refused request with one of them); `None` otherwise, as
/// Anthropic rejects the field for a model with no permitted fallback.
fn fallbacks(model: &Model) -> Option<Value> {
    let allowed = model.compat.as_ref()?.get("allowedFallbackModels")?.as_array()?;
    let models: Vec<Value> =
        allowed.iter().filter_map(|f| f.get("model")?.as_str()).map(|m| json!({"model": m})).collect();
    (!models.is_empty()).then(|| Value::Array(models))
}

/// Models that decide for themselves how much to think (`thinking: {type: "adaptive"}`): those
/// whose `compat.forceAdaptiveThinking` says so (pi 1.6's catalogue marks them), and, when the
/// flag is absent, the Claude 4.6 models by name (pi 0.73's rule, for models.json entries).
pub(crate) fn is_adaptive(model: &Model) -> bool {
    model.compat_bool("forceAdaptiveThinking").unwrap_or_else(|| {
        ["opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6"].iter().any(|needle| model.id.contains(needle))
    })
}

/// The `output_config.effort` of an adaptive model for `level`: the model's map first; without
/// one, `xhigh` is `max` where the model has an `xhigh` level (pi 0.73's catalogue), and `max` is
/// `max`.
fn adaptive_effort(model: &Model, level: ThinkingLevel) -> &str {
    if let Some(value) = model.provider_level(level) {
        return value;
    }
    match level {
        ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh if model.supports_xhigh() => "max",
        ThinkingLevel::Xhigh => "high",
        ThinkingLevel::Max => "max",
    }
}

pub(crate) fn build_request(model: &Model, context: &Context, options: &StreamOptions) -> Request {
    let messages = transform_messages(&context.messages, model);
    let mut max_tokens = options.max_tokens_for(model);
    let mut thinking = None;
    let mut output_config = None;
    let mut beta = None;
    let requested = requested_thinking(model, options);
    if let Some(level) = requested {
        // pi 1.6 asks for summarized thinking, the API's default before Opus 4.7.
        if is_adaptive(model) {
            thinking = Some(json!({"type": "adaptive", "display": "summarized"}));
            output_config = Some(json!({"effort": adaptive_effort(model, level)}));
        } else {
            let budget = budget_thinking(model, options, level);
            max_tokens = budget.max_tokens;
            thinking = Some(json!({"type": "enabled", "budget_tokens": budget.budget, "display": "summarized"}));
            beta = Some(INTERLEAVED_THINKING_BETA);
        }
    } else if model.reasoning && !model.rules_out(ThinkingLevel::Off) {
        // Off on a model that can stop thinking is said, as pi 1.6 says it.
        thinking = Some(json!({"type": "disabled"}));
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        body.insert("system".into(), json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]));
    }
    body.insert("messages".into(), Value::Array(convert_messages(&by_ref(&messages))));
    if !context.tools.is_empty() {
        body.insert("tools".into(), context.tools.iter().map(convert_tool).collect());
    }
    if let ToolChoice::Tool(name) = &options.tool_choice {
        body.insert("tool_choice".into(), json!({"type": "tool", "name": name}));
    }
    if let Some(thinking) = thinking {
        body.insert("thinking".into(), thinking);
    }
    if let Some(config) = output_config {
        body.insert("output_config".into(), config);
    }
    // Temperature goes with no thinking only, and not to models that refuse it (Opus 4.7 on).
    if let Some(t) =
        options.temperature.filter(|_| requested.is_none() && model.compat_bool("supportsTemperature") != Some(false))
    {
        body.insert("temperature".into(), json!(t));
    }
    let fallback_beta = fallbacks(model).map(|list| {
        body.insert("fallbacks".into(), list);
        SERVER_SIDE_FALLBACK_BETA
    });
    Request { body: Value::Object(body), beta, fallback_beta }
}

/// `reply` as a later request sends it, converted as the conversation is.
pub(super) fn assistant_as_sent(model: &Model, reply: &AssistantMessage) -> Vec<Value> {
    let replies = [Message::Assistant(reply.clone())];
    let messages = transform_messages(&replies, model);
    convert_messages(&by_ref(&messages)).into_iter().filter(|m| m["role"] == "assistant").collect()
}

fn convert_tool(tool: &ToolSpec) -> Value {
    let schema =
        if tool.parameters.is_object() { tool.parameters.clone() } else { json!({"type": "object", "properties": {}}) };
    json!({"name": tool.name, "description": tool.description, "input_schema": schema})
}

fn convert_messages(messages: &[&Message]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User(u) => {
                let blocks = user_blocks(&u.content.blocks());
                if !blocks.is_empty() {
                    out.push(object([("role", "user".into()), ("content", Value::Array(blocks))]));
                }
                i += 1;
            }
            Message::Assistant(a) => {
                let blocks = assistant_blocks(a);
                if !blocks.is_empty() {
                    out.push(object([("role", "assistant".into()), ("content", Value::Array(blocks))]));
                }
                i += 1;
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                while let Some(Message::ToolResult(r)) = messages.get(i) {
                    results.push(tool_result_block(r));
                    i += 1;
                }
                out.push(object([("role", "user".into()), ("content", Value::Array(results))]));
            }
        }
    }
    mark_last_user_block_cached(&mut out);
    out
}

fn user_blocks(content: &[UserContent]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(t) if t.text.trim().is_empty() => None,
            UserContent::Text(t) => Some(json!({"type": "text", "text": t.text})),
            UserContent::Image(image) => Some(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}
            })),
        })
        .collect()
}

fn assistant_blocks(message: &AssistantMessage) -> Vec<Value> {
    let mut blocks = Vec::with_capacity(message.content.len());
    for block in &message.content {
        match block {
            AssistantContent::Text(t) => {
                if !t.text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": t.text}));
                }
            }
            AssistantContent::Thinking(t) => {
                let signature = t.thinking_signature.as_deref().filter(|s| !s.trim().is_empty());
                match (t.redacted == Some(true), signature) {
                    // pi's form of redacted thinking: the payload rides in the signature.
                    (true, Some(data)) => {
                        blocks.push(json!({"type": "redacted_thinking", "data": data}));
                    }
                    (true, None) => {}
                    _ if t.thinking.trim().is_empty() => {}
                    (false, Some(signature)) => blocks.push(json!({
                        "type": "thinking", "thinking": t.thinking, "signature": signature
                    })),
                    (false, None) => blocks.push(json!({"type": "text", "text": t.thinking})),
                }
            }
            AssistantContent::RedactedThinking(r) => {
                blocks.push(json!({"type": "redacted_thinking", "data": r.data}));
            }
            AssistantContent::ToolCall(call) => blocks.push(json!({
                "type": "tool_use",
                "id": sanitize_tool_call_id(&call.id, MAX_TOOL_CALL_ID),
                "name": call.name,
                "input": call.arguments,
            })),
        }
    }
    blocks
}

fn tool_result_block(result: &ToolResultMessage) -> Value {
    let has_images = result.content.iter().any(|c| matches!(c, UserContent::Image(_)));
    let content = if has_images {
        let mut blocks = user_blocks(&result.content);
        if !blocks.iter().any(|b| b["type"] == "text") {
            blocks.insert(0, json!({"type": "text", "text": IMAGE_ONLY_RESULT}));
        }
        Value::Array(blocks)
    } else {
        Value::String(result.text())
    };
    object([
        ("type", "tool_result".into()),
        ("tool_use_id", sanitize_tool_call_id(&result.tool_call_id, MAX_TOOL_CALL_ID).into()),
        ("content", content),
        ("is_error", result.is_error.into()),
    ])
}

/// Puts a cache breakpoint on the last block of the conversation when a user turn ends it.
fn mark_last_user_block_cached(messages: &mut [Value]) {
    let Some(last) = messages.last_mut() else {
        return;
    };
    if last["role"] != "user" {
        return;
    }
    if let Some(Value::Object(block)) =
        last.get_mut("content").and_then(Value::as_array_mut).and_then(|blocks| blocks.last_mut())
    {
        block.insert("cache_control".into(), json!({"type": "ephemeral"}));
    }
}
