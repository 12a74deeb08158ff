//! Our conversation as a Gemini `streamGenerateContent` request body.
//!
//! Roles are `user` and `model`. Thinking of this model goes back as `thought: true` parts and
//! every part keeps its `thoughtSignature` (Gemini 3 rejects a function call without one, so a
//! call that never had one — from another model — gets the documented placeholder). The results
//! of one turn's calls go back together in one user turn of `functionResponse` parts.

use serde_json::{Map, Value, json};

use super::schema;
use crate::model::{Model, ThinkingLevel};
use crate::providers::{IMAGE_ONLY_RESULT, requested_thinking, tool_result_images};
use crate::stream::{StreamOptions, ThinkingBudgets, ToolChoice};
use crate::transform::transform_messages;
use crate::types::{AssistantContent, AssistantMessage, Context, Message, ToolSpec, UserContent};

/// Lets a function call without a signature through Gemini 3's signature check.
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

pub(crate) fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let messages = transform_messages(&context.messages, model);
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(convert_messages(model, &messages)));
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        body.insert("systemInstruction".into(), json!({"parts": [{"text": system}]}));
    }
    if !context.tools.is_empty() {
        let declarations: Vec<Value> = context.tools.iter().map(convert_tool).collect();
        body.insert("tools".into(), json!([{"functionDeclarations": declarations}]));
    }
    if let ToolChoice::Tool(name) = &options.tool_choice {
        body.insert(
            "toolConfig".into(),
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}),
        );
    }
    let mut generation = Map::new();
    if let Some(t) = options.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    generation.insert("maxOutputTokens".into(), json!(options.max_tokens_for(model)));
    if let Some(config) = thinking_config(model, options) {
        generation.insert("thinkingConfig".into(), config);
    }
    body.insert("generationConfig".into(), Value::Object(generation));
    Value::Object(body)
}

fn convert_tool(tool: &ToolSpec) -> Value {
    json!({
        "name": tool.name,
        "description": tool.description,
        "parameters": schema::clean(&tool.parameters),
    })
}

/// Which Gemini 3 family `id` belongs to (`gemini-3-pro…`, `gemini-3.1-flash…`), if any.
fn gemini3_family(id: &str) -> Option<&str> {
    let rest = &id[id.find("gemini-3")? + "gemini-3".len()..];
    let rest = match rest.strip_prefix('.') {
        Some(minor) => minor.trim_start_matches(|c: char| c.is_ascii_digit()),
        None => rest,
    };
    ["pro", "flash"].into_iter().find(|family| rest.strip_prefix('-').is_some_and(|r| r.starts_with(family)))
}

fn thinking_config(model: &Model, options: &StreamOptions) -> Option<Value> {
    let level = requested_thinking(model, options)?;
    let id = model.id.to_ascii_lowercase();
    let high = matches!(level, ThinkingLevel::High | ThinkingLevel::Xhigh);
    let thinking_level = match gemini3_family(&id) {
        Some("pro") => Some(if high || level == ThinkingLevel::Medium { "HIGH" } else { "LOW" }),
        Some(_) => Some(match level {
            ThinkingLevel::Off | ThinkingLevel::Minimal => "MINIMAL",
            ThinkingLevel::Low => "LOW",
            ThinkingLevel::Medium => "MEDIUM",
            ThinkingLevel::High | ThinkingLevel::Xhigh => "HIGH",
        }),
        None => None,
    };
    if let Some(thinking_level) = thinking_level {
        return Some(json!({"includeThoughts": true, "thinkingLevel": thinking_level}));
    }
    let table = |minimal, high| ThinkingBudgets { minimal, low: 2048, medium: 8192, high };
    let budget = if options.thinking_budgets != ThinkingBudgets::default() {
        options.thinking_budgets.for_level(level) as i64
    } else if id.contains("2.5-pro") {
        table(128, 32_768).for_level(level) as i64
    } else if id.contains("2.5-flash") {
        table(128, 24_576).for_level(level) as i64
    } else {
        -1
    };
    Some(json!({"includeThoughts": true, "thinkingBudget": budget}))
}

fn convert_messages(model: &Model, messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User(u) => {
                let parts = user_parts(&u.content.blocks());
                if !parts.is_empty() {
                    out.push(json!({"role": "user", "parts": parts}));
                }
                i += 1;
            }
            Message::Assistant(a) => {
                let parts = model_parts(model, a);
                if !parts.is_empty() {
                    out.push(json!({"role": "model", "parts": parts}));
                }
                i += 1;
            }
            Message::ToolResult(_) => {
                let mut parts = Vec::new();
                let mut images = Vec::new();
                while let Some(Message::ToolResult(r)) = messages.get(i) {
                    let mut text = r.text();
                    if text.is_empty() && tool_result_images(r).next().is_some() {
                        text = IMAGE_ONLY_RESULT.into();
                    }
                    let key = if r.is_error { "error" } else { "output" };
                    parts.push(json!({
                        "functionResponse": {"name": r.tool_name, "response": {key: text}}
                    }));
                    images.extend(tool_result_images(r).map(inline_data));
                    i += 1;
                }
                parts.extend(images);
                out.push(json!({"role": "user", "parts": parts}));
            }
        }
    }
    out
}

fn inline_data(image: &crate::ImageContent) -> Value {
    json!({"inlineData": {"mimeType": image.mime_type, "data": image.data}})
}

fn user_parts(blocks: &[UserContent]) -> Vec<Value> {
    blocks
        .iter()
        .filter_map(|b| match b {
            UserContent::Text(t) if t.text.trim().is_empty() => None,
            UserContent::Text(t) => Some(json!({"text": t.text})),
            UserContent::Image(image) => Some(inline_data(image)),
        })
        .collect()
}

/// A thought signature worth replaying: from this model, and base64 as the API requires.
fn valid_signature(same_model: bool, signature: Option<&str>) -> Option<&str> {
    let s = signature.filter(|_| same_model)?;
    let base64 = !s.is_empty()
        && s.len() % 4 == 0
        && s.trim_end_matches('=').bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    base64.then_some(s)
}

fn with_signature(mut part: Map<String, Value>, signature: Option<&str>) -> Value {
    if let Some(s) = signature {
        part.insert("thoughtSignature".into(), json!(s));
    }
    Value::Object(part)
}

fn model_parts(model: &Model, message: &AssistantMessage) -> Vec<Value> {
    let same_model = message.provider == model.provider && message.api == model.api && message.model == model.id;
    let gemini3 = model.id.to_ascii_lowercase().contains("gemini-3");
    let mut parts = Vec::with_capacity(message.content.len());
    for block in &message.content {
        match block {
            AssistantContent::Text(t) => {
                if t.text.trim().is_empty() {
                    continue;
                }
                let mut part = Map::new();
                part.insert("text".into(), json!(t.text));
                let signature = valid_signature(same_model, t.text_signature.as_deref());
                parts.push(with_signature(part, signature));
            }
            AssistantContent::Thinking(t) => {
                if t.thinking.trim().is_empty() || t.redacted == Some(true) {
                    continue;
                }
                let mut part = Map::new();
                part.insert("thought".into(), json!(true));
                part.insert("text".into(), json!(t.thinking));
                let signature = valid_signature(same_model, t.thinking_signature.as_deref());
                parts.push(with_signature(part, signature));
            }
            AssistantContent::RedactedThinking(_) => {}
            AssistantContent::ToolCall(call) => {
                let mut part = Map::new();
                part.insert("functionCall".into(), json!({"name": call.name, "args": call.arguments}));
                let signature = valid_signature(same_model, call.thought_signature.as_deref())
                    .or(gemini3.then_some(SKIP_SIGNATURE));
                parts.push(with_signature(part, signature));
            }
        }
    }
    parts
}
