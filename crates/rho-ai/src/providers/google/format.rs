//! Our conversation as a Gemini `streamGenerateContent` request body.
//!
//! Roles are `user` and `model`. Thinking of this model goes back as `thought: true` parts and
//! every part keeps its `thoughtSignature` (Gemini 3 rejects a function call without one, so a
//! call that never had one — from another model — gets the documented placeholder). The results
//! of one turn's calls go back together in one user turn of `functionResponse` parts. A tool
//! result's images go inside its `functionResponse` (`parts`) where the model takes multimodal
//! function responses (Gemini 3 on); older Gemini models get them as a user turn of their own
//! after the result, as the reference sends them.
//!
//! Thinking is set in `generationConfig.thinkingConfig` (`thinking.rs`).

use serde_json::{Map, Value, json};

use crate::model::Model;
use crate::providers::{IMAGE_ONLY_RESULT, object, tool_result_images};
use crate::stream::{StreamOptions, ToolChoice};
use crate::transform::{by_ref, transform_messages};
use crate::types::{AssistantContent, AssistantMessage, Context, Message, ToolResultMessage, ToolSpec, UserContent};

/// Lets a function call without a signature through Gemini 3's signature check.
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

pub(crate) fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let messages = transform_messages(&context.messages, model);
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(convert_messages(model, &by_ref(&messages))));
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
    if let Some(config) = super::thinking::config(model, options) {
        generation.insert("thinkingConfig".into(), config);
    }
    body.insert("generationConfig".into(), Value::Object(generation));
    Value::Object(body)
}

/// A tool as a function declaration: its schema whole as `parametersJsonSchema`, which takes
/// full JSON Schema (`anyOf`, `const`, `additionalProperties`, …), as pi sends it.
fn convert_tool(tool: &ToolSpec) -> Value {
    json!({
        "name": tool.name,
        "description": tool.description,
        "parametersJsonSchema": tool.parameters,
    })
}

/// Whether the model takes images inside a `functionResponse` (Gemini 3 on, and models that
/// are not Gemini); Gemini 1.x and 2.x take them only in a user turn.
fn multimodal_function_responses(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    let Some(rest) = id.strip_prefix("gemini-") else {
        return true;
    };
    let rest = rest.strip_prefix("live-").unwrap_or(rest);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<u32>().map_or(true, |major| major >= 3)
}

/// Introduces a tool result's images sent as a user turn of their own.
const TOOL_RESULT_IMAGE: &str = "Tool result image:";

fn convert_messages(model: &Model, messages: &[&Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User(u) => {
                let parts = user_parts(&u.content.blocks());
                if !parts.is_empty() {
                    out.push(object([("role", "user".into()), ("parts", Value::Array(parts))]));
                }
                i += 1;
            }
            Message::Assistant(a) => {
                let parts = model_parts(model, a);
                if !parts.is_empty() {
                    out.push(object([("role", "model".into()), ("parts", Value::Array(parts))]));
                }
                i += 1;
            }
            Message::ToolResult(r) => {
                tool_result(model, r, &mut out);
                i += 1;
            }
        }
    }
    out
}

/// A tool result as a `functionResponse` part: added to the user turn of the results before it
/// (one turn answers all of a reply's calls), else a turn of its own; images inside it or in a
/// user turn after it.
fn tool_result(model: &Model, result: &ToolResultMessage, out: &mut Vec<Value>) {
    let images: Vec<Value> = tool_result_images(result).map(inline_data).collect();
    let mut text = result.text();
    if text.is_empty() && !images.is_empty() {
        text = IMAGE_ONLY_RESULT.into();
    }
    let key = if result.is_error { "error" } else { "output" };
    let mut response = Map::new();
    response.insert("name".into(), json!(result.tool_name));
    response.insert("response".into(), object([(key, Value::String(text))]));
    let inside = multimodal_function_responses(&model.id);
    if inside && !images.is_empty() {
        response.insert("parts".into(), Value::Array(images.clone()));
    }
    let part = object([("functionResponse", Value::Object(response))]);
    let last_answers = out.last().is_some_and(|turn| {
        turn["role"] == "user"
            && turn["parts"].as_array().is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()))
    });
    match out.last_mut().and_then(|turn| turn["parts"].as_array_mut()).filter(|_| last_answers) {
        Some(parts) => parts.push(part),
        None => out.push(object([("role", "user".into()), ("parts", Value::Array(vec![part]))])),
    }
    if !inside && !images.is_empty() {
        let mut parts = vec![json!({"text": TOOL_RESULT_IMAGE})];
        parts.extend(images);
        out.push(object([("role", "user".into()), ("parts", Value::Array(parts))]));
    }
}

fn inline_data(image: &crate::types::ImageContent) -> Value {
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
