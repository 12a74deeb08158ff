//! Our conversation as a Bedrock `ConverseStream` request body, shaped as pi 0.73 sends it
//! through AWS's SDK (the model id goes in the path, not the body).
//!
//! Consecutive tool results become one user turn of `toolResult` blocks (Bedrock wants them
//! together); empty assistant turns and empty text or thinking blocks are left out (Bedrock
//! rejects empty content). Claude models get a prompt-cache point after the system prompt and on
//! the last user turn, one hour long when `PI_CACHE_RETENTION=long`. Their thinking is replayed
//! with its signature (as text when the signature was lost); other models' reasoning goes back
//! without one, which they would reject. Thinking is asked for in
//! `additionalModelRequestFields`, in Anthropic's own terms, for Claude models only.

use serde_json::{Map, Value, json};

use crate::model::{Model, ThinkingLevel};
use crate::providers::{budget_thinking, object, requested_thinking};
use crate::stream::{StreamOptions, ToolChoice};
use crate::transform::{by_ref, sanitize_tool_call_id, transform_messages};
use crate::types::{AssistantContent, AssistantMessage, Context, ImageContent, Message, ToolSpec, UserContent};

/// Longest tool-use id Bedrock accepts.
const MAX_TOOL_CALL_ID: usize = 64;

/// The beta that lets budget-thinking Claude models think between tool calls.
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

/// How long a prompt-cache point keeps its prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CacheRetention {
    Short,
    Long,
}

impl CacheRetention {
    /// pi's default, `long` when `PI_CACHE_RETENTION` says so.
    pub(crate) fn from_env() -> Self {
        match std::env::var("PI_CACHE_RETENTION").as_deref() {
            Ok("long") => Self::Long,
            _ => Self::Short,
        }
    }

    fn cache_point(self) -> Value {
        match self {
            Self::Short => json!({"cachePoint": {"type": "default"}}),
            Self::Long => json!({"cachePoint": {"type": "default", "ttl": "1h"}}),
        }
    }
}

/// What the request is for beyond the model: the region decides whether Claude's thinking may
/// carry `display` (GovCloud rejects it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    pub region: &'a str,
    pub cache: CacheRetention,
}

pub(crate) fn build_body(model: &Model, context: &Context, options: &StreamOptions, target: Target<'_>) -> Value {
    let caching = supports_prompt_caching(model).then_some(target.cache);
    let mut max_tokens = options.max_tokens_for(model);
    let mut additional = None;
    if let Some(level) = requested_thinking(model, options).filter(|_| is_claude(model)) {
        let display = (!is_gov_cloud(model, target.region)).then_some("summarized");
        let mut fields = Map::new();
        if is_adaptive(model) {
            let mut thinking = json!({"type": "adaptive"});
            if let Some(display) = display {
                thinking["display"] = json!(display);
            }
            fields.insert("thinking".into(), thinking);
            fields.insert("output_config".into(), json!({"effort": effort(model, level)}));
        } else {
            let budget = budget_thinking(model, options, level);
            max_tokens = budget.max_tokens;
            let mut thinking = json!({"type": "enabled", "budget_tokens": budget.budget});
            if let Some(display) = display {
                thinking["display"] = json!(display);
            }
            fields.insert("thinking".into(), thinking);
            fields.insert("anthropic_beta".into(), json!([INTERLEAVED_THINKING_BETA]));
        }
        additional = Some(Value::Object(fields));
    }

    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(convert_messages(model, context, caching)));
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let mut blocks = vec![json!({"text": system})];
        blocks.extend(caching.map(CacheRetention::cache_point));
        body.insert("system".into(), Value::Array(blocks));
    }
    let mut inference = Map::new();
    inference.insert("maxTokens".into(), json!(max_tokens));
    if let Some(t) = options.temperature {
        inference.insert("temperature".into(), json!(t));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context.tools.iter().map(tool_spec).collect();
        let mut config = json!({"tools": tools});
        if let ToolChoice::Tool(name) = &options.tool_choice {
            config["toolChoice"] = json!({"tool": {"name": name}});
        }
        body.insert("toolConfig".into(), config);
    }
    if let Some(fields) = additional {
        body.insert("additionalModelRequestFields".into(), fields);
    }
    Value::Object(body)
}

fn tool_spec(tool: &ToolSpec) -> Value {
    json!({"toolSpec": {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": {"json": tool.parameters},
    }})
}

fn convert_messages(model: &Model, context: &Context, caching: Option<CacheRetention>) -> Vec<Value> {
    let transformed = transform_messages(&context.messages, model);
    let messages = by_ref(&transformed);
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        match messages[i] {
            Message::User(u) => {
                let blocks: Vec<Value> = u.content.blocks().iter().map(user_block).collect();
                out.push(object([("role", "user".into()), ("content", Value::Array(blocks))]));
                i += 1;
            }
            Message::Assistant(a) => {
                let blocks = assistant_blocks(model, a);
                if !blocks.is_empty() {
                    out.push(object([("role", "assistant".into()), ("content", Value::Array(blocks))]));
                }
                i += 1;
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                while let Some(Message::ToolResult(r)) = messages.get(i) {
                    let content: Vec<Value> = r.content.iter().map(user_block).collect();
                    let result = object([
                        ("toolUseId", sanitize_tool_call_id(&r.tool_call_id, MAX_TOOL_CALL_ID).into()),
                        ("content", Value::Array(content)),
                        ("status", if r.is_error { "error" } else { "success" }.into()),
                    ]);
                    results.push(object([("toolResult", result)]));
                    i += 1;
                }
                out.push(object([("role", "user".into()), ("content", Value::Array(results))]));
            }
        }
    }
    if let Some(retention) = caching
        && let Some(last) = out.last_mut().filter(|m| m["role"] == "user")
        && let Some(content) = last.get_mut("content").and_then(Value::as_array_mut)
    {
        content.push(retention.cache_point());
    }
    out
}

fn user_block(block: &UserContent) -> Value {
    match block {
        UserContent::Text(t) => json!({"text": t.text}),
        UserContent::Image(image) => json!({"image": image_block(image)}),
    }
}

/// An image as the SDK serializes it: the format named, the bytes base64 (as they already are).
fn image_block(image: &ImageContent) -> Value {
    let format = match image.mime_type.as_str() {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => "png",
    };
    json!({"format": format, "source": {"bytes": image.data}})
}

fn assistant_blocks(model: &Model, message: &AssistantMessage) -> Vec<Value> {
    let mut blocks = Vec::with_capacity(message.content.len());
    for block in &message.content {
        match block {
            AssistantContent::Text(t) if t.text.trim().is_empty() => {}
            AssistantContent::Text(t) => blocks.push(json!({"text": t.text})),
            AssistantContent::Thinking(t) if t.thinking.trim().is_empty() || t.redacted == Some(true) => {}
            AssistantContent::Thinking(t) => {
                let signature = t.thinking_signature.as_deref().filter(|s| !s.trim().is_empty());
                blocks.push(match (is_claude(model), signature) {
                    (true, Some(signature)) => json!({"reasoningContent": {
                        "reasoningText": {"text": t.thinking, "signature": signature}
                    }}),
                    (true, None) => json!({"text": t.thinking}),
                    (false, _) => json!({"reasoningContent": {"reasoningText": {"text": t.thinking}}}),
                });
            }
            AssistantContent::RedactedThinking(_) => {}
            AssistantContent::ToolCall(call) => blocks.push(json!({"toolUse": {
                "toolUseId": sanitize_tool_call_id(&call.id, MAX_TOOL_CALL_ID),
                "name": call.name,
                "input": call.arguments,
            }})),
        }
    }
    blocks
}

/// The model id and name, lower-cased, each also with spaces, dots, colons and underscores as
/// dashes: an application inference profile's ARN does not name its model, its name may.
fn match_candidates(model: &Model) -> Vec<String> {
    let mut values = vec![model.id.as_str()];
    if !model.name.is_empty() {
        values.push(model.name.as_str());
    }
    values
        .into_iter()
        .flat_map(|value| {
            let lower = value.to_lowercase();
            // Each run of separators becomes one dash.
            let mut dashed = String::with_capacity(lower.len());
            let mut in_run = false;
            for c in lower.chars() {
                let separator = c.is_whitespace() || "_.:".contains(c);
                if !separator {
                    dashed.push(c);
                } else if !in_run {
                    dashed.push('-');
                }
                in_run = separator;
            }
            [lower, dashed]
        })
        .collect()
}

fn is_claude(model: &Model) -> bool {
    let id = model.id.to_lowercase();
    let name = model.name.to_lowercase();
    id.contains("anthropic.claude") || id.contains("anthropic/claude") || name.contains("claude")
}

/// The Claude 5 families, all adaptive, with `xhigh` and prompt caching.
const CLAUDE_5: [&str; 4] = ["opus-5", "sonnet-5", "haiku-5", "fable-5"];

/// Claude models that decide for themselves how much to think (Opus 4.6 and later, Sonnet 4.6
/// and later, Claude 5).
fn is_adaptive(model: &Model) -> bool {
    let named =
        |s: &String| ["opus-4-6", "opus-4-7", "opus-4-8", "sonnet-4-6"].iter().chain(&CLAUDE_5).any(|n| s.contains(n));
    match_candidates(model).iter().any(named)
}

/// Claude models with an `xhigh` effort of their own (Opus 4.7 and later, Claude 5).
fn has_native_xhigh(model: &Model) -> bool {
    let named = |s: &String| ["opus-4-7", "opus-4-8"].iter().chain(&CLAUDE_5).any(|n| s.contains(n));
    match_candidates(model).iter().any(named)
}

/// Claude 5, 4.x, 3.7 Sonnet and 3.5 Haiku take cache points; other models (Nova caches by itself)
/// only when `AWS_BEDROCK_FORCE_CACHE=1` says an inference profile hides a Claude model.
fn supports_prompt_caching(model: &Model) -> bool {
    let candidates = match_candidates(model);
    if !candidates.iter().any(|s| s.contains("claude")) {
        return std::env::var("AWS_BEDROCK_FORCE_CACHE").as_deref() == Ok("1");
    }
    candidates.iter().any(|s| {
        CLAUDE_5.iter().any(|n| s.contains(n))
            || s.contains("-4-")
            || s.contains("claude-3-7-sonnet")
            || s.contains("claude-3-5-haiku")
    })
}

fn is_gov_cloud(model: &Model, region: &str) -> bool {
    let id = model.id.to_lowercase();
    region.to_lowercase().starts_with("us-gov-") || id.starts_with("us-gov.") || id.starts_with("arn:aws-us-gov:")
}

/// An adaptive model's effort for `level`: the model's map first; `xhigh` only where the model
/// has it, `max` as `max`.
fn effort(model: &Model, level: ThinkingLevel) -> &str {
    if let Some(value) = model.provider_level(level) {
        return value;
    }
    match level {
        ThinkingLevel::Xhigh if has_native_xhigh(model) => "xhigh",
        ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High | ThinkingLevel::Xhigh => "high",
        ThinkingLevel::Max => "max",
    }
}
