//! Our conversation as an OpenAI Responses request body.
//!
//! Requests are stateless (`store: false`): the whole conversation goes in `input` every turn.
//! A thinking block of this model carries the reasoning item it came from, serialized with its
//! `encrypted_content`, as its signature; it is replayed as that item, so the model's reasoning
//! carries across turns without server-side state. Text blocks carry their output message's id
//! and `phase` (`commentary` / `final_answer`), which go back on the replayed message item, as
//! OpenAI asks for from gpt-5.3-codex on.
//!
//! Thinking `off` on a reasoning model is said on the request, as the reference says it: the
//! GPT-5 family, whose lowest level is `minimal`, gets that level; other reasoning models get
//! `reasoning.effort: "none"`.

use serde_json::{Map, Value, json};

use crate::model::{Model, ThinkingLevel};
use crate::providers::{
    IMAGE_ONLY_RESULT, TOOL_RESULT_IMAGES, data_url, object, requested_thinking, tool_result_images,
};
use crate::stream::{StreamOptions, ToolChoice};
use crate::transform::{by_ref, sanitize_tool_call_id, transform_messages};
use crate::types::{AssistantContent, AssistantMessage, Context, Message, TextContent, ToolSpec, UserContent};

/// The longest id an input item may have.
const MAX_ID: usize = 64;

pub(crate) fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let messages = transform_messages(&context.messages, model);
    let mut input = Vec::with_capacity(messages.len() + 2);
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let role = if model.reasoning { "developer" } else { "system" };
        input.push(json!({"role": role, "content": system}));
    }
    convert_messages(model, &by_ref(&messages), &mut input);

    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("input".into(), Value::Array(input));
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    if let Some(session) = options.session_id.as_deref().filter(|s| !s.is_empty()) {
        body.insert("prompt_cache_key".into(), json!(session));
    }
    body.insert("max_output_tokens".into(), json!(options.max_tokens_for(model)));
    // models.json's sampling defaults and the level's overrides (pi 1.6); a request's own
    // temperature wins.
    if let Some(sampling) = &model.sampling {
        body.extend(sampling.for_level(options.thinking));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !context.tools.is_empty() {
        body.insert("tools".into(), context.tools.iter().map(convert_tool).collect());
    }
    if let ToolChoice::Tool(name) = &options.tool_choice {
        body.insert("tool_choice".into(), json!({"type": "function", "name": name}));
    }
    match reasoning(model, options) {
        Reasoning::Level(level) => {
            let effort = model.provider_level(level).unwrap_or(level.as_str());
            body.insert("reasoning".into(), json!({"effort": effort, "summary": "auto"}));
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
        Reasoning::Off => {
            body.insert("reasoning".into(), json!({"effort": "none"}));
        }
        Reasoning::Unsaid => {}
    }
    Value::Object(body)
}

/// The input items `message`, a reply of `model`, becomes in the next request: what a server
/// that keeps a response's output already holds. Results of its tool calls are not among them.
pub(crate) fn reply_items(model: &Model, message: &AssistantMessage) -> Vec<Value> {
    let messages = [Message::Assistant(message.clone())];
    let transformed = transform_messages(&messages, model);
    let mut items = Vec::new();
    convert_messages(model, &by_ref(&transformed), &mut items);
    items.retain(|item| item.get("type").and_then(Value::as_str) != Some("function_call_output"));
    items
}

/// What the request says about reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reasoning {
    /// Reason at this effort, with a summary and the encrypted item to replay.
    Level(ThinkingLevel),
    /// `effort: "none"`.
    Off,
    /// Nothing: not a reasoning model, or a provider that takes no `off`.
    Unsaid,
}

fn reasoning(model: &Model, options: &StreamOptions) -> Reasoning {
    if !model.reasoning {
        return Reasoning::Unsaid;
    }
    let level = match requested_thinking(model, options) {
        Some(level) => level,
        // The GPT-5 family cannot turn reasoning off; its lowest level stands in for `off`.
        None if model.id.starts_with("gpt-5") => ThinkingLevel::Minimal,
        None if model.provider == "github-copilot" => return Reasoning::Unsaid,
        None => return Reasoning::Off,
    };
    Reasoning::Level(if level == ThinkingLevel::Xhigh && !model.supports_xhigh() { ThinkingLevel::High } else { level })
}

fn convert_tool(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "strict": false,
    })
}

/// The `call_id` of a tool call: ours is `call_id|item_id` when it came from this API.
fn call_id(id: &str) -> String {
    sanitize_tool_call_id(id.split('|').next().unwrap_or(id), MAX_ID)
}

fn convert_messages(model: &Model, messages: &[&Message], input: &mut Vec<Value>) {
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User(u) => {
                let content = user_content(&u.content.blocks());
                if !content.is_empty() {
                    input.push(object([("role", "user".into()), ("content", Value::Array(content))]));
                }
                i += 1;
            }
            Message::Assistant(a) => {
                assistant_items(model, a, input);
                i += 1;
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                while let Some(Message::ToolResult(r)) = messages.get(i) {
                    let text = r.text();
                    let has_images = tool_result_images(r).next().is_some();
                    let output = if text.is_empty() && has_images { IMAGE_ONLY_RESULT.to_owned() } else { text };
                    input.push(object([
                        ("type", "function_call_output".into()),
                        ("call_id", call_id(&r.tool_call_id).into()),
                        ("output", output.into()),
                    ]));
                    images.extend(tool_result_images(r).map(image_part));
                    i += 1;
                }
                if !images.is_empty() {
                    images.insert(0, json!({"type": "input_text", "text": TOOL_RESULT_IMAGES}));
                    input.push(object([("role", "user".into()), ("content", Value::Array(images))]));
                }
            }
        }
    }
}

fn image_part(image: &crate::types::ImageContent) -> Value {
    json!({"type": "input_image", "detail": "auto", "image_url": data_url(image)})
}

fn user_content(blocks: &[UserContent]) -> Vec<Value> {
    blocks
        .iter()
        .filter_map(|b| match b {
            UserContent::Text(t) if t.text.trim().is_empty() => None,
            UserContent::Text(t) => Some(json!({"type": "input_text", "text": t.text})),
            UserContent::Image(image) => Some(image_part(image)),
        })
        .collect()
}

fn assistant_items(model: &Model, message: &AssistantMessage, input: &mut Vec<Value>) {
    let same_model = message.provider == model.provider && message.api == model.api && message.model == model.id;
    // A function call's item id is tied to the reasoning item before it; without that item
    // (another model, or reasoning lost to an interrupted stream) the id must not be sent.
    let mut reasoning_missing = !same_model;
    for block in &message.content {
        match block {
            AssistantContent::Thinking(t) => match t.thinking_signature.as_deref().and_then(reasoning_item) {
                Some(item) => input.push(item),
                None => reasoning_missing = true,
            },
            AssistantContent::RedactedThinking(_) => reasoning_missing = true,
            AssistantContent::Text(t) => {
                if t.text.trim().is_empty() {
                    continue;
                }
                // A message of this API goes back as the output item it was, with its id and
                // phase; any other text as a plain assistant message.
                match message_signature(t) {
                    Some((id, phase)) => {
                        let mut item = Map::new();
                        item.insert("type".into(), json!("message"));
                        item.insert("role".into(), json!("assistant"));
                        item.insert(
                            "content".into(),
                            json!([{"type": "output_text", "text": t.text, "annotations": []}]),
                        );
                        item.insert("status".into(), json!("completed"));
                        item.insert("id".into(), json!(id));
                        if let Some(phase) = phase {
                            item.insert("phase".into(), json!(phase));
                        }
                        input.push(Value::Object(item));
                    }
                    None => input.push(json!({"role": "assistant", "content": t.text})),
                }
            }
            AssistantContent::ToolCall(call) => {
                let mut item = Map::new();
                item.insert("type".into(), json!("function_call"));
                let item_id = call.id.split_once('|').map(|(_, item)| item);
                if let Some(item_id) = item_id.filter(|id| id.starts_with("fc") && !reasoning_missing) {
                    item.insert("id".into(), json!(sanitize_tool_call_id(item_id, MAX_ID)));
                }
                item.insert("call_id".into(), json!(call_id(&call.id)));
                item.insert("name".into(), json!(call.name));
                item.insert("arguments".into(), json!(Value::Object(call.arguments.clone()).to_string()));
                input.push(Value::Object(item));
            }
        }
    }
}

/// The reasoning item a thinking block's signature holds, if it holds one.
fn reasoning_item(signature: &str) -> Option<Value> {
    let item: Value = serde_json::from_str(signature).ok()?;
    (item.get("type")? == "reasoning").then_some(item)
}

/// The output message id and phase kept in `textSignature`: the versioned
/// `{"v":1,"id":…,"phase":…}` (a phase other than `commentary` / `final_answer` is dropped), or
/// a plain id as older sessions hold it. An id too long for the API is replaced by a hash of it.
fn message_signature(text: &TextContent) -> Option<(String, Option<String>)> {
    let signature = text.text_signature.as_deref()?;
    let versioned = signature
        .starts_with('{')
        .then(|| serde_json::from_str::<Value>(signature).ok())
        .flatten()
        .filter(|v| v.get("v") == Some(&json!(1)))
        .and_then(|v| {
            let id = v.get("id")?.as_str()?.to_owned();
            let phase = v.get("phase").and_then(Value::as_str).filter(|p| matches!(*p, "commentary" | "final_answer"));
            Some((id, phase.map(str::to_owned)))
        });
    let (id, phase) = versioned.unwrap_or_else(|| (signature.to_owned(), None));
    match id.len() {
        0 => None,
        n if n <= MAX_ID => Some((id, phase)),
        _ => Some((format!("msg_{:016x}", fnv1a(&id)), phase)),
    }
}

fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
