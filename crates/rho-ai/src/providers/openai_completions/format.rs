//! Our conversation as a Chat Completions request body, in the dialect [`Compat`] describes.
//! How thinking is asked for is [`thinking`]'s; prompt caching is [`cache`]'s.
//!
//! User text goes as a plain string unless images come with it (every compatible server reads
//! strings; not all read content parts). Tool results are `tool` messages, never empty; their
//! images, which a `tool` message cannot carry, follow the run of results in one user message,
//! so the results still directly follow the calls they answer. Thinking of this model is
//! replayed in the field it arrived in (`reasoning_content` or `reasoning`, remembered as the
//! block's signature); a server that wants `reasoning_content` on every assistant message of a
//! reasoning model (DeepSeek) gets it empty where the turn had none.

use serde_json::{Map, Value, json};

use super::compat::Compat;
use super::{cache, thinking};
use crate::model::Model;
use crate::providers::{IMAGE_ONLY_RESULT, TOOL_RESULT_IMAGES, data_url, object, tool_result_images};
use crate::stream::{StreamOptions, ToolChoice};
use crate::transform::{by_ref, sanitize_tool_call_id, transform_messages};
use crate::types::{AssistantContent, AssistantMessage, Context, Message, ToolSpec, UserContent};

/// Longest tool-call id OpenAI accepts.
const MAX_TOOL_CALL_ID: usize = 40;

/// The fields a server streams thinking in, and so the ones it is replayed in.
pub(crate) const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_text"];

/// The text of a tool result that has neither text nor images.
const NO_TOOL_OUTPUT: &str = "(no tool output)";

/// Stands between a tool result and a user message for servers that reject that order.
const TOOL_RESULTS_RECEIVED: &str = "I have processed the tool results.";

pub(crate) fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let compat = Compat::for_model(model);
    let retention = cache::retention(options);
    let transformed = transform_messages(&context.messages, model);
    let mut messages = convert_messages(model, &compat, context, &by_ref(&transformed));
    let mut tools: Vec<Value> = context.tools.iter().map(|t| convert_tool(t, &compat)).collect();
    if let Some(marker) = cache::cache_control(&compat, retention) {
        cache::place_markers(&mut messages, &mut tools, &marker);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    cache::add_cache_fields(&mut body, model, &compat, retention, options.session_id.as_deref());
    if compat.supports_usage_in_streaming {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        body.insert("store".into(), json!(false));
    }
    body.insert(compat.max_tokens_field.as_str().into(), json!(options.max_tokens_for(model)));
    // models.json's sampling defaults and the level's overrides (pi 1.6); a request's own
    // temperature wins.
    if let Some(sampling) = &model.sampling {
        body.extend(sampling.for_level(options.thinking));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
        if compat.zai_tool_stream {
            body.insert("tool_stream".into(), json!(true));
        }
    }
    if let ToolChoice::Tool(name) = &options.tool_choice {
        body.insert("tool_choice".into(), json!({"type": "function", "function": {"name": name}}));
    }
    thinking::add_reasoning(&mut body, model, &compat, options);
    if let Some(routing) = &compat.open_router_routing {
        body.insert("provider".into(), routing.clone());
    }
    Value::Object(body)
}

/// A tool definition; `strict: false` where the server takes the key (rho's tools never ask for
/// strict sampling).
fn convert_tool(tool: &ToolSpec, compat: &Compat) -> Value {
    let mut function = Map::new();
    function.insert("name".into(), json!(tool.name));
    function.insert("description".into(), json!(tool.description));
    function.insert("parameters".into(), tool.parameters.clone());
    if compat.supports_strict_mode {
        function.insert("strict".into(), json!(false));
    }
    json!({"type": "function", "function": function})
}

/// A tool-call id the server accepts; the same for a call and its result.
pub(crate) fn tool_call_id(id: &str, compat: &Compat) -> String {
    // Responses API ids are `call_id|item_id`; the call id is the part that pairs.
    let call_id = id.split('|').next().unwrap_or(id);
    if compat.requires_mistral_tool_ids {
        let mut out: String = call_id.chars().filter(char::is_ascii_alphanumeric).take(9).collect();
        let pad = "ABCDEFGHI";
        out.push_str(&pad[out.len()..]);
        return out;
    }
    sanitize_tool_call_id(call_id, MAX_TOOL_CALL_ID)
}

fn convert_messages(model: &Model, compat: &Compat, context: &Context, messages: &[&Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let role = if model.reasoning && compat.supports_developer_role { "developer" } else { "system" };
        out.push(json!({"role": role, "content": system}));
    }
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User(u) => {
                if compat.requires_assistant_after_tool_result
                    && i > 0
                    && matches!(messages[i - 1], Message::ToolResult(_))
                {
                    out.push(json!({"role": "assistant", "content": TOOL_RESULTS_RECEIVED}));
                }
                if let Some(content) = user_content(&u.content.blocks()) {
                    out.push(object([("role", "user".into()), ("content", content)]));
                }
                i += 1;
            }
            Message::Assistant(a) => {
                if let Some(message) = assistant_message(model, a, compat) {
                    out.push(message);
                }
                i += 1;
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                while let Some(Message::ToolResult(r)) = messages.get(i) {
                    let text = r.text();
                    let text = match (text.trim().is_empty(), tool_result_images(r).next().is_some()) {
                        (false, _) => text,
                        (true, true) => IMAGE_ONLY_RESULT.to_owned(),
                        (true, false) => NO_TOOL_OUTPUT.to_owned(),
                    };
                    let mut message = Map::new();
                    message.insert("role".into(), json!("tool"));
                    message.insert("content".into(), Value::String(text));
                    message.insert("tool_call_id".into(), json!(tool_call_id(&r.tool_call_id, compat)));
                    if compat.requires_tool_result_name {
                        message.insert("name".into(), json!(r.tool_name));
                    }
                    out.push(Value::Object(message));
                    images.extend(tool_result_images(r).map(image_part));
                    i += 1;
                }
                if !images.is_empty() {
                    images.insert(0, json!({"type": "text", "text": TOOL_RESULT_IMAGES}));
                    out.push(object([("role", "user".into()), ("content", Value::Array(images))]));
                }
            }
        }
    }
    out
}

fn image_part(image: &crate::types::ImageContent) -> Value {
    json!({"type": "image_url", "image_url": {"url": data_url(image)}})
}

/// A plain string when the message is all text, content parts when it has images; `None` when
/// nothing is left to send.
fn user_content(blocks: &[UserContent]) -> Option<Value> {
    let has_images = blocks.iter().any(|b| matches!(b, UserContent::Image(_)));
    if !has_images {
        let text = blocks.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n");
        return (!text.trim().is_empty()).then_some(Value::String(text));
    }
    let parts: Vec<Value> = blocks
        .iter()
        .filter_map(|b| match b {
            UserContent::Text(t) if t.text.trim().is_empty() => None,
            UserContent::Text(t) => Some(json!({"type": "text", "text": t.text})),
            UserContent::Image(image) => Some(image_part(image)),
        })
        .collect();
    Some(Value::Array(parts))
}

fn assistant_message(model: &Model, message: &AssistantMessage, compat: &Compat) -> Option<Value> {
    let mut texts: Vec<&str> = Vec::new();
    let mut thinking: Vec<&str> = Vec::new();
    let mut reasoning_field = None;
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            AssistantContent::Text(t) if !t.text.trim().is_empty() => texts.push(&t.text),
            AssistantContent::Text(_) => {}
            AssistantContent::Thinking(t) if !t.thinking.trim().is_empty() => {
                thinking.push(&t.thinking);
                if reasoning_field.is_none() {
                    reasoning_field =
                        t.thinking_signature.as_deref().and_then(|s| REASONING_FIELDS.iter().find(|f| **f == s));
                }
            }
            AssistantContent::Thinking(_) | AssistantContent::RedactedThinking(_) => {}
            AssistantContent::ToolCall(call) => calls.push(json!({
                "id": tool_call_id(&call.id, compat),
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": Value::Object(call.arguments.clone()).to_string(),
                },
            })),
        }
    }
    let mut text = texts.join("\n");
    if compat.requires_thinking_as_text && !thinking.is_empty() {
        let mut wrapped: Vec<String> = thinking.iter().map(|t| format!("<thinking>\n{t}\n</thinking>")).collect();
        if !text.is_empty() {
            wrapped.push(text);
        }
        text = wrapped.join("\n");
    }
    if text.trim().is_empty() && calls.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    let content = if !text.is_empty() {
        Value::String(text)
    } else if compat.requires_assistant_after_tool_result {
        json!("")
    } else {
        Value::Null
    };
    out.insert("content".into(), content);
    if let (false, Some(field)) = (compat.requires_thinking_as_text, reasoning_field)
        && !thinking.is_empty()
    {
        // OpenCode Go streams `reasoning` but wants it back as `reasoning_content`.
        let field = if model.provider == "opencode-go" && *field == "reasoning" { "reasoning_content" } else { *field };
        out.insert(field.into(), Value::String(thinking.join("\n")));
    }
    if compat.requires_reasoning_content && model.reasoning && !out.contains_key("reasoning_content") {
        out.insert("reasoning_content".into(), json!(""));
    }
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(out))
}
