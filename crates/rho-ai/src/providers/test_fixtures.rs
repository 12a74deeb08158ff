//! A conversation that exercises every part of every request format: a system prompt, a tool
//! with a JSON schema, an image, a thinking block with its signature from the model being asked,
//! a tool call and its result, and a thinking block from another model.

use serde_json::json;

use crate::model::{InputKind, Model, ModelCost};
use crate::types::{
    AssistantContent, AssistantMessage, Context, ImageContent, Message, StopReason, TextContent, ThinkingContent,
    ToolCall, ToolResultMessage, ToolSpec, UserContent, UserMessage, UserMessageContent,
};

pub(crate) fn model(api: &str, provider: &str, id: &str, base_url: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        base_url: base_url.into(),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, tiers: Vec::new() },
        context_window: 200_000,
        max_tokens: 64_000,
        headers: Default::default(),
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
        input_limits: None,
        sampling: None,
    }
}

pub(crate) fn read_tool() -> ToolSpec {
    ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to read"},
                "limit": {"type": ["integer", "null"]}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    }
}

pub(crate) fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserMessageContent::Blocks(vec![UserContent::text(text)]),
        synthetic: None,
        attribution: None,
        timestamp: 1,
    })
}

pub(crate) fn user_with_image(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserMessageContent::Blocks(vec![
            UserContent::text(text),
            UserContent::Image(ImageContent { data: "aGVsbG8=".into(), mime_type: "image/png".into() }),
        ]),
        synthetic: None,
        attribution: None,
        timestamp: 1,
    })
}

pub(crate) fn assistant(model: &Model, content: Vec<AssistantContent>) -> Message {
    let mut a = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    a.content = content;
    a.stop_reason = StopReason::ToolUse;
    Message::Assistant(a)
}

pub(crate) fn thinking(text: &str, signature: Option<&str>) -> AssistantContent {
    AssistantContent::Thinking(ThinkingContent {
        thinking: text.into(),
        thinking_signature: signature.map(Into::into),
        redacted: None,
    })
}

pub(crate) fn text(text: &str) -> AssistantContent {
    AssistantContent::Text(TextContent::new(text))
}

pub(crate) fn call(id: &str, name: &str, arguments: serde_json::Value) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.as_object().cloned().unwrap_or_default(),
        thought_signature: None,
        intent: None,
    })
}

pub(crate) fn result(id: &str, name: &str, content: Vec<UserContent>, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content,
        details: None,
        is_error,
        is_warning: None,
        timestamp: 1,
    })
}

/// The conversation: user (text + image) → assistant of `model` (thinking with `signature`,
/// text, two tool calls) → two tool results (one an error, one with an image) → assistant of
/// another model (thinking, text) → user.
pub(crate) fn conversation(model: &Model, signature: &str, call_ids: [&str; 2]) -> Context {
    let other = self::model("other-api", "other", "other-model", "http://other");
    Context {
        system_prompt: Some("You are a test.".into()),
        messages: vec![
            user_with_image("What is in a.txt?"),
            assistant(
                model,
                vec![
                    thinking("Need to read it.", Some(signature)),
                    text("Reading."),
                    call(call_ids[0], "read", json!({"path": "a.txt"})),
                    call(call_ids[1], "read", json!({"path": "b.txt"})),
                ],
            ),
            result(call_ids[0], "read", vec![UserContent::text("hello")], false),
            result(
                call_ids[1],
                "read",
                vec![UserContent::Image(ImageContent { data: "aW1n".into(), mime_type: "image/jpeg".into() })],
                true,
            ),
            assistant(&other, vec![thinking("Other thoughts.", Some("other-sig")), text("It says hello.")]),
            user("Thanks"),
        ],
        tools: vec![read_tool()],
    }
}

/// Runs `body`, a recorded SSE reply, through `model`'s streaming half and collects the events.
pub(crate) async fn decode(model: &Model, body: &str) -> Vec<crate::AssistantMessageEvent> {
    let bytes = bytes::Bytes::from(body.to_owned());
    let source = futures::stream::iter(vec![Ok::<_, reqwest::Error>(bytes)]);
    let sse = crate::sse::SseStream::from_bytes(source, std::time::Duration::from_secs(5));
    let mut stream = crate::stream::stream_sse(model, sse, crate::StreamOptions::default());
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    events
}

/// The final message of a decoded stream (the `done` or `error` message).
pub(crate) fn final_message(events: &[crate::AssistantMessageEvent]) -> &AssistantMessage {
    match events.last() {
        Some(crate::AssistantMessageEvent::Done { message, .. }) => message,
        Some(crate::AssistantMessageEvent::Error { error, .. }) => error,
        other => panic!("stream did not end with done or error: {other:?}"),
    }
}

/// The classified failure of a stream that ended in `error`.
pub(crate) fn failure(events: &[crate::AssistantMessageEvent]) -> crate::ProviderError {
    match events.last() {
        Some(crate::AssistantMessageEvent::Error { failure: Some(f), .. }) => (**f).clone(),
        other => panic!("stream did not fail: {other:?}"),
    }
}

/// The event types in order, for comparing whole streams.
pub(crate) fn types(events: &[crate::AssistantMessageEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.type_name()).collect()
}

/// SSE text for `events`, each `(event name, data)`; a `None` name sends `data:` only.
pub(crate) fn sse_body(events: &[(Option<&str>, serde_json::Value)]) -> String {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            out.push_str("event: ");
            out.push_str(name);
            out.push('\n');
        }
        out.push_str("data: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    }
    out
}
